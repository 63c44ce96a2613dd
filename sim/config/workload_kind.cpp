#include "config/workload_kind.hpp"

#include <algorithm>
#include <cctype>
#include <utility>

#include <nlohmann/json.hpp>

#include "common/did_you_mean.hpp"
#include "common/errors.hpp"
#include "common/json_file.hpp"
#include "config/schema.hpp"

namespace npusim {
namespace {

// The table: a new kind adds a row here, its keys in config/schema.cpp and
// its runner where `npusim run` dispatches.
const std::vector<std::pair<WorkloadKind, std::string>>& kinds() {
    static const std::vector<std::pair<WorkloadKind, std::string>> table = {
        {WorkloadKind::tasks, "tasks"},
        {WorkloadKind::graph, "graph"},
        {WorkloadKind::collective, "collective"},
        {WorkloadKind::llm, "llm"},
    };
    return table;
}

bool ends_with_ci(const std::string& s, const std::string& suffix) {
    if (s.size() < suffix.size()) return false;
    return std::equal(suffix.rbegin(), suffix.rend(), s.rbegin(),
                      [](char suffix_char, char c) { return std::tolower(static_cast<unsigned char>(c)) == suffix_char; });
}

}  // namespace

const std::vector<std::string>& workload_kind_names() {
    static const std::vector<std::string> names = [] {
        std::vector<std::string> n;
        for (const auto& k : kinds()) n.push_back(k.second);
        return n;
    }();
    return names;
}

std::string workload_kind_list() {
    std::string s;
    for (const auto& k : workload_kind_names()) s += (s.empty() ? "" : ", ") + k;
    return s;
}

const char* to_string(WorkloadKind kind) {
    for (const auto& k : kinds())
        if (k.first == kind) return k.second.c_str();
    return "";
}

WorkloadKind parse_workload_kind(const nlohmann::json& value, const std::string& label) {
    if (!value.is_string())
        throw InputError(label + ": workload.kind: expected a string, got " +
                         (value.is_number()    ? "number " + (value.is_number_float() ? format_number(value.get<double>()) : value.dump())
                          : value.is_boolean() ? "boolean " + value.dump()
                                               : json_kind(value)));
    const std::string name = value.get<std::string>();
    for (const auto& k : kinds())
        if (k.second == name) return k.first;
    if (name == "moe")
        throw InputError(label + ": workload kind 'moe' is now a graph: the MoE Dispatch and the MoE layer are graphs with "
                                 "Dispatch, GroupedMatMul and Combine nodes (models/moe_dispatch.json, models/moe_layer.json; "
                                 "docs/graph-format.md, \"Graphs that span ranks\"); workload.variant, workload.flag_in_block "
                                 "and workload.routing.* set them");
    throw InputError(label + ": workload kind '" + name + "' is not supported yet (supported: " + workload_kind_list() +
                     ")" + did_you_mean(name, workload_kind_names()));
}

WorkloadKind workload_kind_of_file_name(const std::string& file) {
    if (ends_with_ci(file, ".jsonl")) return WorkloadKind::tasks;
    if (ends_with_ci(file, ".json")) return WorkloadKind::none;
    if (ends_with_ci(file, ".onnx")) return WorkloadKind::graph;  // imported, then compiled (docs/onnx.md)
    throw InputError(file + ": unknown workload file type (expected a .json workload, a .jsonl task stream or an .onnx model)");
}

}  // namespace npusim
