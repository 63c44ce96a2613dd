#include "config/host_op_costs.hpp"

#include <algorithm>
#include <cmath>

#include <nlohmann/json.hpp>

#include "chip/host_costs.hpp"
#include "common/did_you_mean.hpp"
#include "common/errors.hpp"
#include "common/op_type.hpp"

namespace npusim::host {

using json = nlohmann::json;

const std::vector<std::string>& cost_op_types() {
    static const std::vector<std::string> ops = [] {
        std::vector<std::string> v = graph_op_names();
        v.emplace_back("FormatConvert");
        return v;
    }();
    return ops;
}

const json& default_op_costs() {
    // Estimates (no public per-op figures): tiling ("Resize") of Cube ops
    // searches tile shapes; a Reshape is a view (cheap infer, no tiling);
    // data-dependent ops size their workspace at Resize.
    static const json table = json::parse(R"({
        "Conv2D": {"infer_us": 4, "infer_dynamic_us": 10, "resize_us": 10, "resize_dynamic_us": 36},
        "MatMul": {"resize_us": 8, "resize_dynamic_us": 30},
        "BatchMatMul": {"resize_us": 8, "resize_dynamic_us": 30},
        "Reshape": {"infer_us": 1, "infer_dynamic_us": 4, "resize_us": 0.5, "resize_dynamic_us": 1},
        "FormatConvert": {"resize_us": 3, "resize_dynamic_us": 10},
        "Unique": {"resize_us": 5, "resize_dynamic_us": 20},
        "NonZero": {"resize_us": 5, "resize_dynamic_us": 20}
    })");
    return table;
}

std::map<std::string, std::map<std::string, double>> resolve_op_costs(const json& v) {
    std::map<std::string, std::map<std::string, double>> out;
    auto merge = [&](const json& table, bool check) {
        for (auto op = table.begin(); op != table.end(); ++op) {
            const std::string where = "chip.host.op_costs." + op.key();
            if (check) {
                const auto& ops = cost_op_types();
                if (std::find(ops.begin(), ops.end(), op.key()) == ops.end())
                    throw InputError(where + ": unknown op type '" + op.key() + "'" + did_you_mean(op.key(), ops));
                if (!op->is_object())
                    throw InputError(where + ": expected an object like {\"resize_us\": 10, \"resize_dynamic_us\": 40}");
            }
            for (auto kv = op->begin(); kv != op->end(); ++kv) {
                if (check) {
                    const auto& keys = cost_keys();
                    if (std::find(keys.begin(), keys.end(), kv.key()) == keys.end())
                        throw InputError(where + ": unknown key '" + kv.key() + "'" + did_you_mean(kv.key(), keys));
                    if (!kv->is_number() || !std::isfinite(kv->get<double>()) || kv->get<double>() < 0 ||
                        kv->get<double>() > 1e6)
                        throw InputError(where + "." + kv.key() + ": expected a number of µs in [0, 1e6], got " + kv->dump());
                }
                out[op.key()][kv.key()] = kv->get<double>();
            }
        }
    };
    merge(default_op_costs(), false);
    if (!v.is_object()) throw InputError("chip.host.op_costs: expected an object {op type: {key: µs}}");
    merge(v, true);
    return out;
}

}  // namespace npusim::host
