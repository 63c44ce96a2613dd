// The MoE kernels as kernel programs (hw/program): "moe.dispatch" (args: a
// MoeOp) and "moe.combine" (args: {"combine": its MoeOp, "dispatch": the
// MoeOp of the Dispatch whose tokens it returns}), each built once from its
// arguments and run by every block on every rank.
#pragma once
#include <string>

#include "collective/moe_op.hpp"

namespace npusim {

void register_moe_programs();

}  // namespace npusim
