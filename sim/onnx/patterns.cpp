#include "onnx/patterns.hpp"

#include <cmath>
#include <set>
#include <vector>

#include "onnx/fold.hpp"

namespace npusim::onnx_import {
namespace {

using Node = ::onnx::NodeProto;

class Matcher {
public:
    Matcher(::onnx::GraphProto& g, const std::map<std::string, ConstValue>& consts) : g_(g), consts_(consts) {
        for (int i = 0; i < g.node_size(); ++i) {
            for (const auto& o : g.node(i).output()) producer_[o] = i;
            for (const auto& in : g.node(i).input()) consumers_[in].push_back(i);
        }
        for (const auto& o : g.output()) graph_outputs_.insert(o.name());
        removed_.assign(static_cast<std::size_t>(g.node_size()), false);
    }

    std::size_t run() {
        std::size_t fused = 0;
        for (int i = 0; i < g_.node_size(); ++i) {
            if (removed_[static_cast<std::size_t>(i)]) continue;
            const std::string& op = g_.node(i).op_type();
            if (!g_.node(i).domain().empty()) continue;
            bool ok = false;
            if (op == "Erf" || op == "Tanh") ok = gelu(i);
            else if (op == "ReduceMean") ok = norm(i);
            else if (op == "Sigmoid" || op == "HardSigmoid") ok = gated(i);
            else if (op == "Softmax") ok = attention(i);
            fused += ok ? 1 : 0;
        }
        google::protobuf::RepeatedPtrField<Node> kept;
        for (int i = 0; i < g_.node_size(); ++i) {
            if (removed_[static_cast<std::size_t>(i)]) continue;
            if (const auto r = replacement_.find(i); r != replacement_.end()) *kept.Add() = r->second;
            else *kept.Add() = g_.node(i);
        }
        g_.mutable_node()->Swap(&kept);
        return fused;
    }

private:
    ::onnx::GraphProto& g_;
    const std::map<std::string, ConstValue>& consts_;
    std::map<std::string, int> producer_;
    std::map<std::string, std::vector<int>> consumers_;
    std::set<std::string> graph_outputs_;
    std::vector<bool> removed_;
    std::map<int, Node> replacement_;

    const Node& node(int i) const { return g_.node(i); }
    bool is(int i, const char* op) const {
        return i >= 0 && !removed_[static_cast<std::size_t>(i)] && node(i).op_type() == op && node(i).domain().empty();
    }
    int producer(const std::string& t) const {
        const auto it = producer_.find(t);
        return it == producer_.end() ? -1 : it->second;
    }
    // The one node reading t (-1 if none, several, or t is a graph output).
    int sole_consumer(const std::string& t) const {
        const auto it = consumers_.find(t);
        if (it == consumers_.end() || it->second.size() != 1 || graph_outputs_.count(t)) return -1;
        return it->second[0];
    }
    bool consumed_only_by(const std::string& t, const std::set<int>& nodes) const {
        if (graph_outputs_.count(t)) return false;
        const auto it = consumers_.find(t);
        if (it == consumers_.end()) return true;
        for (const int c : it->second)
            if (!nodes.count(c)) return false;
        return true;
    }
    // A constant whose every element is `v` (within 1e-3 relative).
    bool const_is(const std::string& t, double v) const {
        const auto it = consts_.find(t);
        if (it == consts_.end() || !it->second.has_data || it->second.data.empty()) return false;
        for (const double d : it->second.data)
            if (std::fabs(d - v) > 1e-3 * std::max(1.0, std::fabs(v))) return false;
        return true;
    }
    bool is_const(const std::string& t) const { return consts_.count(t) != 0; }
    // For a binary node: the operand that is not `t` (or "" if neither is t).
    static std::string other(const Node& n, const std::string& t) {
        if (n.input_size() != 2) return "";
        if (n.input(0) == t) return n.input(1);
        if (n.input(1) == t) return n.input(0);
        return "";
    }

    // Replaces the nodes `parts` by `fused`, placed where `last` was.
    void replace(const std::set<int>& parts, int last, Node fused) {
        for (const int p : parts) removed_[static_cast<std::size_t>(p)] = true;
        removed_[static_cast<std::size_t>(last)] = false;
        fused.set_domain("npusim");
        replacement_[last] = std::move(fused);
    }

    // The runtime tensor a chain of Mul/Add/Div/Pow with constants reads,
    // walking back from tensor t through tensors read once (x itself is
    // read again by the gate, so the walk stops there); collects the nodes.
    // "" if the chain reads more than one runtime tensor.
    std::string chain_source(const std::string& t, std::set<int>& nodes) const {
        std::vector<std::string> todo = {t};
        std::string src;
        while (!todo.empty()) {
            const std::string u = todo.back();
            todo.pop_back();
            const int p = producer(u);
            const bool walk = p >= 0 && sole_consumer(u) >= 0 && nodes.size() < 12 &&
                              (is(p, "Mul") || is(p, "Add") || is(p, "Div") || is(p, "Pow"));
            if (!walk) {
                if (!src.empty() && src != u) return "";
                src = u;
                continue;
            }
            nodes.insert(p);
            for (const auto& in : node(p).input())
                if (!is_const(in)) todo.push_back(in);
        }
        return src;
    }

    // GELU: [x-chain] -> Erf|Tanh -> Add(1) -> Mul by x and by 0.5, in any order.
    bool gelu(int e) {
        std::set<int> parts = {e};
        const std::string x = chain_source(node(e).input(0), parts);
        if (x.empty() || parts.size() < 2) return false;
        const int add = sole_consumer(node(e).output(0));
        if (!is(add, "Add") || !const_is(other(node(add), node(e).output(0)), 1.0)) return false;
        parts.insert(add);
        std::string cur = node(add).output(0);
        bool times_x = false, half = false;
        int last = add;
        for (int step = 0; step < 3 && !(times_x && half); ++step) {
            const int m = sole_consumer(cur);
            if (!is(m, "Mul")) return false;
            const std::string o = other(node(m), cur);
            if (o == x && !times_x) times_x = true;
            else if (const_is(o, 0.5) && !half) half = true;
            else if (const int h = producer(o); is(h, "Mul") && other(node(h), x).size() && const_is(other(node(h), x), 0.5) &&
                                                 sole_consumer(o) == m && !times_x && !half) {
                times_x = half = true;
                parts.insert(h);
            } else return false;
            parts.insert(m);
            cur = node(m).output(0);
            last = m;
        }
        if (!(times_x && half)) return false;
        for (const int p : parts)
            for (const auto& o : node(p).output())
                if (p != last && !consumed_only_by(o, parts)) return false;
        Node f;
        f.set_op_type("GELU");
        f.set_name(node(e).name().empty() ? node(last).name() : node(e).name());
        f.add_input(x);
        f.add_output(node(last).output(0));
        if (node(e).op_type() == "Tanh") {
            auto* a = f.add_attribute();
            a->set_name("approximate");
            a->set_type(::onnx::AttributeProto::STRING);
            a->set_s("tanh");
        }
        replace(parts, last, f);
        return true;
    }

    // LayerNorm / RMSNorm, from the first ReduceMean.
    bool norm(int r1) {
        const std::string x = node(r1).input(0);
        const auto axes = attr_ints(node(r1), "axes", {});
        if (axes.size() != 1 || axes[0] != -1) return false;  // over the last axis
        std::set<int> parts = {r1};
        std::string centred;  // x - mean (LayerNorm) or x (RMSNorm)
        int pow_node = -1;
        const int sub = sole_consumer(node(r1).output(0));
        if (is(sub, "Sub") && node(sub).input(0) == x && node(sub).input(1) == node(r1).output(0)) {
            centred = node(sub).output(0);
            parts.insert(sub);
            for (const int c : consumers_[centred])
                if (is(c, "Pow") || is(c, "Mul")) pow_node = c;
        } else {
            // RMSNorm: this ReduceMean reads x² = Pow(x, 2) or Mul(x, x).
            const int p = producer(x);
            const bool square = (is(p, "Pow") && const_is(node(p).input(1), 2.0)) ||
                                (is(p, "Mul") && node(p).input(0) == node(p).input(1));
            if (!square) return false;
            return rms(p, r1);
        }
        if (pow_node < 0) return false;
        const bool sq = (is(pow_node, "Pow") && node(pow_node).input(0) == centred && const_is(node(pow_node).input(1), 2.0)) ||
                        (is(pow_node, "Mul") && node(pow_node).input(0) == centred && node(pow_node).input(1) == centred);
        if (!sq) return false;
        parts.insert(pow_node);
        const int r2 = sole_consumer(node(pow_node).output(0));
        if (!is(r2, "ReduceMean") || attr_ints(node(r2), "axes", {}) != axes) return false;
        parts.insert(r2);
        int last = -1;
        double eps = 0;
        if (!normalise(node(r2).output(0), centred, parts, last, eps)) return false;
        // Optional affine: Mul(gamma), Add(beta).
        Node f;
        f.set_op_type("LayerNorm");
        f.set_name(node(r1).name());
        f.add_input(x);
        std::string out = node(last).output(0);
        const int mul = sole_consumer(out);
        if (is(mul, "Mul") && is_const(other(node(mul), out))) {
            const int add = sole_consumer(node(mul).output(0));
            if (is(add, "Add") && is_const(other(node(add), node(mul).output(0)))) {
                // gamma and beta; a gamma alone stays a Mul outside.
                f.add_input(other(node(mul), out));
                f.add_input(other(node(add), node(mul).output(0)));
                parts.insert(mul);
                parts.insert(add);
                last = add;
                out = node(add).output(0);
            }
        }
        for (const int p : parts)
            for (const auto& o : node(p).output())
                if (p != last && !consumed_only_by(o, parts)) return false;
        f.add_output(out);
        auto* a = f.add_attribute();
        a->set_name("epsilon");
        a->set_type(::onnx::AttributeProto::FLOAT);
        a->set_f(static_cast<float>(eps));
        replace(parts, last, f);
        return true;
    }

    // variance -> Add(eps) -> Sqrt -> Div(centred, ·), or -> Sqrt -> Reciprocal
    // (or Div(1, ·)) -> Mul(centred, ·).
    bool normalise(const std::string& var, const std::string& centred, std::set<int>& parts, int& last, double& eps) {
        const int add = sole_consumer(var);
        if (!is(add, "Add")) return false;
        const std::string e = other(node(add), var);
        const auto it = consts_.find(e);
        if (it == consts_.end() || !it->second.has_data || it->second.data.size() != 1) return false;
        eps = it->second.data[0];
        parts.insert(add);
        const int sq = sole_consumer(node(add).output(0));
        if (!is(sq, "Sqrt")) return false;
        parts.insert(sq);
        const int d = sole_consumer(node(sq).output(0));
        if (is(d, "Div") && node(d).input(0) == centred && node(d).input(1) == node(sq).output(0)) {
            parts.insert(d);
            last = d;
            return true;
        }
        // 1 / Sqrt (torch.rsqrt exports as Div(1, ·)) is a Reciprocal.
        const bool one_over = is(d, "Div") && node(d).input(1) == node(sq).output(0) && const_is(node(d).input(0), 1.0);
        if (is(d, "Reciprocal") || one_over) {
            const int m = sole_consumer(node(d).output(0));
            if (is(m, "Mul") && other(node(m), node(d).output(0)) == centred) {
                parts.insert(d);
                parts.insert(m);
                last = m;
                return true;
            }
        }
        return false;
    }

    bool rms(int square, int r1) {
        const std::string x = node(square).input(0);
        std::set<int> parts = {square, r1};
        int last = -1;
        double eps = 0;
        if (!normalise(node(r1).output(0), x, parts, last, eps)) return false;
        Node f;
        f.set_op_type("RMSNorm");
        f.set_name(node(r1).name());
        f.add_input(x);
        std::string out = node(last).output(0);
        const int mul = sole_consumer(out);
        if (is(mul, "Mul") && is_const(other(node(mul), out))) {
            f.add_input(other(node(mul), out));
            parts.insert(mul);
            last = mul;
            out = node(mul).output(0);
        }
        for (const int p : parts)
            for (const auto& o : node(p).output())
                if (p != last && !consumed_only_by(o, parts)) return false;
        f.add_output(out);
        auto* a = f.add_attribute();
        a->set_name("epsilon");
        a->set_type(::onnx::AttributeProto::FLOAT);
        a->set_f(static_cast<float>(eps));
        replace(parts, last, f);
        return true;
    }

    // A constant scalar's value, or NaN.
    double scalar(const std::string& t) const {
        const auto it = consts_.find(t);
        if (it == consts_.end() || !it->second.has_data || it->second.data.size() != 1) return std::nan("");
        return it->second.data[0];
    }

    // True if t is a MatMul's output, through at most `depth` single-use
    // Mul / Div nodes.
    bool scores_chain(const std::string& t, int depth) const {
        const int p = producer(t);
        if (is(p, "MatMul")) return true;
        if (depth == 0 || sole_consumer(t) < 0 || !(is(p, "Mul") || is(p, "Div"))) return false;
        for (const auto& in : node(p).input())
            if (!is_const(in) && scores_chain(in, depth - 1)) return true;
        return false;
    }

    // Attention: MatMul(q, kᵀ) -> Mul|Div by a constant (the scale) -> an
    // optional mask (Add, or Where selecting a constant) -> Softmax over the
    // last axis -> MatMul(·, v), in the orders exporters write; from the
    // Softmax. q, kᵀ and v are computed (self-attention projections).
    bool attention(int sm) {
        if (attr_int(node(sm), "axis", 1) != -1) return false;  // explicitly the last axis (any opset)
        std::set<int> parts = {sm};
        double scale = 1;
        std::string mask, cur = node(sm).input(0);
        int mm = -1;
        for (int step = 0; step < 3; ++step) {
            const int p = producer(cur);
            if (p < 0 || sole_consumer(cur) < 0) return false;
            if (is(p, "MatMul")) {
                mm = p;
                break;
            }
            const Node& pn = node(p);
            std::string prev;
            if ((is(p, "Mul") || is(p, "Div")) && pn.input_size() == 2) {
                const bool div = is(p, "Div");
                const int ci = div || is_const(pn.input(1)) ? 1 : 0;  // the constant operand
                const double v = scalar(pn.input(ci));
                if (std::isnan(v) || v == 0) return false;
                scale *= div ? 1.0 / v : v;
                prev = pn.input(1 - ci);
            } else if (is(p, "Add") && pn.input_size() == 2 && mask.empty()) {
                // The mask is the operand not made from the scores (it may be
                // computed too, e.g. (1 - mask) · -10000).
                const bool first = scores_chain(pn.input(0), 3);
                if (first == scores_chain(pn.input(1), 3)) return false;
                prev = first ? pn.input(0) : pn.input(1);
                mask = first ? pn.input(1) : pn.input(0);
            } else if (is(p, "Where") && pn.input_size() == 3 && mask.empty()) {
                // masked_fill: Where(condition, fill, scores) or Where(condition, scores, fill).
                if (is_const(pn.input(1)) && !is_const(pn.input(2))) prev = pn.input(2);
                else if (is_const(pn.input(2)) && !is_const(pn.input(1))) prev = pn.input(1);
                else return false;
                mask = pn.input(0);
            } else {
                return false;
            }
            parts.insert(p);
            cur = prev;
        }
        if (mm < 0) return false;
        const std::string q = node(mm).input(0), kt = node(mm).input(1);
        if (is_const(q) || is_const(kt)) return false;
        parts.insert(mm);
        const int pv = sole_consumer(node(sm).output(0));
        if (!is(pv, "MatMul") || node(pv).input(0) != node(sm).output(0) || is_const(node(pv).input(1))) return false;
        parts.insert(pv);
        for (const int p : parts)
            for (const auto& o : node(p).output())
                if (p != pv && !consumed_only_by(o, parts)) return false;
        Node f;
        f.set_op_type("Attention");
        f.set_name((node(sm).name().empty() ? node(pv).name() : node(sm).name()) + ".attention");
        for (const auto& in : {q, kt, node(pv).input(1)}) f.add_input(in);
        if (!mask.empty()) f.add_input(mask);
        f.add_output(node(pv).output(0));
        auto* a = f.add_attribute();
        a->set_name("scale");
        a->set_type(::onnx::AttributeProto::FLOAT);
        a->set_f(static_cast<float>(scale));
        replace(parts, pv, f);
        return true;
    }

    // SiLU = x·Sigmoid(x); HardSwish = x·HardSigmoid(x) (alpha 1/6, beta 0.5).
    bool gated(int s) {
        const std::string x = node(s).input(0);
        const int m = sole_consumer(node(s).output(0));
        if (!is(m, "Mul") || other(node(m), node(s).output(0)) != x) return false;
        const bool hard = node(s).op_type() == "HardSigmoid";
        if (hard && (std::fabs(attr_float(node(s), "alpha", 0.2) - 1.0 / 6) > 1e-3 || std::fabs(attr_float(node(s), "beta", 0.5) - 0.5) > 1e-3))
            return false;
        Node f;
        f.set_op_type(hard ? "HardSwish" : "SiLU");
        f.set_name(node(s).name());
        f.add_input(x);
        f.add_output(node(m).output(0));
        replace({s, m}, m, f);
        return true;
    }
};

}  // namespace

std::size_t fuse_patterns(::onnx::GraphProto& g, const std::map<std::string, ConstValue>& consts) {
    return Matcher(g, consts).run();
}

}  // namespace npusim::onnx_import
