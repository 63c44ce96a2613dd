#include "cli/die_timer.hpp"

#include "compiler/plan_search.hpp"
#include "hw/die_probe.hpp"

namespace npusim::cli {

void use_die_timer() { compiler::set_die_timer(&DieProbe::time); }

}  // namespace npusim::cli
