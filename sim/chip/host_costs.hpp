// What the framework host pays per op stage (the host timing formula): the
// stage names, their keys in a chip file, and the cost of one stage of one
// op from chip.host. Plain C++.
#pragma once
#include <string>
#include <vector>

#include "chip/chip_params.hpp"

namespace npusim::host {

// The host-side stages of one op in kernel-by-kernel execution.
enum class Stage { frontend, prepare, infer, resize, alloc, launch, free };
const char* to_string(Stage s);

// Keys of one op's cost entry: "frontend_us", ..., "prepare_us", "prepare_dynamic_us", ... .
const std::vector<std::string>& cost_keys();

// Cost of one stage of an op of `op_type`, in µs: the op_costs entry if it
// has the key, else the chip-wide chip.host.<stage>[_dynamic]_us.
double stage_cost_us(const HostParams& p, const std::string& op_type, Stage s, bool dynamic);

}  // namespace npusim::host
