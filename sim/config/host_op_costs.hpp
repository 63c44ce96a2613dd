// The per-op-type host cost table of a chip file (chip.host.op_costs): its
// built-in default and its validation.
#pragma once
#include <map>
#include <string>
#include <vector>

#include <nlohmann/json_fwd.hpp>

namespace npusim::host {

// Op types an entry of chip.host.op_costs may name (graph ops + FormatConvert).
const std::vector<std::string>& cost_op_types();

// The built-in per-op-type table: the schema default of chip.host.op_costs.
const nlohmann::json& default_op_costs();
// Validates an op_costs object (InputError naming the key) and merges it
// over the built-in table, per op type and per key.
std::map<std::string, std::map<std::string, double>> resolve_op_costs(const nlohmann::json& v);

}  // namespace npusim::host
