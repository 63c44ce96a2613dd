#include "chip/host_costs.hpp"

namespace npusim::host {

const char* to_string(Stage s) {
    switch (s) {
        case Stage::frontend: return "frontend";
        case Stage::prepare: return "prepare";
        case Stage::infer: return "infer";
        case Stage::resize: return "resize";
        case Stage::alloc: return "alloc";
        case Stage::launch: return "launch";
        case Stage::free: return "free";
    }
    return "?";
}

const std::vector<std::string>& cost_keys() {
    static const std::vector<std::string> keys = [] {
        std::vector<std::string> k;
        for (Stage s : {Stage::frontend, Stage::prepare, Stage::infer, Stage::resize, Stage::alloc, Stage::launch, Stage::free}) {
            k.push_back(std::string(to_string(s)) + "_us");
            k.push_back(std::string(to_string(s)) + "_dynamic_us");
        }
        return k;
    }();
    return keys;
}

double stage_cost_us(const HostParams& p, const std::string& op_type, Stage s, bool dynamic) {
    const std::string key = std::string(to_string(s)) + (dynamic ? "_dynamic_us" : "_us");
    if (auto op = p.op_costs.find(op_type); op != p.op_costs.end())
        if (auto it = op->second.find(key); it != op->second.end()) return it->second;
    const HostStageCosts& c = p.costs;
    switch (s) {
        case Stage::frontend: return dynamic ? c.frontend_dynamic_us : c.frontend_us;
        case Stage::prepare: return dynamic ? c.prepare_dynamic_us : c.prepare_us;
        case Stage::infer: return dynamic ? c.infer_dynamic_us : c.infer_us;
        case Stage::resize: return dynamic ? c.resize_dynamic_us : c.resize_us;
        case Stage::alloc: return dynamic ? c.alloc_dynamic_us : c.alloc_us;
        case Stage::launch: return dynamic ? c.launch_dynamic_us : c.launch_us;
        case Stage::free: return dynamic ? c.free_dynamic_us : c.free_us;
    }
    return 0;
}

}  // namespace npusim::host
