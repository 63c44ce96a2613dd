#include "compiler/shape_inference.hpp"

#include <algorithm>
#include <array>
#include <tuple>
#include <stdexcept>

#include "common/errors.hpp"
#include "compiler/attention_layout.hpp"
#include "compiler/comm_ops.hpp"

namespace npusim::compiler {
namespace {

// Internal failure, turned into the `error` string at the API boundary.
struct Bad {
    std::string what;
};

[[noreturn]] void bad(std::string what) { throw Bad{std::move(what)}; }

std::string shape_str(const Shape& s) { return to_string(s); }

class Ctx {
public:
    Ctx(const Graph& g, const Node& n) : g_(g), n_(n) {}

    std::size_t count() const { return n_.inputs.size(); }

    void need_inputs(std::size_t lo, std::size_t hi, const char* what) const {
        const std::size_t k = count();
        if (k < lo || k > hi) {
            std::string want = lo == hi ? std::to_string(lo) : std::to_string(lo) + " to " + std::to_string(hi);
            if (hi == static_cast<std::size_t>(-1)) want = "at least " + std::to_string(lo);
            bad(std::string(to_string(n_.op)) + " takes " + want + " input(s) (" + what + "), got " +
                std::to_string(k));
        }
    }
    void need_inputs_in(std::initializer_list<std::size_t> ok, const char* what) const {
        for (const std::size_t k : ok)
            if (count() == k) return;
        std::string want;
        std::size_t i = 0;
        for (const std::size_t k : ok) want += (i++ ? " or " : "") + std::to_string(k);
        bad(std::string(to_string(n_.op)) + " takes " + want + " inputs (" + what + "), got " +
            std::to_string(count()));
    }

    const Tensor& in(std::size_t i) const {
        const int t = n_.inputs.at(i);
        if (t < 0 || static_cast<std::size_t>(t) >= g_.tensors.size()) bad("input " + std::to_string(i) + " is not a tensor");
        return g_.tensors[static_cast<std::size_t>(t)];
    }
    const Shape& shape(std::size_t i) const { return in(i).shape; }
    std::string name(std::size_t i) const { return "'" + in(i).name + "' " + shape_str(in(i).shape); }

    void need_rank(std::size_t i, std::size_t r, const char* what) const {
        if (shape(i).size() != r)
            bad("input " + name(i) + " must be " + std::to_string(r) + "-D (" + what + ")");
    }
    void need_rank_at_least(std::size_t i, std::size_t r, const char* what) const {
        if (shape(i).size() < r)
            bad("input " + name(i) + " must be at least " + std::to_string(r) + "-D (" + what + ")");
    }

    std::int64_t attr_int(const char* key, std::int64_t fallback) const {
        try {
            return n_.attr_int(key, fallback);
        } catch (const std::exception&) {
            bad(std::string("attrs.") + key + ": expected an integer");
        }
    }
    std::vector<std::int64_t> attr_ints(const char* key, std::vector<std::int64_t> fallback) const {
        try {
            return n_.attr_ints(key, std::move(fallback));
        } catch (const std::exception&) {
            bad(std::string("attrs.") + key + ": expected an integer or a list of integers");
        }
    }
    bool has(const char* key) const { return n_.attrs.count(key) != 0; }

    // An attribute that is one value for both spatial dims or a pair [h, w].
    std::pair<std::int64_t, std::int64_t> pair(const char* key, std::int64_t fallback, std::int64_t lo) const {
        const auto v = attr_ints(key, {fallback});
        if (v.size() != 1 && v.size() != 2)
            bad(std::string("attrs.") + key + ": expected an integer or [h, w], got " + std::to_string(v.size()) +
                " values");
        const std::int64_t h = v[0], w = v.size() == 2 ? v[1] : v[0];
        if (h < lo || w < lo)
            bad(std::string("attrs.") + key + ": values must be >= " + std::to_string(lo) + ", got " + shape_str(v));
        return {h, w};
    }

    // Padding: p | [ph, pw] | [top, left, bottom, right].
    std::array<std::int64_t, 4> pads() const {
        const auto v = attr_ints("pad", {0});
        std::array<std::int64_t, 4> p{};
        if (v.size() == 1) p = {v[0], v[0], v[0], v[0]};
        else if (v.size() == 2) p = {v[0], v[1], v[0], v[1]};
        else if (v.size() == 4) p = {v[0], v[1], v[2], v[3]};
        else bad("attrs.pad: expected an integer, [ph, pw] or [top, left, bottom, right], got " + shape_str(v));
        for (const auto x : p)
            if (x < 0 || x > (1 << 20)) bad("attrs.pad: values must be in [0, 1048576], got " + shape_str(v));
        return p;
    }

    int axis(std::int64_t a, std::size_t rank, const char* key) const {
        const auto r = static_cast<std::int64_t>(rank);
        if (a < -r || a >= r)
            bad(std::string("attrs.") + key + ": axis " + std::to_string(a) + " is out of range for a " +
                std::to_string(rank) + "-D input (valid: " + std::to_string(-r) + " to " + std::to_string(r - 1) + ")");
        return static_cast<int>(a < 0 ? a + r : a);
    }

    const Node& node() const { return n_; }
    std::vector<SliceAxis> slice_axes() const {
        std::string error;
        std::vector<SliceAxis> v = compiler::slice_axes(n_, shape(0), error);
        if (!error.empty()) bad(error);
        return v;
    }

private:
    const Graph& g_;
    const Node& n_;
};

std::int64_t window_out(std::int64_t in, std::int64_t lo_pad, std::int64_t hi_pad, std::int64_t k, std::int64_t stride,
                        const char* what) {
    const std::int64_t span = in + lo_pad + hi_pad - k;
    if (span < 0)
        bad(std::string(what) + ": window " + std::to_string(k) + " is larger than the padded input " +
            std::to_string(in + lo_pad + hi_pad));
    return span / stride + 1;
}

Shape conv2d(const Ctx& c) {
    c.need_inputs(2, 3, "x, weight, optional bias");
    c.need_rank(0, 4, "x is [N,C,H,W]");
    c.need_rank(1, 4, "weight is [O,C/groups,kh,kw]");
    const Shape& x = c.shape(0);
    const Shape& w = c.shape(1);
    const std::int64_t groups = c.attr_int("groups", 1);
    if (groups < 1) bad("attrs.groups: must be >= 1, got " + std::to_string(groups));
    if (x[1] % groups != 0)
        bad("input channels " + std::to_string(x[1]) + " of " + c.name(0) + " are not divisible by groups " +
            std::to_string(groups));
    if (w[1] != x[1] / groups)
        bad("channel mismatch: " + c.name(0) + " has " + std::to_string(x[1]) + " channels" +
            (groups > 1 ? " (" + std::to_string(x[1] / groups) + " per group)" : std::string()) + " but weight " +
            c.name(1) + " expects " + std::to_string(w[1]));
    if (w[0] % groups != 0)
        bad("output channels " + std::to_string(w[0]) + " of weight " + c.name(1) + " are not divisible by groups " +
            std::to_string(groups));
    if (c.has("kernel")) {
        const auto k = c.pair("kernel", 1, 1);
        if (k.first != w[2] || k.second != w[3])
            bad("attrs.kernel [" + std::to_string(k.first) + "," + std::to_string(k.second) +
                "] does not match weight " + c.name(1));
    }
    if (c.count() == 3 && elements(c.shape(2)) != w[0])
        bad("bias " + c.name(2) + " must have " + std::to_string(w[0]) + " elements (one per output channel)");
    const auto [sh, sw] = c.pair("stride", 1, 1);
    const auto [dh, dw] = c.pair("dilation", 1, 1);
    const auto p = c.pads();
    const std::int64_t kh = dh * (w[2] - 1) + 1, kw = dw * (w[3] - 1) + 1;
    return {x[0], w[0], window_out(x[2], p[0], p[2], kh, sh, "height"), window_out(x[3], p[1], p[3], kw, sw, "width")};
}

Shape pool(const Ctx& c) {
    c.need_inputs(1, 1, "x");
    c.need_rank(0, 4, "x is [N,C,H,W]");
    if (!c.has("kernel")) bad("attrs.kernel: required (an integer or [kh, kw])");
    const auto [kh, kw] = c.pair("kernel", 1, 1);
    std::int64_t s_h = kh, s_w = kw;  // stride defaults to the kernel
    if (c.has("stride")) std::tie(s_h, s_w) = c.pair("stride", 1, 1);
    const auto p = c.pads();
    if (p[0] >= kh || p[2] >= kh || p[1] >= kw || p[3] >= kw)
        bad("attrs.pad: padding must be smaller than the kernel");
    const Shape& x = c.shape(0);
    return {x[0], x[1], window_out(x[2], p[0], p[2], kh, s_h, "height"), window_out(x[3], p[1], p[3], kw, s_w, "width")};
}

Shape matmul(const Ctx& c, bool batch) {
    if (batch) c.need_inputs(2, 2, "a, b");
    else c.need_inputs(2, 3, "a, b, then optionally the per-column scales of an int8 product");
    const std::size_t min_rank = batch ? 3 : 2;
    const char* what = batch ? "[B...,M,K]" : "[...,M,K]";
    c.need_rank_at_least(0, min_rank, what);
    c.need_rank_at_least(1, min_rank, batch ? "[B...,K,N]" : "[K,N] or [...,K,N]");
    Shape a = c.shape(0), b = c.shape(1);
    if (batch && a.size() != b.size())
        bad("inputs " + c.name(0) + " and " + c.name(1) + " must have the same rank");
    const bool ta = c.attr_int("transpose_a", 0) != 0;
    const bool tb = c.attr_int("transpose_b", 0) != 0;
    if (ta) std::swap(a[a.size() - 1], a[a.size() - 2]);
    if (tb) std::swap(b[b.size() - 1], b[b.size() - 2]);
    const std::int64_t m = a[a.size() - 2], k = a[a.size() - 1];
    const std::int64_t k2 = b[b.size() - 2], n = b[b.size() - 1];
    if (k != k2)
        bad("inner dimensions differ: " + c.name(0) + (ta ? " (transposed)" : "") + " has K=" + std::to_string(k) +
            " but " + c.name(1) + (tb ? " (transposed)" : "") + " has K=" + std::to_string(k2));
    const Shape ba(a.begin(), a.end() - 2), bb(b.begin(), b.end() - 2);
    Shape out;
    if (!broadcast_shapes(ba, bb, out))
        bad("batch dimensions of " + c.name(0) + " and " + c.name(1) + " do not broadcast");
    out.push_back(m);
    out.push_back(n);
    if (c.count() == 3) {
        if (c.in(0).dtype != DType::int8 || c.in(1).dtype != DType::int8)
            bad("a scale input (" + c.name(2) + ") dequantises an int8 product: " + c.name(0) + " and " + c.name(1) +
                " must be int8");
        if (elements(c.shape(2)) != n)
            bad("scale " + c.name(2) + " must have " + std::to_string(n) + " elements (one per output column)");
    }
    return out;
}

// RoPE: x rotated by position; the optional table holds cos and sin for the
// last axis of x.
Shape rope(const Ctx& c) {
    c.need_inputs(1, 2, "x, then optionally the cos/sin table");
    c.need_rank_at_least(0, 1, "[..., D]");
    const Shape& x = c.shape(0);
    if (x.back() % 2 != 0) bad("the last dimension of " + c.name(0) + " (" + std::to_string(x.back()) + ") must be even (pairs rotate)");
    if (c.count() == 2 && c.shape(1).back() != x.back())
        bad("table " + c.name(1) + " must end in " + std::to_string(x.back()) + " (the last dimension of " + c.name(0) + ")");
    return x;
}

// MoEGate: per token, the top_k experts of the router scores [T, E], chosen
// within the topk_groups best of `groups` expert groups.
Shape moe_gate(const Ctx& c) {
    c.need_inputs(1, 2, "router scores [tokens, experts], then optionally the expert bias [experts]");
    const Shape& s = c.shape(0);
    if (s.size() != 2) bad("scores " + c.name(0) + " " + shape_str(s) + " must be 2-D [tokens, experts]");
    const std::int64_t e = s[1], k = c.attr_int("top_k", 0), groups = c.attr_int("groups", 1),
                       kept = c.attr_int("topk_groups", groups);
    if (!c.has("top_k")) bad("attrs.top_k: required (experts per token)");
    if (groups < 1 || e % groups != 0)
        bad("attrs.groups: must divide the " + std::to_string(e) + " experts, got " + std::to_string(groups));
    if (kept < 1 || kept > groups)
        bad("attrs.topk_groups: must be in [1, " + std::to_string(groups) + "], got " + std::to_string(kept));
    if (k < 1 || k > kept * (e / groups))
        bad("attrs.top_k: must be in [1, " + std::to_string(kept * (e / groups)) + "] (the experts of the " +
            std::to_string(kept) + " kept group(s)), got " + std::to_string(k));
    if (c.count() == 2 && elements(c.shape(1)) != e)
        bad("bias " + c.name(1) + " must have " + std::to_string(e) + " elements (one per expert)");
    return {s[0], k};
}

// A causal attention's query row m sees the keys up to position Sk - S + m:
// every row sees one only with Sk >= S.
void need_causal_keys(const Ctx& c, std::int64_t s, std::int64_t sk) {
    if (c.attr_int("causal", 0) != 0 && sk < s)
        bad("attrs.causal: a causal attention needs at least as many keys as queries; " + c.name(0) + " has " +
            std::to_string(s) + " queries but " + c.name(1) + " " + std::to_string(sk) + " keys");
}

// MLAttention: every query row against the latent KV cache; the values are
// the cache's first v_dim columns (docs/graph-format.md, "LLM ops").
Shape ml_attention(const Ctx& c) {
    c.need_inputs(2, 2, "q [..., Sq, D], the latent KV cache [..., Sk, D]");
    c.need_rank_at_least(0, 2, "[..., Sq, D]");
    c.need_rank_at_least(1, 2, "[..., Sk, D]");
    const Shape& q = c.shape(0);
    const Shape& kv = c.shape(1);
    if (kv.size() != q.size() || !std::equal(q.begin(), q.end() - 2, kv.begin()))
        bad("the cache " + c.name(1) + " must have the leading dims of " + c.name(0));
    if (kv.back() != q.back())
        bad("head dimensions differ: " + c.name(0) + " has D=" + std::to_string(q.back()) + " but " + c.name(1) + " has " +
            std::to_string(kv.back()));
    if (!c.has("v_dim")) bad("attrs.v_dim: required (the cache's first v_dim columns are the values)");
    const std::int64_t v = c.attr_int("v_dim", 0);
    if (v < 1 || v > q.back()) bad("attrs.v_dim: must be in [1, " + std::to_string(q.back()) + "], got " + std::to_string(v));
    need_causal_keys(c, q[q.size() - 2], kv[kv.size() - 2]);
    Shape out = q;
    out.back() = v;
    return out;
}

Shape reshape(const Ctx& c) {
    c.need_inputs(1, 2, "x, optionally a shape tensor");
    if (!c.has("shape")) bad("attrs.shape: required (a list; one -1 allowed, 0 copies the input dimension)");
    const Shape& x = c.shape(0);
    Shape out = c.attr_ints("shape", {});
    // Value-dependent form: the shape comes from a tensor at run time; attrs.shape is its value.
    if (c.count() == 2 && (c.shape(1).size() != 1 || c.shape(1)[0] != static_cast<std::int64_t>(out.size())))
        bad("shape tensor " + c.name(1) + " must be 1-D with " + std::to_string(out.size()) + " elements (one per entry of attrs.shape)");
    int infer = -1;
    std::int64_t known = 1;
    for (std::size_t i = 0; i < out.size(); ++i) {
        if (out[i] == -1) {
            if (infer >= 0) bad("attrs.shape " + shape_str(out) + ": only one -1 is allowed");
            infer = static_cast<int>(i);
            continue;
        }
        if (out[i] == 0) {
            if (i >= x.size())
                bad("attrs.shape " + shape_str(out) + ": 0 at index " + std::to_string(i) + " copies a dimension " +
                    c.name(0) + " does not have");
            out[i] = x[i];
        }
        if (out[i] < 0) bad("attrs.shape " + shape_str(out) + ": dimensions must be positive, -1 or 0");
        if (known > (std::int64_t(1) << 50) / out[i]) bad("attrs.shape " + shape_str(out) + ": too many elements");
        known *= out[i];
    }
    const std::int64_t total = elements(x);
    if (infer >= 0) {
        if (total % known != 0)
            bad("cannot reshape " + c.name(0) + " (" + std::to_string(total) + " elements) to " +
                shape_str(c.attr_ints("shape", {})));
        out[static_cast<std::size_t>(infer)] = total / known;
    } else if (known != total) {
        bad("element count mismatch: " + c.name(0) + " has " + std::to_string(total) + " elements, attrs.shape " +
            shape_str(out) + " has " + std::to_string(known));
    }
    return out;
}

Shape transpose(const Ctx& c) {
    c.need_inputs(1, 1, "x");
    const Shape& x = c.shape(0);
    if (!c.has("perm")) bad("attrs.perm: required (a permutation of 0.." + std::to_string(x.size()) + "-1)");
    const auto perm = c.attr_ints("perm", {});
    if (perm.size() != x.size())
        bad("attrs.perm " + shape_str(perm) + " has " + std::to_string(perm.size()) + " entries but " + c.name(0) +
            " is " + std::to_string(x.size()) + "-D");
    std::vector<bool> seen(x.size(), false);
    Shape out;
    for (const auto p : perm) {
        if (p < 0 || p >= static_cast<std::int64_t>(x.size()) || seen[static_cast<std::size_t>(p)])
            bad("attrs.perm " + shape_str(perm) + " is not a permutation of 0.." + std::to_string(x.size() - 1));
        seen[static_cast<std::size_t>(p)] = true;
        out.push_back(x[static_cast<std::size_t>(p)]);
    }
    return out;
}

Shape concat(const Ctx& c) {
    c.need_inputs(1, static_cast<std::size_t>(-1), "the tensors to join");
    if (!c.has("axis")) bad("attrs.axis: required");
    const Shape& first = c.shape(0);
    const int ax = c.axis(c.attr_int("axis", 0), first.size(), "axis");
    Shape out = first;
    for (std::size_t i = 1; i < c.count(); ++i) {
        const Shape& s = c.shape(i);
        if (s.size() != first.size())
            bad("inputs " + c.name(0) + " and " + c.name(i) + " have different ranks");
        for (std::size_t d = 0; d < s.size(); ++d)
            if (static_cast<int>(d) != ax && s[d] != first[d])
                bad("inputs " + c.name(0) + " and " + c.name(i) + " differ in dimension " + std::to_string(d) +
                    " (only axis " + std::to_string(ax) + " may differ)");
        out[static_cast<std::size_t>(ax)] += s[static_cast<std::size_t>(ax)];
    }
    return out;
}

Shape reduce_sum(const Ctx& c) {
    c.need_inputs(1, 2, "x, optionally an axes tensor");
    const Shape& x = c.shape(0);
    std::vector<std::int64_t> axes = c.attr_ints("axes", {});
    // Value-dependent form: the axes come from a tensor at run time; attrs.axes is its value.
    if (c.count() == 2 && (c.shape(1).size() != 1 || c.shape(1)[0] != static_cast<std::int64_t>(axes.size())))
        bad("axes tensor " + c.name(1) + " must be 1-D with one element per entry of attrs.axes (" +
            std::to_string(axes.size()) + ")");
    std::vector<bool> reduce(x.size(), axes.empty());
    for (const auto a : axes) {
        const int ax = c.axis(a, x.size(), "axes");
        if (reduce[static_cast<std::size_t>(ax)]) bad("attrs.axes " + shape_str(axes) + ": axis repeated");
        reduce[static_cast<std::size_t>(ax)] = true;
    }
    const bool keep = c.attr_int("keepdims", 1) != 0;
    Shape out;
    for (std::size_t d = 0; d < x.size(); ++d) {
        if (!reduce[d]) out.push_back(x[d]);
        else if (keep) out.push_back(1);
    }
    return out;
}

// Gather: rows of `data` along `axis` picked by `indices` (an embedding lookup).
Shape gather(const Ctx& c) {
    c.need_inputs(2, 2, "data, indices");
    const Shape& x = c.shape(0);
    c.need_rank_at_least(0, 1, "data");
    const int ax = c.axis(c.attr_int("axis", 0), x.size(), "axis");
    Shape out(x.begin(), x.begin() + ax);
    out.insert(out.end(), c.shape(1).begin(), c.shape(1).end());
    out.insert(out.end(), x.begin() + ax + 1, x.end());
    if (out.empty()) out.push_back(1);
    return out;
}

// Slice: `starts`/`ends` (clamped to the dim, negative from the end) on
// `axes` (default 0, 1, ...) with `steps` (default 1; positive).
Shape slice(const Ctx& c) {
    c.need_inputs(1, 1, "x");
    Shape out = c.shape(0);
    for (const SliceAxis& a : c.slice_axes())
        out[static_cast<std::size_t>(a.axis)] = (a.end - a.begin + a.step - 1) / a.step;
    return out;
}

// Attention in layout BSND: q [..., S, N, D], k [..., Sk, Nk, D] and v
// [..., Sk, Nk, Dv] with Nk dividing N (grouped queries); out [..., S, N, Dv].
// Optionally the rope parts apart (MLA): q_rope [..., S, N, Dr] and k_rope
// [..., Sk, Nr, Dr], Nr dividing N (1: one rope key for every head); the
// scores are then over D + Dr columns.
Shape attention_seq_major(const Ctx& c) {
    c.need_inputs_in({3, 5}, "q, k, v, optionally q_rope and k_rope (layout BSND takes no mask: use attrs.causal)");
    for (std::size_t i = 0; i < c.count(); ++i) c.need_rank_at_least(i, 3, "[..., S, heads, D] in layout BSND");
    if (c.attr_int("k_transposed", 0) != 0)
        bad("attrs.k_transposed: must be 0 with attrs.layout BSND (k is [..., Sk, heads, D])");
    const Shape &q = c.shape(0), &k = c.shape(1), &v = c.shape(2);
    const std::size_t n = q.size();
    if (k.back() != q.back())
        bad("head dimensions differ: " + c.name(0) + " has D=" + std::to_string(q.back()) + " but " + c.name(1) +
            " has " + std::to_string(k.back()));
    for (std::size_t i : {1, 2}) {
        const Shape& s = c.shape(i);
        const bool ok =
            s.size() == n && std::equal(q.begin(), q.end() - 3, s.begin()) && s[n - 2] >= 1 && q[n - 2] % s[n - 2] == 0;
        if (!ok)
            bad("input " + c.name(i) + " must have the leading dims of " + c.name(0) +
                " and a head count dividing its " + std::to_string(q[n - 2]));
    }
    if (v[n - 3] != k[n - 3] || v[n - 2] != k[n - 2])
        bad("keys differ: " + c.name(1) + " and " + c.name(2) + " must have the same keys and heads");
    if (c.count() == 5) {
        const Shape &qr = c.shape(3), &kr = c.shape(4);
        const bool q_ok = qr.size() == n && std::equal(q.begin(), q.end() - 1, qr.begin());
        const bool k_ok = kr.size() == n && std::equal(q.begin(), q.end() - 3, kr.begin()) && kr[n - 3] == k[n - 3] &&
                          kr[n - 2] >= 1 && q[n - 2] % kr[n - 2] == 0 && kr.back() == qr.back();
        if (!q_ok) bad("q_rope " + c.name(3) + " must be " + c.name(0) + " but for its last dim");
        if (!k_ok)
            bad("k_rope " + c.name(4) + " must have the keys of " + c.name(1) + ", a head count dividing " +
                std::to_string(q[n - 2]) + " and the last dim of " + c.name(3));
    }
    need_causal_keys(c, q[n - 3], k[n - 3]);
    Shape out = q;
    out.back() = v.back();
    return out;
}

// Fused attention: softmax(scale · q·kᵀ (+ mask)) · v over the last two axes.
Shape attention(const Ctx& c) {
    try {
        if (seq_major(c.node())) return attention_seq_major(c);
    } catch (const InputError& e) {
        const std::string what = e.what();
        bad(what.substr(what.find("attrs.layout")));
    }
    c.need_inputs(3, 4, "q, k, v, optionally a mask");
    for (std::size_t i = 0; i < 3; ++i) c.need_rank_at_least(i, 2, "[...,S,D]");
    const Shape& q = c.shape(0);
    Shape k = c.shape(1);
    const Shape& v = c.shape(2);
    // k arrives as kᵀ [...,D,Sk] (as exporters write q·kᵀ) unless k_transposed is 0.
    if (c.attr_int("k_transposed", 1) == 0) std::swap(k[k.size() - 1], k[k.size() - 2]);
    const std::int64_t d = q.back(), sk = k.back();
    if (k[k.size() - 2] != d)
        bad("head dimensions differ: " + c.name(0) + " has D=" + std::to_string(d) + " but " + c.name(1) + " has " +
            std::to_string(k[k.size() - 2]));
    if (v[v.size() - 2] != sk)
        bad("key lengths differ: " + c.name(1) + " has " + std::to_string(sk) + " keys but " + c.name(2) + " has " +
            std::to_string(v[v.size() - 2]));
    // k and v have q's leading dims, or (grouped queries) fewer heads in the
    // last of them, dividing q's.
    for (std::size_t i : {1, 2}) {
        const Shape& s = c.shape(i);
        bool ok = s.size() == q.size() && std::equal(q.begin(), q.end() - 3 + (q.size() < 3 ? 1 : 0), s.begin());
        if (ok && q.size() >= 3) {
            const std::int64_t hq = q[q.size() - 3], hk = s[s.size() - 3];
            ok = hk >= 1 && hq % hk == 0;
        }
        if (!ok)
            bad("input " + c.name(i) + " must have the leading dims of " + c.name(0) +
                " (or, for grouped queries, a head count dividing its " +
                (q.size() >= 3 ? std::to_string(q[q.size() - 3]) : std::string("1")) + ")");
    }
    need_causal_keys(c, q[q.size() - 2], sk);
    Shape out = q;
    out.back() = v.back();
    if (c.count() == 4) {
        Shape scores = q, b;
        scores.back() = sk;
        if (!broadcast_shapes(scores, c.shape(3), b) || b != scores)
            bad("mask " + c.name(3) + " does not broadcast to the scores " + shape_str(scores));
    }
    return out;
}

// Pad: `pads` [begin..., end...] per axis, `interior` zeros between elements.
Shape pad(const Ctx& c) {
    c.need_inputs(1, 1, "x");
    Shape out = c.shape(0);
    const auto pads = c.attr_ints("pads", {});
    const auto interior = c.attr_ints("interior", Shape(out.size(), 0));
    if (pads.size() != 2 * out.size())
        bad("attrs.pads: expected " + std::to_string(2 * out.size()) + " values (begin and end of each axis of " +
            c.name(0) + "), got " + std::to_string(pads.size()));
    if (interior.size() != out.size())
        bad("attrs.interior: expected " + std::to_string(out.size()) + " values, got " + std::to_string(interior.size()));
    for (std::size_t d = 0; d < out.size(); ++d) {
        constexpr std::int64_t kMax = 1 << 20;
        const auto ok = [&](std::int64_t v) { return v >= 0 && v <= kMax; };
        if (!ok(pads[d]) || !ok(pads[d + out.size()]) || !ok(interior[d]))
            bad("attrs.pads / attrs.interior: values must be in [0, 1048576], got " + shape_str(pads) + " / " +
                shape_str(interior));
        out[d] += pads[d] + pads[d + out.size()] + (out[d] - 1) * interior[d];
    }
    return out;
}

// Resize: to `sizes` (one per axis).
Shape resize(const Ctx& c) {
    c.need_inputs(1, 1, "x");
    const auto sizes = c.attr_ints("sizes", {});
    if (sizes.size() != c.shape(0).size())
        bad("attrs.sizes: expected " + std::to_string(c.shape(0).size()) + " values (the output shape), got " +
            std::to_string(sizes.size()));
    for (const auto d : sizes)
        if (d < 1) bad("attrs.sizes: values must be >= 1, got " + shape_str(sizes));
    return sizes;
}

// TopK (the k largest along `axis`) and ArgMax (their position, k = 1).
Shape select(const Ctx& c, bool arg) {
    c.need_inputs(1, 1, "x");
    c.need_rank_at_least(0, 1, "selection axis");
    Shape out = c.shape(0);
    const int ax = c.axis(c.attr_int("axis", -1), out.size(), "axis");
    const std::int64_t k = arg ? 1 : c.attr_int("k", 1);
    if (k < 1 || k > out[static_cast<std::size_t>(ax)])
        bad("attrs.k: must be in [1, " + std::to_string(out[static_cast<std::size_t>(ax)]) + "], got " + std::to_string(k));
    out[static_cast<std::size_t>(ax)] = k;
    if (arg && c.attr_int("keepdims", 1) == 0) out.erase(out.begin() + ax);
    return out;
}

Shape group_norm(const Ctx& c) {
    c.need_inputs_in({1, 3}, "x, then optionally gamma, beta");
    c.need_rank_at_least(0, 3, "[N,C,spatial...]");
    const std::int64_t ch = c.shape(0)[1], groups = c.attr_int("groups", 1);
    if (groups < 1 || ch % groups != 0)
        bad("attrs.groups: must divide the " + std::to_string(ch) + " channels of " + c.name(0) + ", got " +
            std::to_string(groups));
    for (std::size_t i = 1; i < c.count(); ++i)
        if (elements(c.shape(i)) != ch)
            bad("per-channel parameter " + c.name(i) + " must have " + std::to_string(ch) + " elements");
    return c.shape(0);
}

Shape batch_norm_shape(const Ctx& c) {
    c.need_inputs_in({1, 5}, "x, then optionally gamma, beta, mean, variance");
    c.need_rank_at_least(0, 2, "channels on axis 1");
    const std::int64_t ch = c.shape(0)[1];
    for (std::size_t i = 1; i < c.count(); ++i)
        if (elements(c.shape(i)) != ch)
            bad("per-channel parameter " + c.name(i) + " must have " + std::to_string(ch) +
                " elements (the channels of " + c.name(0) + ")");
    return c.shape(0);
}

// One input, the output its shape.
Shape same_shape(const Ctx& c) {
    c.need_inputs(1, 1, "x");
    return c.shape(0);
}

Shape broadcast_binary(const Ctx& c) {
    c.need_inputs(2, 2, "a, b");
    Shape out;
    if (!broadcast_shapes(c.shape(0), c.shape(1), out))
        bad("shapes of " + c.name(0) + " and " + c.name(1) + " do not broadcast");
    return out;
}

Shape layer_norm_shape(const Ctx& c) {
    if (c.node().op == OpType::RMSNorm) c.need_inputs_in({1, 2}, "x, then optionally gamma");
    else c.need_inputs_in({1, 3}, "x, then optionally gamma, beta");
    c.need_rank_at_least(0, 1, "normalised axes");
    const Shape& x = c.shape(0);
    const int ax = c.axis(c.attr_int("axis", -1), x.size(), "axis");
    const std::int64_t norm = elements(Shape(x.begin() + ax, x.end()));
    for (std::size_t i = 1; i < c.count(); ++i)
        if (elements(c.shape(i)) != norm)
            bad("parameter " + c.name(i) + " must have " + std::to_string(norm) +
                " elements (the normalised dimensions of " + c.name(0) + ")");
    return x;
}

// One input along attrs.axis (`what` names that axis), the output its shape.
Shape along_axis_shape(const Ctx& c, const char* what) {
    c.need_inputs(1, 1, "x");
    c.need_rank_at_least(0, 1, what);
    c.axis(c.attr_int("axis", -1), c.shape(0).size(), "axis");
    return c.shape(0);
}

Shape global_avg_pool_shape(const Ctx& c) {
    c.need_inputs(1, 1, "x");
    c.need_rank_at_least(0, 3, "[N,C,spatial...]");
    Shape out = c.shape(0);
    std::fill(out.begin() + 2, out.end(), 1);
    return out;
}

Shape where_shape(const Ctx& c) {
    c.need_inputs(3, 3, "x, y, condition");
    Shape xy, out;
    if (!broadcast_shapes(c.shape(0), c.shape(1), xy) || !broadcast_shapes(xy, c.shape(2), out))
        bad("shapes of " + c.name(0) + ", " + c.name(1) + " and " + c.name(2) + " do not broadcast");
    return out;
}

Shape unique_shape(const Ctx& c) {
    // Output size is data-dependent: attrs.expected (default: all elements, the upper bound).
    c.need_inputs(1, 1, "x");
    const std::int64_t n = elements(c.shape(0));
    const std::int64_t e = c.attr_int("expected", n);
    if (e < 1 || e > n)
        bad("attrs.expected: must be in [1, " + std::to_string(n) + "] (the input's elements), got " +
            std::to_string(e));
    if (c.node().op == OpType::Unique) return {e};
    return {static_cast<std::int64_t>(c.shape(0).size()), e};
}

Shape scatter_nd_shape(const Ctx& c) {
    c.need_inputs(3, 3, "data, indices, updates");
    return c.shape(0);
}

Shape infer(const Graph& g, const Node& n) {
    const Ctx c(g, n);
    switch (n.op) {
        case OpType::Dispatch:
        case OpType::Combine: comm_optimized(n, true); [[fallthrough]];  // checks attrs.variant
        case OpType::AllReduce:
        case OpType::AllGather:
        case OpType::ReduceScatter:
        case OpType::AllToAll:
        case OpType::GroupedMatMul: return comm_shape(g, n);
        case OpType::Conv2D: return conv2d(c);
        case OpType::BatchNorm:
            return batch_norm_shape(c);
        case OpType::ReLU:
        case OpType::GELU:
        case OpType::Sigmoid:
        case OpType::Exp:
        case OpType::Sqrt:
        case OpType::Tanh:
        case OpType::Erf:
        case OpType::Abs:
        case OpType::Neg:
        case OpType::Reciprocal:
        case OpType::Clip:
        case OpType::LeakyReLU:
        case OpType::HardSigmoid:
        case OpType::HardSwish:
        case OpType::SiLU:
        case OpType::FormatConvert:
        case OpType::Quantize:
        case OpType::Dequantize:
        case OpType::Cast:
            return same_shape(c);
        case OpType::Add:
        case OpType::Mul:
        case OpType::Sub:
        case OpType::Div:
        case OpType::Max:
        case OpType::Min:
        case OpType::Pow:
            return broadcast_binary(c);
        case OpType::MatMul: return matmul(c, false);
        case OpType::BatchMatMul: return matmul(c, true);
        case OpType::LayerNorm:
        case OpType::RMSNorm:
            return layer_norm_shape(c);
        case OpType::Softmax:
            return along_axis_shape(c, "softmax axis");
        case OpType::MaxPool:
        case OpType::AvgPool: return pool(c);
        case OpType::GlobalAvgPool:
            return global_avg_pool_shape(c);
        case OpType::Concat: return concat(c);
        case OpType::Reshape: return reshape(c);
        case OpType::Transpose: return transpose(c);
        case OpType::ReduceSum:
        case OpType::ReduceMean:
        case OpType::ReduceMax: return reduce_sum(c);
        case OpType::Where:
            return where_shape(c);
        case OpType::Gather: return gather(c);
        case OpType::Slice: return slice(c);
        case OpType::Attention: return attention(c);
        case OpType::RoPE: return rope(c);
        case OpType::MoEGate: return moe_gate(c);
        case OpType::MLAttention: return ml_attention(c);
        case OpType::Pad: return pad(c);
        case OpType::Resize: return resize(c);
        case OpType::TopK: return select(c, false);
        case OpType::ArgMax: return select(c, true);
        case OpType::GroupNorm: return group_norm(c);
        case OpType::ScatterND:
            return scatter_nd_shape(c);
        case OpType::CumSum:
            return along_axis_shape(c, "the summed axis");
        case OpType::Unique:
        case OpType::NonZero:
            return unique_shape(c);
    }
    bad("unsupported op");
}

bool dtype_named(const std::string& s, DType& out) {
    for (const DType d : {DType::fp16, DType::bf16, DType::int8, DType::fp32})
        if (s == to_string(d)) {
            out = d;
            return true;
        }
    return false;
}

DType dtype_attr(const Node& n, DType fallback) {
    const auto it = n.attrs.find("dtype");
    if (it == n.attrs.end()) return fallback;
    DType d{};
    if (it->second.kind != Attr::Kind::string || !dtype_named(it->second.s, d))
        bad("attrs.dtype: expected one of fp16, bf16, int8, fp32");
    return d;
}

DType infer_type(const Graph& g, const Node& n) {
    const Ctx c(g, n);
    if (c.count() == 0) bad(std::string(to_string(n.op)) + " has no inputs");
    if (is_comm_op(n.op) || n.op == OpType::GroupedMatMul) return comm_dtype(g, n);
    const DType first = c.in(0).dtype;
    auto same = [&](std::size_t lo, std::size_t hi) {
        for (std::size_t i = lo; i < std::min(hi, c.count()); ++i)
            if (c.in(i).dtype != first)
                bad(std::string("dtype mismatch: '") + c.in(0).name + "' is " + to_string(first) + " but '" +
                    c.in(i).name + "' is " + to_string(c.in(i).dtype));
    };
    switch (n.op) {
        case OpType::Quantize: {
            if (first == DType::int8) bad("Quantize input '" + c.in(0).name + "' is already int8");
            const DType d = dtype_attr(n, DType::int8);
            if (d != DType::int8) bad("attrs.dtype: Quantize produces int8");
            return d;
        }
        case OpType::Dequantize: {
            if (first != DType::int8) bad("Dequantize input '" + c.in(0).name + "' must be int8, got " + to_string(first));
            const DType d = dtype_attr(n, DType::fp16);
            if (d == DType::int8) bad("attrs.dtype: Dequantize produces fp16, bf16 or fp32");
            return d;
        }
        case OpType::Cast: {
            const auto it = n.attrs.find("dtype");
            if (it == n.attrs.end()) bad("attrs.dtype: Cast needs the target dtype (fp16, bf16, int8, fp32)");
            return dtype_attr(n, first);
        }
        case OpType::MatMul:
            if (c.count() == 3) {
                same(1, 2);
                return DType::bf16;  // an int8 product dequantised on its way out (FixPipe)
            }
            same(1, c.count());
            return first;
        case OpType::MoEGate: return DType::fp32;  // (expert, weight) per slot
        case OpType::MLAttention: return first;
        case OpType::Add:
        case OpType::Mul:
        case OpType::BatchMatMul:
        case OpType::Concat:
        case OpType::Sub:
        case OpType::Div:
        case OpType::Max:
        case OpType::Min:
        case OpType::Pow:
            same(1, c.count());
            return first;
        case OpType::Where: same(1, 2); return first;  // x, y (the condition is any dtype)
        case OpType::Conv2D: same(1, 2); return first;  // bias may be wider
        case OpType::NonZero:
        case OpType::ArgMax: return DType::fp32;         // indices (stand-in for int32)
        case OpType::Attention:
            same(1, seq_major(n) ? 5 : 3);
            return first;  // BSND: no mask
        case OpType::ScatterND:
            if (c.in(2).dtype != first)
                bad("dtype mismatch: data '" + c.in(0).name + "' is " + to_string(first) + " but updates '" + c.in(2).name +
                    "' are " + to_string(c.in(2).dtype));
            return first;
        default: return first;
    }
}

}  // namespace

bool broadcast_shapes(const Shape& a, const Shape& b, Shape& out) {
    const std::size_t r = std::max(a.size(), b.size());
    Shape o(r);
    for (std::size_t i = 0; i < r; ++i) {
        const std::int64_t da = i < r - a.size() ? 1 : a[i - (r - a.size())];
        const std::int64_t db = i < r - b.size() ? 1 : b[i - (r - b.size())];
        if (da != db && da != 1 && db != 1) return false;
        o[i] = da == 1 ? db : da;
    }
    out = std::move(o);
    return true;
}

Shape infer_shape(const Graph& g, const Node& n, std::string& error) {
    error.clear();
    try {
        return infer(g, n);
    } catch (const Bad& b) {
        error = b.what;
    } catch (const CommError& e) {
        error = e.what();
    } catch (const std::out_of_range&) {
        error = "input index out of range";
    }
    return {};
}

DType infer_dtype(const Graph& g, const Node& n, std::string& error) {
    error.clear();
    try {
        return infer_type(g, n);
    } catch (const Bad& b) {
        error = b.what;
    } catch (const CommError& e) {
        error = e.what();
    } catch (const std::out_of_range&) {
        error = "input index out of range";
    }
    return DType::fp16;
}

std::vector<SliceAxis> slice_axes(const Node& n, const Shape& in, std::string& error) {
    error.clear();
    std::vector<SliceAxis> out;
    try {
        const auto starts = n.attr_ints("starts", {}), ends = n.attr_ints("ends", {});
        if (starts.empty() || starts.size() != ends.size()) {
            error = "attrs.starts and attrs.ends: required, one entry per sliced axis";
            return {};
        }
        std::vector<std::int64_t> axes = n.attr_ints("axes", {});
        if (axes.empty())
            for (std::size_t i = 0; i < starts.size(); ++i) axes.push_back(static_cast<std::int64_t>(i));
        const auto steps = n.attr_ints("steps", std::vector<std::int64_t>(starts.size(), 1));
        if (axes.size() != starts.size() || steps.size() != starts.size()) {
            error = "attrs.axes and attrs.steps must have one entry per entry of attrs.starts";
            return {};
        }
        const auto rank = static_cast<std::int64_t>(in.size());
        std::vector<bool> seen(in.size(), false);
        for (std::size_t i = 0; i < starts.size(); ++i) {
            if (axes[i] < -rank || axes[i] >= rank) {
                error = "attrs.axes: axis " + std::to_string(axes[i]) + " is out of range for a " +
                        std::to_string(rank) + "-D input (valid: " + std::to_string(-rank) + " to " +
                        std::to_string(rank - 1) + ")";
                return {};
            }
            const int ax = static_cast<int>(axes[i] < 0 ? axes[i] + rank : axes[i]);
            if (seen[static_cast<std::size_t>(ax)]) {
                error = "attrs.axes: axis " + std::to_string(ax) + " is sliced twice";
                return {};
            }
            seen[static_cast<std::size_t>(ax)] = true;
            if (steps[i] < 1) {
                error = "attrs.steps: must be >= 1, got " + std::to_string(steps[i]);
                return {};
            }
            const std::int64_t d = in[static_cast<std::size_t>(ax)];
            const auto clampd = [d](std::int64_t v) { return std::clamp<std::int64_t>(v < 0 ? v + d : v, 0, d); };
            const SliceAxis a{ax, clampd(starts[i]), clampd(ends[i]), steps[i]};
            if (a.end <= a.begin) {
                error = "attrs: slice " + std::to_string(starts[i]) + ":" + std::to_string(ends[i]) + " of axis " +
                        std::to_string(ax) + " is empty";
                return {};
            }
            out.push_back(a);
        }
    } catch (const std::exception&) {
        error = "attrs.starts, ends, axes and steps: expected lists of integers";
        return {};
    }
    return out;
}

}  // namespace npusim::compiler
