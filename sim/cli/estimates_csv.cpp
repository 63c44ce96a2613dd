#include "cli/estimates_csv.hpp"

#include <chrono>
#include <map>
#include <vector>

#include <fmt/format.h>

#include "common/csv.hpp"
#include "common/output_file.hpp"
#include "hw/die_probe.hpp"
#include "tasks/sub_stream.hpp"

namespace npusim::cli {

namespace {

// Per task, the die model's time for `parts` (each a list of task indices)
// run alone: every task of a part gets its part's time, in cycles.
std::vector<double> alone_cycles(const TaskStream& s, const std::vector<std::vector<std::uint32_t>>& parts,
                                 DieProbe& probe, double ps_per_cycle) {
    std::vector<double> out(s.tasks.size(), 0.0);
    for (const auto& part : parts) {
        const double cycles = static_cast<double>(probe.end_ps(sub_stream(s, part))) / ps_per_cycle;
        for (const std::uint32_t i : part) out[i] = cycles;
    }
    return out;
}

}  // namespace

std::string write_estimates(const compiler::CompileResult& r, const ChipParams& chip, const std::string& file) {
    const TaskStream& s = r.stream;
    // Each task on its own, and each kernel (the tasks of one op) on its own.
    std::vector<std::vector<std::uint32_t>> tasks, kernels;
    std::map<NameIndex, std::size_t> kernel_of;
    for (std::uint32_t i = 0; i < s.tasks.size(); ++i) {
        tasks.push_back({i});
        const NameIndex op = s.tasks[i].op;
        if (op == 0) {
            kernels.push_back({i});
            continue;
        }
        const auto [it, fresh] = kernel_of.emplace(op, kernels.size());
        if (fresh) kernels.emplace_back();
        kernels[it->second].push_back(i);
    }
    DieProbe probe(chip);
    const auto t0 = std::chrono::steady_clock::now();
    const std::vector<double> task_alone = alone_cycles(s, tasks, probe, chip.ps_per_cycle());
    const std::vector<double> kernel_alone = alone_cycles(s, kernels, probe, chip.ps_per_cycle());
    const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();

    OutputFile est(file);
    est.stream() << "id,op,core_type,est_cycles,alone_cycles,kernel_alone_cycles\n";
    for (std::size_t i = 0; i < s.tasks.size(); ++i) {
        const Task& t = s.tasks[i];
        est.stream() << fmt::format("{},{},{},{:.1f},{:.1f},{:.1f}\n", csv_quoted(t.id), csv_quoted(s.name(t.op)),
                                    to_string(t.core_type), r.est_cycles[i], task_alone[i], kernel_alone[i]);
    }
    est.commit();
    return fmt::format("  estimates -> {} (the die model ran {} tasks and {} kernels alone in {:.2f} s)\n", file,
                       tasks.size(), kernels.size(), seconds);
}

}  // namespace npusim::cli
