#include "cli/die_timer.hpp"

#include <sstream>
#include <string>

#include "compiler/plan_search.hpp"
#include "hw/die_probe.hpp"
#include "tasks/stream_checks.hpp"
#include "tasks/stream_reader.hpp"

namespace npusim::cli {

void use_die_timer(const ChipParams& chip) {
    // Each candidate is read back from its text, as `compile --emit-tasks`
    // writes it and `run` reads it, so it runs as the emitted stream would.
    compiler::set_die_timer([probe = DieProbe(chip)](const std::string& text) mutable {
        std::istringstream in(text);
        const TaskStream s = parse_task_stream(in, "candidate plan");
        check_stream_fits_chip(s, probe.chip());
        return static_cast<double>(probe.end_ps(s)) / probe.ps_per_cycle();
    });
}

}  // namespace npusim::cli
