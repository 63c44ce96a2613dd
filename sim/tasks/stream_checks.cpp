#include "tasks/stream_checks.hpp"

#include <fmt/format.h>

#include "common/errors.hpp"

namespace npusim {

namespace {

std::string kb_text(int kb) { return fmt::format("{} KB = {} B", kb, static_cast<std::uint64_t>(kb) * 1024); }

}  // namespace

void check_stream_fits_chip(const TaskStream& ts, const ChipParams& chip) {
    const std::uint64_t ub = static_cast<std::uint64_t>(chip.buffers.ub_kb) * 1024;
    const std::uint64_t l1 = static_cast<std::uint64_t>(chip.buffers.l1_kb) * 1024;
    const bool coupled = chip.layout == CoreLayout::coupled;
    for (const Task& t : ts.tasks) {
        auto fail = [&](const std::string& what) {
            throw InputError(fmt::format("{}:{}: task '{}': {}", ts.file, t.line, t.id, what));
        };
        const KernelParams& p = t.params;
        const int count = t.core_type == CoreType::cube     ? chip.cube.count
                          : t.core_type == CoreType::vector ? chip.vector.count
                                                            : chip.scalar.count;
        if (count == 0)
            fail(fmt::format("needs a {} core, but chip '{}' has cores.{}.count = 0", to_string(t.core_type), chip.name,
                             to_string(t.core_type)));
        if (t.core >= count)
            fail(fmt::format("core: pinned to {} core {}, but the chip has {} (0..{})", to_string(t.core_type), t.core,
                             count, count - 1));
        if (p.ub_bytes > ub)
            fail(fmt::format("resident footprint params.ub_bytes = {} B does not fit UB (chip.buffers.ub_kb = {})",
                             p.ub_bytes, kb_text(chip.buffers.ub_kb)));
        if (p.l1_bytes > l1)
            fail(fmt::format("resident footprint params.l1_bytes = {} B does not fit L1 (chip.buffers.l1_kb = {})",
                             p.l1_bytes, kb_text(chip.buffers.l1_kb)));
        switch (t.kernel) {
            case Kernel::matmul: {
                if (p.src == Space::ub)
                    fail("params.src: a matmul reads its operands from hbm, l2 or l1, not ub");
                if (p.dst == Space::ub && !coupled)
                    fail("params.dst: on a split chip (layout \"split\") FixPipe cannot write UB; use l1, l2 or hbm");
                const std::uint64_t operands = (p.m * p.k + p.k * p.n) * static_cast<std::uint64_t>(dtype_bytes(p.dtype));
                if (p.src == Space::l1 && operands > l1)
                    fail(fmt::format("operands resident in L1 need {} B (m·k + k·n of {}) but L1 holds {}", operands,
                                     to_string(p.dtype), kb_text(chip.buffers.l1_kb)));
                break;
            }
            case Kernel::vector:
            case Kernel::copy:
                if ((p.src == Space::l1 || p.dst == Space::l1) && !coupled)
                    fail("params.src/dst: on a split chip (layout \"split\") a vector core cannot reach L1");
                if (p.src == Space::ub && p.bytes > ub)
                    fail(fmt::format("input resident in UB is {} B but UB holds {}", p.bytes, kb_text(chip.buffers.ub_kb)));
                if (p.dst == Space::ub && p.out_bytes > ub)
                    fail(fmt::format("output kept in UB is {} B but UB holds {}", p.out_bytes, kb_text(chip.buffers.ub_kb)));
                break;
            case Kernel::scalar:
            case Kernel::program: break;
        }
    }
    if (ts.cross_rank) check_cross_rank(ts, chip);
    for (const RowTable& d : ts.row_tables)
        if (d.per_rank.size() != 1 && d.per_rank.size() != static_cast<std::size_t>(chip.interconnect.ranks))
            throw InputError(fmt::format("{}:{}: rows_table '{}': {} lists of rows, but chip '{}' has {} rank(s): give one "
                                         "list per rank, or one for all",
                                         ts.file, d.line, d.id, d.per_rank.size(), chip.name, chip.interconnect.ranks));
}

void check_cross_rank(const TaskStream& ts, const ChipParams& chip) {
    const int ranks = chip.interconnect.ranks;
    const std::uint64_t block = static_cast<std::uint64_t>(chip.interconnect.datablock_bytes);
    // Which rank signals each event, to refuse a wait across ranks.
    std::vector<std::int32_t> signaller(ts.events.size(), -1);
    std::vector<std::uint32_t> signaller_task(ts.events.size(), 0);
    for (std::uint32_t i = 0; i < ts.tasks.size(); ++i) {
        const Task& t = ts.tasks[i];
        auto fail = [&](const std::string& what) {
            throw InputError(fmt::format("{}:{}: task '{}': {}", ts.file, t.line, t.id, what));
        };
        if (ranks < 2) {
            const char* key = t.rank != 0 ? "rank" : t.remote.dst_rank >= 0 ? "params.dst_rank"
                              : !t.wait_memory.empty() ? "wait_memory" : nullptr;
            if (key)
                fail(fmt::format("{}: chip '{}' is a single die (chip.interconnect.ranks = {}); cross-rank tasks need "
                                 "a chip with an interconnect, e.g. configs/chips/a3-supernode.json",
                                 key, chip.name, ranks));
            continue;
        }
        if (t.rank >= ranks)
            fail(fmt::format("rank: {} is out of range: chip '{}' has {} ranks (0..{})", t.rank, chip.name, ranks, ranks - 1));
        const RemoteWrite& w = t.remote;
        if (w.dst_rank >= ranks)
            fail(fmt::format("params.dst_rank: {} is out of range: chip '{}' has {} ranks (0..{})", w.dst_rank, chip.name,
                             ranks, ranks - 1));
        if (w.dst_rank >= 0) {
            if (!is_global(t.params.dst))
                fail(fmt::format("params.dst: a copy to another rank writes its GM, so dst must be hbm or l2, not {}",
                                 to_string(t.params.dst)));
            if (w.addr % block != 0)
                fail(fmt::format("params.dst_addr: {} is not aligned to a {} B DataBlock (chip.interconnect.datablock_bytes)",
                                 w.addr, block));
        }
        for (std::size_t k = 0; k < t.wait_memory.size(); ++k)
            if (t.wait_memory[k].addr % block != 0)
                fail(fmt::format("wait_memory{}.addr: {} is not aligned to a {} B DataBlock (chip.interconnect.datablock_bytes)",
                                 t.wait_memory.size() > 1 ? fmt::format("[{}]", k) : std::string(), t.wait_memory[k].addr,
                                 block));
        for (EventIndex e : t.signal) {
            if (signaller[e] >= 0 && signaller[e] != t.rank)
                fail(fmt::format("signals event '{}' on rank {}, but task '{}' signals it on rank {}: events are per "
                                 "rank; sync across ranks goes through memory (a copy with a flag and wait_memory)",
                                 ts.events[e].id, t.rank, ts.tasks[signaller_task[e]].id, signaller[e]));
            signaller[e] = t.rank;
            signaller_task[e] = i;
        }
    }
    if (ranks < 2) return;
    for (const Task& t : ts.tasks)
        for (EventIndex e : t.wait)
            if (signaller[e] >= 0 && signaller[e] != t.rank)
                throw InputError(fmt::format(
                    "{}:{}: task '{}': waits on rank {} for event '{}', which task '{}' signals on rank {}: events are per "
                    "rank; sync across ranks goes through memory (a copy with a flag and wait_memory)",
                    ts.file, t.line, t.id, t.rank, ts.events[e].id, ts.tasks[signaller_task[e]].id, signaller[e]));
}

}  // namespace npusim
