// The die model as the compiler's timer of whole plans
// (compiler::set_die_timer): each candidate stream runs on a die built
// without SystemC in this process (hw/die_probe), the same modules and
// formulas as `npusim run`. Without it the plan searches do not run.
#pragma once

namespace npusim::cli {

// Registers the timer, before a graph is compiled.
void use_die_timer();

}  // namespace npusim::cli
