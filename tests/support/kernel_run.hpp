// A kernel written against the AIV kernel API (hw/aiv_core.hpp), run in
// process as a kernel program on every vector core of every rank of a
// System of `chip`: one program task per core, block i on core i, the way a
// graph's Dispatch runs; `extra` tasks (each on a stream of its own) run
// beside it. One simulation per process (SystemC cannot restart).
#pragma once
#include <functional>
#include <memory>
#include <vector>

#include "hw/program.hpp"
#include "stats/stats.hpp"
#include "system/system.hpp"

namespace npusim::test {

class KernelRun {
public:
    using Kernel = std::function<void(AivCore&)>;

    KernelRun(const ChipParams& chip, Kernel kernel, std::vector<Task> extra = {}) : chip_(chip) {
        body() = std::move(kernel);
        register_program("test.kernel", [](const std::string&, const ChipParams&) -> std::shared_ptr<const Program> {
            return std::make_shared<Body>();
        });
        auto ts = std::make_shared<TaskStream>();
        ts->file = "<test kernel>";
        ProgramDecl d;
        d.id = "kernel";
        d.name = "test.kernel";
        d.args = "{}";
        d.blocks = static_cast<std::uint32_t>(chip.vector.count);
        ts->programs.push_back(d);
        for (int c = 0; c < chip.vector.count; ++c) {
            Task t;
            t.id = "kernel#" + std::to_string(c);
            t.kernel = npusim::Kernel::program;
            t.core_type = CoreType::vector;
            t.core = c;
            t.stream = static_cast<std::uint32_t>(ts->streams.size());
            ts->streams.push_back("v" + std::to_string(c));
            t.params.block = static_cast<std::uint32_t>(c);
            ts->tasks.push_back(std::move(t));
        }
        for (Task& t : extra) {
            t.stream = static_cast<std::uint32_t>(ts->streams.size());
            ts->streams.push_back("x" + std::to_string(t.stream));
            ts->tasks.push_back(std::move(t));
        }
        const std::vector<std::shared_ptr<const TaskStream>> per_rank(static_cast<std::size_t>(chip.interconnect.ranks), ts);
        system_ = std::make_unique<System>("system", chip_, per_rank, nullptr, std::vector<int>{});
    }

    void run() { system_->run(); }
    std::uint64_t end_ps() const { return system_->end_ps(); }
    System& system() { return *system_; }
    GlobalMemory& memory() { return system_->memory(); }
    Stats stats() const {
        Stats s;
        system_->collect(s);
        return s;
    }

private:
    struct Body : Program {
        void run(AivCore& k) const override { body()(k); }
    };
    static Kernel& body() {
        static Kernel k;
        return k;
    }
    const ChipParams& chip_;
    std::unique_ptr<System> system_;
};

}  // namespace npusim::test
