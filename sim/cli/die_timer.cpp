#include "cli/die_timer.hpp"

#include "compiler/plan_search.hpp"
#include "hw/die_probe.hpp"

namespace npusim::cli {

void use_die_timer() {
    compiler::set_die_timer([](const TaskStream& s, const ChipParams& chip) { return DieProbe(chip).cycles(s); });
}

}  // namespace npusim::cli
