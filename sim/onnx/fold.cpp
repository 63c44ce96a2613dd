#include "onnx/fold.hpp"

#include <algorithm>
#include <cmath>
#include <functional>
#include <limits>
#include <numeric>
#include <string>

namespace npusim::onnx_import {
namespace {

using TP = ::onnx::TensorProto;
using Shape = std::vector<std::int64_t>;

std::int64_t count(const Shape& s) {
    std::int64_t n = 1;
    for (const auto d : s) {
        if (d < 0) return -1;
        if (d > 0 && n > kMaxFoldElements) return kMaxFoldElements + 1;
        n *= d;
    }
    return n;
}

bool is_int_type(int t) { return t != TP::FLOAT && t != TP::DOUBLE && t != TP::FLOAT16 && t != TP::BFLOAT16; }

bool broadcast(const std::vector<Shape>& shapes, Shape& out) {
    std::size_t rank = 0;
    for (const auto& s : shapes) rank = std::max(rank, s.size());
    out.assign(rank, 1);
    for (const auto& s : shapes)
        for (std::size_t i = 0; i < s.size(); ++i) {
            std::int64_t& o = out[rank - s.size() + i];
            const std::int64_t d = s[i];
            if (d == o || d == 1) continue;
            if (o != 1) return false;
            o = d;
        }
    return true;
}

// The flat index into `s` (right-aligned in `out`'s rank) of output element `flat`.
std::int64_t source_index(const Shape& s, const Shape& out, std::int64_t flat) {
    std::int64_t idx = 0, stride = 1;
    for (std::size_t k = out.size(); k-- > 0;) {
        const std::int64_t coord = flat % out[k];
        flat /= out[k];
        const std::size_t off = out.size() - s.size();
        if (k >= off) {
            const std::int64_t d = s[k - off];
            idx += (d == 1 ? 0 : coord) * stride;
            stride *= d;
        }
    }
    return idx;
}

bool elementwise(const std::vector<const ConstValue*>& in, int out_type,
                 const std::function<double(const std::vector<double>&)>& f, ConstValue& out) {
    std::vector<Shape> shapes;
    for (const auto* v : in) {
        if (!v || !v->has_data) return false;
        shapes.push_back(v->shape);
    }
    Shape shape;
    if (!broadcast(shapes, shape)) return false;
    const std::int64_t n = count(shape);
    if (n < 0 || n > kMaxFoldElements) return false;
    out.shape = shape;
    out.elem_type = out_type;
    out.has_data = true;
    out.data.resize(static_cast<std::size_t>(n));
    std::vector<double> args(in.size());
    for (std::int64_t i = 0; i < n; ++i) {
        for (std::size_t a = 0; a < in.size(); ++a)
            args[a] = in[a]->data[static_cast<std::size_t>(source_index(in[a]->shape, shape, i))];
        out.data[static_cast<std::size_t>(i)] = f(args);
    }
    return true;
}

int checked_axis(std::int64_t a, std::size_t rank) {
    const auto r = static_cast<std::int64_t>(rank);
    if (a < 0) a += r;
    return a < 0 || a >= std::max<std::int64_t>(r, 1) ? -1 : static_cast<int>(a);
}

const ConstValue* value(const std::vector<Operand>& in, std::size_t i) {
    return i < in.size() && in[i].value && in[i].value->has_data ? in[i].value : nullptr;
}

// Axes from an attribute (older opsets) or an input (newer).
bool axes_of(const ::onnx::NodeProto& n, const std::vector<Operand>& in, std::size_t input, std::vector<std::int64_t>& axes,
             bool& given) {
    given = false;
    if (const auto* a = find_attr(n, "axes")) {
        axes.assign(a->ints().begin(), a->ints().end());
        given = true;
        return true;
    }
    if (input < in.size() && n.input(static_cast<int>(input)).size()) {
        const ConstValue* v = value(in, input);
        if (!v) return false;
        axes = v->ints();
        given = true;
    }
    return true;
}

// Data unchanged, shape new: Reshape, Flatten, Squeeze, Unsqueeze, Identity.
bool relabel(const ConstValue& x, const Shape& shape, ConstValue& out) {
    if (count(shape) != x.elements()) return false;
    out = x;
    out.shape = shape;
    return true;
}

bool reshape_target(const Shape& x, const std::vector<std::int64_t>& target, bool allowzero, Shape& out) {
    out.clear();
    std::int64_t known = 1;
    int infer = -1;
    for (std::size_t i = 0; i < target.size(); ++i) {
        std::int64_t d = target[i];
        if (d == 0 && !allowzero) {
            if (i >= x.size()) return false;
            d = x[i];
        }
        if (d == -1) {
            if (infer >= 0) return false;
            infer = static_cast<int>(i);
            out.push_back(1);
            continue;
        }
        if (d < 0) return false;
        known *= d;
        out.push_back(d);
    }
    const std::int64_t total = count(x);
    if (infer >= 0) {
        if (known == 0 || total % known) return false;
        out[static_cast<std::size_t>(infer)] = total / known;
    }
    return count(out) == total;
}

double cast_to(double v, int type) {
    switch (type) {
        case TP::BOOL: return v != 0 ? 1 : 0;
        case TP::FLOAT:
        case TP::DOUBLE:
        case TP::FLOAT16:
        case TP::BFLOAT16: return v;
        default: return std::trunc(v);
    }
}

}  // namespace

const ::onnx::AttributeProto* find_attr(const ::onnx::NodeProto& n, const char* name) {
    for (const auto& a : n.attribute())
        if (a.name() == name) return &a;
    return nullptr;
}

std::int64_t attr_int(const ::onnx::NodeProto& n, const char* name, std::int64_t fallback) {
    const auto* a = find_attr(n, name);
    return a ? a->i() : fallback;
}

double attr_float(const ::onnx::NodeProto& n, const char* name, double fallback) {
    const auto* a = find_attr(n, name);
    return a ? a->f() : fallback;
}

std::vector<std::int64_t> attr_ints(const ::onnx::NodeProto& n, const char* name, std::vector<std::int64_t> fallback) {
    const auto* a = find_attr(n, name);
    if (!a) return fallback;
    return {a->ints().begin(), a->ints().end()};
}

bool fold_node(const ::onnx::NodeProto& n, const std::vector<Operand>& in, const Shape* inferred, int opset,
               ConstValue& out) {
    const std::string& op = n.op_type();
    const ConstValue* x = value(in, 0);
    const int type0 = x ? x->elem_type : TP::INT64;
    out = ConstValue{};

    if (op == "Constant") {
        if (const auto* a = find_attr(n, "value")) {
            out = decode_tensor(a->t(), ".");
            return out.has_data || !out.shape.empty() || a->t().dims_size() == 0;
        }
        if (const auto* a = find_attr(n, "value_float")) out = ConstValue{{}, TP::FLOAT, true, {a->f()}};
        else if (const auto* a = find_attr(n, "value_int")) out = ConstValue{{}, TP::INT64, true, {double(a->i())}};
        else if (const auto* a = find_attr(n, "value_floats")) {
            out = ConstValue{{a->floats_size()}, TP::FLOAT, true, {a->floats().begin(), a->floats().end()}};
        } else if (const auto* a = find_attr(n, "value_ints")) {
            out = ConstValue{{a->ints_size()}, TP::INT64, true, {}};
            for (const auto v : a->ints()) out.data.push_back(static_cast<double>(v));
        } else return false;
        return true;
    }
    if (op == "Shape") {
        if (in.empty() || !in[0].shape) return false;
        const Shape& s = *in[0].shape;
        const auto r = static_cast<std::int64_t>(s.size());
        std::int64_t start = opset >= 15 ? attr_int(n, "start", 0) : 0;
        std::int64_t end = opset >= 15 ? attr_int(n, "end", r) : r;
        if (start < 0) start += r;
        if (end < 0) end += r;
        start = std::clamp<std::int64_t>(start, 0, r);
        end = std::clamp<std::int64_t>(end, 0, r);
        out.elem_type = TP::INT64;
        out.has_data = true;
        for (std::int64_t i = start; i < end; ++i) {
            if (s[static_cast<std::size_t>(i)] < 0) return false;
            out.data.push_back(static_cast<double>(s[static_cast<std::size_t>(i)]));
        }
        out.shape = {static_cast<std::int64_t>(out.data.size())};
        return true;
    }
    if (op == "Size") {
        if (in.empty() || !in[0].shape || count(*in[0].shape) < 0) return false;
        std::int64_t total = 1;
        for (const auto d : *in[0].shape) total *= d;
        out = ConstValue{{}, TP::INT64, true, {static_cast<double>(total)}};
        return true;
    }
    if (!x && op != "Range" && op != "Where") return false;

    if (op == "Identity") { out = *x; return true; }
    if (op == "Cast") {
        const int to = static_cast<int>(attr_int(n, "to", TP::FLOAT));
        out = *x;
        out.elem_type = to;
        for (double& d : out.data) d = cast_to(d, to);
        return true;
    }
    if (op == "Reshape" || op == "Flatten" || op == "Squeeze" || op == "Unsqueeze") {
        Shape shape;
        if (inferred && count(*inferred) >= 0) shape = *inferred;
        else if (op == "Reshape") {
            const ConstValue* t = value(in, 1);
            if (!t || !reshape_target(x->shape, t->ints(), attr_int(n, "allowzero", 0) != 0, shape)) return false;
        } else if (op == "Flatten") {
            const int axis = checked_axis(attr_int(n, "axis", 1), x->shape.size() + 1);
            if (axis < 0) return false;
            std::int64_t a = 1, b = 1;
            for (std::size_t i = 0; i < x->shape.size(); ++i) (static_cast<int>(i) < axis ? a : b) *= x->shape[i];
            shape = {a, b};
        } else {
            std::vector<std::int64_t> axes;
            bool given = false;
            if (!axes_of(n, in, 1, axes, given)) return false;
            if (op == "Squeeze") {
                std::vector<bool> drop(x->shape.size(), false);
                for (const auto a : axes) {
                    const int k = checked_axis(a, x->shape.size());
                    if (k < 0) return false;
                    drop[static_cast<std::size_t>(k)] = true;
                }
                for (std::size_t i = 0; i < x->shape.size(); ++i)
                    if (!(given ? drop[i] : x->shape[i] == 1)) shape.push_back(x->shape[i]);
            } else {
                const std::size_t rank = x->shape.size() + axes.size();
                std::vector<bool> ins(rank, false);
                for (const auto a : axes) {
                    const int k = checked_axis(a, rank);
                    if (k < 0) return false;
                    ins[static_cast<std::size_t>(k)] = true;
                }
                std::size_t j = 0;
                for (std::size_t i = 0; i < rank; ++i) shape.push_back(ins[i] ? 1 : x->shape.at(j++));
            }
        }
        return relabel(*x, shape, out);
    }
    if (op == "Gather") {
        const ConstValue* idx = value(in, 1);
        if (!idx) return false;
        const int axis = checked_axis(attr_int(n, "axis", 0), x->shape.size());
        if (axis < 0) return false;
        const Shape& s = x->shape;
        std::int64_t outer = 1, inner = 1;
        for (int i = 0; i < axis; ++i) outer *= s[static_cast<std::size_t>(i)];
        for (std::size_t i = static_cast<std::size_t>(axis) + 1; i < s.size(); ++i) inner *= s[i];
        const std::int64_t dim = s[static_cast<std::size_t>(axis)];
        Shape shape(s.begin(), s.begin() + axis);
        shape.insert(shape.end(), idx->shape.begin(), idx->shape.end());
        shape.insert(shape.end(), s.begin() + axis + 1, s.end());
        if (count(shape) < 0 || count(shape) > kMaxFoldElements) return false;
        out.shape = shape;
        out.elem_type = x->elem_type;
        out.has_data = true;
        const auto ids = idx->ints();
        for (std::int64_t o = 0; o < outer; ++o)
            for (std::int64_t k : ids) {
                if (k < 0) k += dim;
                if (k < 0 || k >= dim) return false;
                for (std::int64_t i = 0; i < inner; ++i)
                    out.data.push_back(x->data[static_cast<std::size_t>((o * dim + k) * inner + i)]);
            }
        return true;
    }
    if (op == "Concat") {
        const int axis = checked_axis(attr_int(n, "axis", 0), x->shape.size());
        if (axis < 0) return false;
        Shape shape = x->shape;
        shape[static_cast<std::size_t>(axis)] = 0;
        for (std::size_t i = 0; i < in.size(); ++i) {
            const ConstValue* v = value(in, i);
            if (!v || v->shape.size() != x->shape.size()) return false;
            for (std::size_t d = 0; d < x->shape.size(); ++d)
                if (static_cast<int>(d) != axis && v->shape[d] != x->shape[d]) return false;
            shape[static_cast<std::size_t>(axis)] += v->shape[static_cast<std::size_t>(axis)];
        }
        std::int64_t outer = 1;
        for (int i = 0; i < axis; ++i) outer *= shape[static_cast<std::size_t>(i)];
        out.shape = shape;
        out.elem_type = x->elem_type;
        out.has_data = true;
        for (std::int64_t o = 0; o < outer; ++o)
            for (std::size_t i = 0; i < in.size(); ++i) {
                const ConstValue* v = value(in, i);
                const std::int64_t chunk = outer ? v->elements() / outer : 0;
                out.data.insert(out.data.end(), v->data.begin() + o * chunk, v->data.begin() + (o + 1) * chunk);
            }
        return true;
    }
    if (op == "ConstantOfShape") {
        const Shape shape = x->ints();
        const std::int64_t c = count(shape);
        if (c < 0 || c > kMaxFoldElements) return false;
        double fill = 0;
        int type = TP::FLOAT;
        if (const auto* a = find_attr(n, "value")) {
            const ConstValue v = decode_tensor(a->t(), ".");
            if (!v.has_data || v.data.empty()) return false;
            fill = v.data[0];
            type = v.elem_type;
        }
        out = ConstValue{shape, type, true, std::vector<double>(static_cast<std::size_t>(c), fill)};
        return true;
    }
    if (op == "Expand") {
        const ConstValue* t = value(in, 1);
        if (!t) return false;
        std::vector<Shape> shapes = {x->shape, t->ints()};
        Shape shape;
        if (!broadcast(shapes, shape) || count(shape) < 0 || count(shape) > kMaxFoldElements) return false;
        out.shape = shape;
        out.elem_type = x->elem_type;
        out.has_data = true;
        for (std::int64_t i = 0; i < count(shape); ++i)
            out.data.push_back(x->data[static_cast<std::size_t>(source_index(x->shape, shape, i))]);
        return true;
    }
    if (op == "Slice") {
        const ConstValue *st = value(in, 1), *en = value(in, 2);
        if (opset < 10 || !st || !en) return false;
        const ConstValue* ax = in.size() > 3 && n.input(3).size() ? value(in, 3) : nullptr;
        const ConstValue* sp = in.size() > 4 && n.input(4).size() ? value(in, 4) : nullptr;
        if ((in.size() > 3 && n.input(3).size() && !ax) || (in.size() > 4 && n.input(4).size() && !sp)) return false;
        const Shape& s = x->shape;
        std::vector<std::int64_t> lo(s.size(), 0), step(s.size(), 1), len(s.begin(), s.end());
        const auto starts = st->ints(), ends = en->ints();
        for (std::size_t i = 0; i < starts.size(); ++i) {
            const int a = checked_axis(ax ? ax->int_at(i) : static_cast<std::int64_t>(i), s.size());
            if (a < 0 || i >= ends.size()) return false;
            const std::int64_t d = s[static_cast<std::size_t>(a)];
            const std::int64_t k = sp ? sp->int_at(i) : 1;
            if (k == 0) return false;
            std::int64_t b = starts[i], e = ends[i];
            if (b < 0) b += d;
            if (e < 0 && e > std::numeric_limits<std::int64_t>::min() / 2) e += d;
            if (k > 0) {
                b = std::clamp<std::int64_t>(b, 0, d);
                e = std::clamp<std::int64_t>(e, 0, d);
                len[static_cast<std::size_t>(a)] = e > b ? (e - b + k - 1) / k : 0;
            } else {
                b = std::clamp<std::int64_t>(b, -1, d - 1);
                e = std::clamp<std::int64_t>(e, -1, d - 1);
                len[static_cast<std::size_t>(a)] = b > e ? (b - e + (-k) - 1) / (-k) : 0;
            }
            lo[static_cast<std::size_t>(a)] = b;
            step[static_cast<std::size_t>(a)] = k;
        }
        const Shape shape(len.begin(), len.end());
        const std::int64_t c = count(shape);
        if (c < 0 || c > kMaxFoldElements) return false;
        out.shape = shape;
        out.elem_type = x->elem_type;
        out.has_data = true;
        for (std::int64_t i = 0; i < c; ++i) {
            std::int64_t flat = i, src = 0, stride = 1;
            for (std::size_t k = shape.size(); k-- > 0;) {
                const std::int64_t coord = flat % shape[k];
                flat /= shape[k];
                src += (lo[k] + coord * step[k]) * stride;
                stride *= s[k];
            }
            out.data.push_back(x->data[static_cast<std::size_t>(src)]);
        }
        return true;
    }
    if (op == "Range") {
        const ConstValue *a = value(in, 0), *b = value(in, 1), *d = value(in, 2);
        if (!a || !b || !d || a->data.empty() || b->data.empty() || d->data.empty() || d->data[0] == 0) return false;
        const double c = std::max(0.0, std::ceil((b->data[0] - a->data[0]) / d->data[0]));
        if (c > static_cast<double>(kMaxFoldElements)) return false;
        out = ConstValue{{static_cast<std::int64_t>(c)}, a->elem_type, true, {}};
        for (std::int64_t i = 0; i < static_cast<std::int64_t>(c); ++i) out.data.push_back(a->data[0] + i * d->data[0]);
        return true;
    }
    if (op == "Transpose") {
        const Shape& s = x->shape;
        std::vector<std::int64_t> perm = attr_ints(n, "perm", {});
        if (perm.empty())
            for (std::size_t i = s.size(); i-- > 0;) perm.push_back(static_cast<std::int64_t>(i));
        if (perm.size() != s.size()) return false;
        Shape shape;
        for (const auto p : perm) {
            if (p < 0 || p >= static_cast<std::int64_t>(s.size())) return false;
            shape.push_back(s[static_cast<std::size_t>(p)]);
        }
        std::vector<std::int64_t> in_stride(s.size(), 1);
        for (std::size_t k = s.size(); k-- > 1;) in_stride[k - 1] = in_stride[k] * s[k];
        out.shape = shape;
        out.elem_type = x->elem_type;
        out.has_data = true;
        for (std::int64_t i = 0; i < x->elements(); ++i) {
            std::int64_t flat = i, src = 0;
            for (std::size_t k = shape.size(); k-- > 0;) {
                src += (flat % shape[k]) * in_stride[static_cast<std::size_t>(perm[k])];
                flat /= shape[k];
            }
            out.data.push_back(x->data[static_cast<std::size_t>(src)]);
        }
        return true;
    }
    if (op == "ReduceProd" || op == "ReduceSum" || op == "ReduceMin" || op == "ReduceMax") {
        std::vector<std::int64_t> axes;
        bool given = false;
        if (!axes_of(n, in, 1, axes, given)) return false;
        const Shape& s = x->shape;
        std::vector<bool> red(s.size(), !given || axes.empty());
        if (given && axes.empty() && attr_int(n, "noop_with_empty_axes", 0)) { out = *x; return true; }
        for (const auto a : axes) {
            const int k = checked_axis(a, s.size());
            if (k < 0) return false;
            red[static_cast<std::size_t>(k)] = true;
        }
        const bool keep = attr_int(n, "keepdims", 1) != 0;
        Shape kept, shape;
        for (std::size_t i = 0; i < s.size(); ++i) {
            kept.push_back(red[i] ? 1 : s[i]);
            if (!red[i]) shape.push_back(s[i]);
            else if (keep) shape.push_back(1);
        }
        std::vector<double> acc(static_cast<std::size_t>(count(kept)),
                                op == "ReduceProd" ? 1.0 : op == "ReduceSum" ? 0.0
                                : op == "ReduceMin" ? HUGE_VAL : -HUGE_VAL);
        for (std::int64_t i = 0; i < x->elements(); ++i) {
            std::int64_t flat = i, dst = 0, stride = 1;
            for (std::size_t k = s.size(); k-- > 0;) {
                const std::int64_t coord = flat % s[k];
                flat /= s[k];
                if (!red[k]) dst += coord * stride;
                stride *= kept[k];
            }
            double& a = acc[static_cast<std::size_t>(dst)];
            const double v = x->data[static_cast<std::size_t>(i)];
            a = op == "ReduceProd" ? a * v : op == "ReduceSum" ? a + v : op == "ReduceMin" ? std::min(a, v) : std::max(a, v);
        }
        out = ConstValue{shape, x->elem_type, true, acc};
        return true;
    }
    if (op == "Tile") {
        const ConstValue* r = value(in, 1);
        if (!r || r->data.size() != x->shape.size()) return false;
        Shape shape;
        for (std::size_t i = 0; i < x->shape.size(); ++i) shape.push_back(x->shape[i] * r->int_at(i));
        const std::int64_t c = count(shape);
        if (c < 0 || c > kMaxFoldElements) return false;
        out = ConstValue{shape, x->elem_type, true, {}};
        for (std::int64_t i = 0; i < c; ++i) {
            std::int64_t flat = i, src = 0, stride = 1;
            for (std::size_t k = shape.size(); k-- > 0;) {
                src += ((flat % shape[k]) % x->shape[k]) * stride;
                flat /= shape[k];
                stride *= x->shape[k];
            }
            out.data.push_back(x->data[static_cast<std::size_t>(src)]);
        }
        return true;
    }

    // Element-wise.
    std::vector<const ConstValue*> args;
    for (std::size_t i = 0; i < in.size(); ++i) args.push_back(value(in, i));
    const bool ints = is_int_type(type0);
    using V = const std::vector<double>&;
    const int boolean = TP::BOOL;
    if (op == "Add") return elementwise(args, type0, [](V a) { return a[0] + a[1]; }, out);
    if (op == "Sub") return elementwise(args, type0, [](V a) { return a[0] - a[1]; }, out);
    if (op == "Mul") return elementwise(args, type0, [](V a) { return a[0] * a[1]; }, out);
    if (op == "Div")
        return elementwise(args, type0, [ints](V a) {
            if (ints) return a[1] == 0 ? 0.0 : std::trunc(a[0] / a[1]);
            return a[0] / a[1];
        }, out);
    if (op == "Mod")
        return elementwise(args, type0, [](V a) { return a[1] == 0 ? 0.0 : a[0] - a[1] * std::floor(a[0] / a[1]); }, out);
    if (op == "Pow") return elementwise(args, type0, [](V a) { return std::pow(a[0], a[1]); }, out);
    if (op == "Equal") return elementwise(args, boolean, [](V a) { return a[0] == a[1] ? 1.0 : 0.0; }, out);
    if (op == "Less") return elementwise(args, boolean, [](V a) { return a[0] < a[1] ? 1.0 : 0.0; }, out);
    if (op == "Greater") return elementwise(args, boolean, [](V a) { return a[0] > a[1] ? 1.0 : 0.0; }, out);
    if (op == "LessOrEqual") return elementwise(args, boolean, [](V a) { return a[0] <= a[1] ? 1.0 : 0.0; }, out);
    if (op == "GreaterOrEqual") return elementwise(args, boolean, [](V a) { return a[0] >= a[1] ? 1.0 : 0.0; }, out);
    if (op == "And") return elementwise(args, boolean, [](V a) { return a[0] != 0 && a[1] != 0 ? 1.0 : 0.0; }, out);
    if (op == "Or") return elementwise(args, boolean, [](V a) { return a[0] != 0 || a[1] != 0 ? 1.0 : 0.0; }, out);
    if (op == "Not") return elementwise(args, boolean, [](V a) { return a[0] != 0 ? 0.0 : 1.0; }, out);
    if (op == "Max") return elementwise(args, type0, [](V a) { return *std::max_element(a.begin(), a.end()); }, out);
    if (op == "Min") return elementwise(args, type0, [](V a) { return *std::min_element(a.begin(), a.end()); }, out);
    if (op == "Neg") return elementwise(args, type0, [](V a) { return -a[0]; }, out);
    if (op == "Abs") return elementwise(args, type0, [](V a) { return std::fabs(a[0]); }, out);
    if (op == "Floor") return elementwise(args, type0, [](V a) { return std::floor(a[0]); }, out);
    if (op == "Ceil") return elementwise(args, type0, [](V a) { return std::ceil(a[0]); }, out);
    if (op == "Sqrt") return elementwise(args, type0, [](V a) { return std::sqrt(a[0]); }, out);
    if (op == "Reciprocal") return elementwise(args, type0, [](V a) { return 1.0 / a[0]; }, out);
    if (op == "Relu") return elementwise(args, type0, [](V a) { return std::max(0.0, a[0]); }, out);
    if (op == "Sign") return elementwise(args, type0, [](V a) { return double((a[0] > 0) - (a[0] < 0)); }, out);
    if (op == "Where") {
        if (in.size() != 3 || !value(in, 0) || !value(in, 1) || !value(in, 2)) return false;
        return elementwise(args, value(in, 1)->elem_type, [](V a) { return a[0] != 0 ? a[1] : a[2]; }, out);
    }
    return false;
}

}  // namespace npusim::onnx_import
