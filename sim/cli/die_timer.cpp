#include "cli/die_timer.hpp"

#include "compiler/plan_search.hpp"
#include "hw/die_probe.hpp"
#include "tasks/stream_checks.hpp"

namespace npusim::cli {

void use_die_timer(const ChipParams& chip) {
    compiler::set_die_timer([probe = DieProbe(chip)](const TaskStream& s) mutable {
        check_stream_fits_chip(s, probe.chip());
        return static_cast<double>(probe.end_ps(s)) / probe.ps_per_cycle();
    });
}

}  // namespace npusim::cli
