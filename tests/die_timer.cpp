// The test binary's compiles time their plan searches' candidates on the
// die model, as `npusim run` and `npusim compile` do (cli::use_die_timer):
// a library compile() in a test gives the plan the command line gives.
#include "compiler/plan_search.hpp"
#include "hw/die_probe.hpp"

namespace {
const bool registered = [] {
    npusim::compiler::set_die_timer(&npusim::DieProbe::time);
    return true;
}();
}  // namespace
