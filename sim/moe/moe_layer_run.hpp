// `npusim run` for a kind "moe" workload with layer = true: the whole MoE
// layer on a System of whole-die ranks (hw/system). Every rank's die runs
// the task stream of its expert GEMMs (moe/expert_stream.hpp) on its Cube
// cores; one kernel instance per AIV core of every rank runs the Dispatch
// and the Combine (moe/combine.hpp); they meet through flags in GM.
#pragma once

#include "moe/moe_params.hpp"
#include "moe/moe_run.hpp"

namespace npusim {

class RunConfig;

// Returns the exit code; errors travel as exceptions (InputError, DeadlockError).
int run_moe_layer(const RunConfig& cfg, const MoeParams& p, const MoeRunOptions& opt);

}  // namespace npusim
