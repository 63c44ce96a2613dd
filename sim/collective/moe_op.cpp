#include "collective/moe_op.hpp"

#include <nlohmann/json.hpp>

#include "common/errors.hpp"

namespace npusim {

using json = nlohmann::json;

std::string MoeOp::to_args() const {
    return json{{"variant", variant_name()},
                {"flag_in_block", flag_in_block},
                {"batch", batch},
                {"hidden", hidden},
                {"in_elt", in_elt},
                {"out_elt", out_elt},
                {"quantize", quantize},
                {"top_k", top_k},
                {"experts", experts},
                {"group", group},
                {"routing",
                 {{"distribution", to_string(routing.distribution)},
                  {"skew", routing.skew},
                  {"seed", routing.seed},
                  {"redundant_experts", routing.redundant_experts}}},
                {"epoch", epoch},
                {"capacity", capacity},
                {"in_addr", in_addr},
                {"out_addr", out_addr}}
        .dump();
}

MoeOp MoeOp::from_args(const std::string& args) {
    MoeOp p;
    try {
        const json j = json::parse(args);
        const std::string variant = j.at("variant").get<std::string>();
        if (variant != "baseline" && variant != "optimized")
            throw InputError("args.variant: expected \"baseline\" or \"optimized\", got \"" + variant + "\"");
        p.variant = variant == "baseline" ? Variant::baseline : Variant::optimized;
        p.flag_in_block = j.at("flag_in_block").get<bool>();
        p.batch = j.at("batch").get<int>();
        p.hidden = j.at("hidden").get<int>();
        p.in_elt = j.at("in_elt").get<std::uint32_t>();
        p.out_elt = j.at("out_elt").get<std::uint32_t>();
        p.quantize = j.at("quantize").get<bool>();
        p.top_k = j.at("top_k").get<int>();
        p.experts = j.at("experts").get<int>();
        p.group = j.at("group").get<int>();
        const json& r = j.at("routing");
        p.routing.distribution = r.at("distribution").get<std::string>() == "zipf" ? RoutingSpec::Distribution::zipf
                                                                                    : RoutingSpec::Distribution::uniform;
        p.routing.skew = r.at("skew").get<double>();
        p.routing.seed = r.at("seed").get<std::uint64_t>();
        p.routing.redundant_experts = r.at("redundant_experts").get<int>();
        p.epoch = j.at("epoch").get<std::uint64_t>();
        p.capacity = j.value("capacity", 0);
        p.in_addr = j.at("in_addr").get<std::uint64_t>();
        p.out_addr = j.at("out_addr").get<std::uint64_t>();
    } catch (const json::exception& e) {
        throw InputError(std::string("args: ") + e.what());
    }
    if (p.batch < 1 || p.hidden < 1 || p.top_k < 1 || p.experts < p.top_k || p.group < 1 || p.capacity < 0 ||
        (p.experts + p.routing.redundant_experts) % p.group != 0)
        throw InputError("args: batch, hidden, top_k >= 1, experts >= top_k and experts + redundant_experts a multiple of "
                         "the group's ranks");
    return p;
}

std::string combine_program_args(const MoeOp& combine, const MoeOp& dispatch) {
    return json{{"combine", json::parse(combine.to_args())}, {"dispatch", json::parse(dispatch.to_args())}}.dump();
}

}  // namespace npusim
