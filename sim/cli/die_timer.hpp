// The die model as the compiler's timer of whole plans
// (compiler::set_die_timer): each candidate stream runs on a die built
// without SystemC in this process (hw/die_probe), the same modules and
// formulas as `npusim run`. The searches use it with
// workload.passes.plan_on_die.
#pragma once
#include "chip/chip_params.hpp"

namespace npusim::cli {

// Registers the timer for `chip`, before a graph on it is compiled.
void use_die_timer(const ChipParams& chip);

}  // namespace npusim::cli
