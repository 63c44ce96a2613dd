#include "config/workload_params.hpp"

#include <map>

#include <nlohmann/json.hpp>

#include "config/schema.hpp"

namespace npusim {

using json = nlohmann::json;

namespace {

const json* find_path(const json& section, const std::string& path) {
    const json* node = &section;
    const auto segs = split_key_path(path);
    for (std::size_t i = 1; i < segs.size(); ++i) {  // segs[0] is "workload"
        if (!node->is_object()) return nullptr;
        const auto it = node->find(segs[i]);
        if (it == node->end()) return nullptr;
        node = &*it;
    }
    return node;
}

}  // namespace

WorkloadParams read_workload_params(const json& section) {
    WorkloadParams w;
    if (!section.is_object() || !section.contains("kind")) return w;  // chip-only use (lint)
    const std::string kind = section.at("kind").get<std::string>();
    for (const auto& spec : config_keys()) {
        if (!spec.apply_workload || !key_applies(spec, kind) || spec.path.rfind("workload.", 0) != 0) continue;
        if (const json* v = find_path(section, spec.path)) spec.apply_workload(w, *v);
    }
    return w;
}

const WorkloadParams& default_workload_params(const std::string& kind) {
    static std::map<std::string, WorkloadParams> cache;
    auto it = cache.find(kind);
    if (it != cache.end()) return it->second;
    json section = {{"kind", kind}};
    for (const auto& spec : config_keys()) {
        if (spec.required || !key_applies(spec, kind) || spec.path.rfind("workload.", 0) != 0) continue;
        const auto segs = split_key_path(spec.path);
        json* node = &section;
        for (std::size_t i = 1; i + 1 < segs.size(); ++i) node = &(*node)[segs[i]];
        (*node)[segs.back()] = spec.default_value;
    }
    return cache.emplace(kind, read_workload_params(section)).first->second;
}

}  // namespace npusim
