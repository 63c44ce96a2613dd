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
            case Kernel::scalar: break;
        }
    }
}

}  // namespace npusim
