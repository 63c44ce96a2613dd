// The compiler's whole-plan searches timed by the die model itself
// (compiler::set_die_timer): each candidate stream runs on a die built
// without SystemC in this process (hw/die_probe), the same modules and
// formulas as `npusim run`. Experimental: NPUSIM_PLAN_ON_DIE=1 turns it on.
#pragma once
#include "chip/chip_params.hpp"

namespace npusim::cli {

// Registers the timer for `chip` when NPUSIM_PLAN_ON_DIE=1; otherwise
// leaves the compiler's estimates.
void use_die_timer_if_asked(const ChipParams& chip);

}  // namespace npusim::cli
