// The compiler's whole-plan searches timed by the die model itself
// (compiler::set_die_timer): each candidate stream runs in a child
// `npusim run` on the chip being compiled for (SystemC cannot restart in
// one process). Experimental: NPUSIM_PLAN_ON_DIE=1 turns it on.
#pragma once
#include <string>

#include <nlohmann/json_fwd.hpp>

namespace npusim::cli {

// Registers the timer for `chip` (a resolved chip document) when
// NPUSIM_PLAN_ON_DIE=1; otherwise leaves the compiler's estimates.
void use_die_timer_if_asked(const nlohmann::json& chip);

}  // namespace npusim::cli
