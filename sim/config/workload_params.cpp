#include "config/workload_params.hpp"

#include <map>
#include <stdexcept>

#include <nlohmann/json.hpp>

#include "common/errors.hpp"
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

WorkloadParams read_workload_params(const json& section, const std::function<std::string(const std::string&)>& source) {
    WorkloadParams w;
    if (!section.is_object() || !section.contains("kind")) return w;  // chip-only use (lint)
    const std::string kind = section.at("kind").get<std::string>();
    for (const auto& spec : config_keys()) {
        if (!spec.apply_workload || !key_applies(spec, kind) || spec.path.rfind("workload.", 0) != 0) continue;
        const json* v = find_path(section, spec.path);
        if (!v) continue;
        try {
            spec.apply_workload(w, *v);
        } catch (const InputError& e) {
            if (!source) throw;
            throw InputError(source(spec.path) + ": " + e.what());
        }
    }
    return w;
}

const WorkloadParams& default_workload_params(const std::string& kind) {
    // Built once for every kind (a const static: safe to share).
    static const std::map<std::string, WorkloadParams> defaults = [] {
        std::map<std::string, WorkloadParams> all;
        for (const std::string& k : workload_kinds()) {
            json section = {{"kind", k}};
            for (const auto& spec : config_keys()) {
                if (spec.required || !key_applies(spec, k) || spec.path.rfind("workload.", 0) != 0) continue;
                const auto segs = split_key_path(spec.path);
                json* node = &section;
                for (std::size_t i = 1; i + 1 < segs.size(); ++i) node = &(*node)[segs[i]];
                (*node)[segs.back()] = spec.default_value;
            }
            all.emplace(k, read_workload_params(section));
        }
        return all;
    }();
    const auto it = defaults.find(kind);
    if (it == defaults.end()) throw std::logic_error("default_workload_params: no workload kind '" + kind + "'");
    return it->second;
}

}  // namespace npusim
