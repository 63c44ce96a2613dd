#include "hw/post_horizon.hpp"

#include <algorithm>
#include <cmath>

#include "chip/timing.hpp"
#include "chip/units.hpp"
#include "common/arith.hpp"

namespace npusim {

namespace {
std::uint64_t floor_ps(double cycles, const ChipParams& chip) {
    const double ps = std::floor(cycles * chip.ps_per_cycle());
    return ps > 1 ? static_cast<std::uint64_t>(ps) - 1 : 0;  // below any rounding of the model's
}
}  // namespace

std::uint64_t task_floor_ps(const Task& t, const ChipParams& chip) {
    if (t.core_type == CoreType::scalar) return floor_ps(static_cast<double>(t.params.cycles), chip);
    double cycles = timing::task_start_cycles(t.core_type, chip);
    const KernelParams& p = t.params;
    // What the core's port must move, at the faster of its two rates
    // (HBM, L2): a MatMul's B operand; a vector task's input and, through
    // the same port, its output, unless a row table known only at run time
    // leaves some of them out.
    const auto port = [&](double bytes, double gm_rate, bool write) {
        return bytes / std::max(gm_rate, timing::l2_port_bytes_per_cycle(chip, t.core_type, write, 1));
    };
    if (t.core_type == CoreType::cube && t.kernel == Kernel::matmul) {
        const double b = is_global(p.src)
                             ? port(static_cast<double>(p.k * p.n * static_cast<std::uint64_t>(dtype_bytes(p.dtype))),
                                    chip.cube.gm_bytes_per_cycle, false)
                             : 0.0;
        // The M pipe's fractals, beside the loads (rows known only at run
        // time may be fewer).
        const double m = p.rows_table ? 0.0 : static_cast<double>(timing::mmad_cycles(chip, p.dtype, p.m, p.k, p.n));
        cycles += std::max(b, m);
    } else if (t.core_type == CoreType::vector && t.kernel != Kernel::program && !p.rows_table) {
        // A write with a destination rank may leave through the mesh, not
        // the port (the die's own rank is not known here: no store counted).
        const bool remote = t.remote.dst_rank >= 0;
        if (is_global(p.src)) cycles += port(static_cast<double>(p.bytes), chip.vector.gm_bytes_per_cycle, false);
        if (is_global(p.dst) && !remote)
            cycles += port(static_cast<double>(p.out_bytes), chip.vector.gm_bytes_per_cycle, true);
    }
    return floor_ps(cycles, chip);
}

PostHorizon::PostHorizon(const TaskStream& ts, const ChipParams& chip) {
    const std::size_t n = ts.tasks.size();
    flags.assign(n, 0);
    floor_ns.assign(n, 0);
    std::vector<std::uint32_t> first_waiter(ts.events.size(), UINT32_MAX), last_signaller(ts.events.size(), UINT32_MAX);
    for (std::uint32_t i = 0; i < n; ++i) {
        const Task& t = ts.tasks[i];
        if (t.remote.dst_rank >= 0 || t.kernel == Kernel::program) flags[i] |= posts;
        if (t.params.rows_table) flags[i] |= rows_dependent;
        floor_ns[i] = static_cast<std::uint32_t>(std::min<std::uint64_t>(task_floor_ps(t, chip) / 1000, UINT32_MAX));
        for (EventIndex e : t.wait) first_waiter[e] = std::min(first_waiter[e], i);
        for (EventIndex e : t.signal)
            last_signaller[e] = last_signaller[e] == UINT32_MAX ? i : std::max(last_signaller[e], i);
    }
    unordered.assign(ts.events.size(), 0);
    for (std::size_t e = 0; e < ts.events.size(); ++e)
        unordered[e] =
            last_signaller[e] == UINT32_MAX || (first_waiter[e] != UINT32_MAX && last_signaller[e] > first_waiter[e]);
    for (int type = 0; type < 2; ++type)
        start_ns[type] = static_cast<std::uint32_t>(
            floor_ps(timing::task_start_cycles(type == 0 ? CoreType::cube : CoreType::vector, chip), chip) / 1000);
}

void HorizonScratch::begin(std::size_t events, std::size_t streams) {
    stream_start.resize(streams);
    cursor.resize(streams);
    if (stamp.size() < events) {
        stamp.resize(events, 0);
        min_end.resize(events);
        work[0].resize(events);
        work[1].resize(events);
        pinned[0].resize(events);
        pinned[1].resize(events);
        signallers.resize(events);
    }
    if (++now == 0) {  // wrapped: no stamp may look current
        std::fill(stamp.begin(), stamp.end(), 0);
        now = 1;
    }
    heads.clear();
}

void HorizonScratch::add(std::size_t e, std::uint64_t end, std::uint64_t w, int type, int core) {
    if (stamp[e] != now) {
        stamp[e] = now;
        min_end[e] = end;
        work[0][e] = work[1][e] = 0;
        pinned[0][e] = pinned[1][e] = 0;
        signallers[e] = 0;
    }
    min_end[e] = std::min(min_end[e], end);
    ++signallers[e];
    if (type < 0) return;
    work[type][e] += w;
    pinned[type][e] |= core >= 0 && core < 64 ? std::uint64_t{1} << core : ~std::uint64_t{0};
}

std::uint64_t HorizonScratch::spread_ps(std::size_t e, int type, double cores) const {
    const std::uint64_t mask = pinned[type][e];
    if (mask == 0) return 0;
    // Pinned tasks only: the busiest of their cores has at least the mean.
    const double n = mask == ~std::uint64_t{0} ? cores : static_cast<double>(popcount64(mask));
    return static_cast<std::uint64_t>(static_cast<double>(work[type][e]) / n);
}

}  // namespace npusim
