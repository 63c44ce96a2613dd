// One Dispatch or Combine node of a graph as its kernel program sees it: the
// arguments the compiler writes (compiler/comm_lowering) and the MoE
// programs read (sim/moe), a contract like the task stream's. Plain C++:
// its variant, the tokens' shape and types, the routing over its group of
// ranks, the flag value of this call and where its tensors are in GM.
#pragma once
#include <cstdint>
#include <string>

#include "collective/routing.hpp"

namespace npusim {

struct MoeOp {
    enum class Variant : std::uint8_t { baseline, optimized };
    Variant variant = Variant::optimized;
    bool flag_in_block = true;  // optimized Dispatch: Data-as-Flag (false: a separate flag block, unsafe)
    int batch = 1;              // tokens per rank
    int hidden = 1;             // elements per token row
    std::uint32_t in_elt = 1;   // bytes per element read (Dispatch: the tokens; Combine: the expert output rows)
    std::uint32_t out_elt = 1;  // bytes per element sent (Dispatch: after quantisation; Combine: as read)
    bool quantize = false;      // Dispatch: quantised to int8 on the way (a vector pass per token)
    int top_k = 1;
    int experts = 1;            // logical experts
    int group = 1;              // ranks of its group (consecutive, aligned to the group size)
    RoutingSpec routing;
    std::uint64_t epoch = 1;    // the flag value this call's blocks carry (one per call of a graph)
    // Rows per local expert in the received tensor (every rank the same: a
    // static buffer whose first rows per expert hold the tokens, as grouped
    // kernels with a runtime group list read it); 0: the rows packed densely.
    int capacity = 0;
    std::uint64_t in_addr = 0, out_addr = 0;  // the input and output tensors in each rank's GM

    int ranks() const { return group; }
    int experts_per_rank() const { return (experts + routing.redundant_experts) / group; }
    const char* variant_name() const { return variant == Variant::baseline ? "baseline" : "optimized"; }
    std::uint64_t in_row_bytes() const { return static_cast<std::uint64_t>(hidden) * in_elt; }
    std::uint64_t out_row_bytes() const { return static_cast<std::uint64_t>(hidden) * out_elt; }

    // As program arguments (a JSON object) and back; from_args throws
    // InputError naming the argument.
    std::string to_args() const;
    static MoeOp from_args(const std::string& args);
};

// The programs the MoE ops run as, and the Combine's arguments: its own
// MoeOp and that of the Dispatch whose tokens it returns.
constexpr const char* kDispatchProgram = "moe.dispatch";
constexpr const char* kCombineProgram = "moe.combine";
std::string combine_program_args(const MoeOp& combine, const MoeOp& dispatch);

}  // namespace npusim
