#include "compiler/graph_reader.hpp"

#include <algorithm>
#include <cctype>
#include <cmath>
#include <filesystem>
#include <functional>
#include <queue>
#include <unordered_map>

#include <nlohmann/json.hpp>

#include "common/did_you_mean.hpp"
#include "common/errors.hpp"
#include "common/json_file.hpp"
#include "compiler/comm_ops.hpp"
#include "compiler/shape_inference.hpp"

namespace npusim::compiler {
namespace {

using ojson = nlohmann::ordered_json;
namespace fs = std::filesystem;

const std::vector<std::string> kTopKeys = {"kind", "name", "notes", "dims", "workload", "tensors", "nodes", "outputs"};
const std::vector<std::string> kTensorKeys = {"shape", "dtype", "layout", "input", "const", "notes"};
const std::vector<std::string> kNodeKeys = {"name", "op", "inputs", "outputs", "attrs", "device", "cores", "notes"};
const std::vector<std::string> kDTypes = {"fp16", "bf16", "int8", "fp32"};
const std::vector<std::string> kLayouts = {"ND", "NCHW", "NC1HWC0", "FRACTAL_NZ"};

// What an attribute value may be.
enum class AttrType { Int, IntOrList, List, Number, String, StringOrList, IntOrMax };

const char* describe(AttrType t) {
    switch (t) {
        case AttrType::Int: return "an integer";
        case AttrType::IntOrList: return "an integer or a list of integers";
        case AttrType::List: return "a list of integers";
        case AttrType::Number: return "a number";
        case AttrType::String: return "a string";
        case AttrType::StringOrList: return "a string or a list of integers";
        case AttrType::IntOrMax: return "an integer or \"max\"";
    }
    return "?";
}

using AttrSpec = std::vector<std::pair<std::string, AttrType>>;

const AttrSpec& attr_spec(OpType op) {
    static const AttrSpec none;
    static const AttrSpec conv = {{"kernel", AttrType::IntOrList}, {"stride", AttrType::IntOrList},
                                  {"pad", AttrType::IntOrList},    {"dilation", AttrType::IntOrList},
                                  {"groups", AttrType::Int}};
    static const AttrSpec bn = {{"epsilon", AttrType::Number}, {"momentum", AttrType::Number}};
    static const AttrSpec ln = {{"axis", AttrType::Int}, {"epsilon", AttrType::Number}};
    static const AttrSpec axis = {{"axis", AttrType::Int}};
    static const AttrSpec mm = {{"transpose_a", AttrType::Int}, {"transpose_b", AttrType::Int}};
    static const AttrSpec pool = {{"kernel", AttrType::IntOrList}, {"stride", AttrType::IntOrList},
                                  {"pad", AttrType::IntOrList}};
    static const AttrSpec reshape = {{"shape", AttrType::List}};
    static const AttrSpec transpose = {{"perm", AttrType::List}};
    static const AttrSpec reduce = {{"axes", AttrType::IntOrList}, {"keepdims", AttrType::Int}};
    static const AttrSpec quant = {{"dtype", AttrType::String}, {"scale", AttrType::Number},
                                   {"zero_point", AttrType::Int}};
    static const AttrSpec gelu = {{"approximate", AttrType::String}};
    static const AttrSpec data_dependent = {{"expected", AttrType::IntOrList}};
    static const AttrSpec clip = {{"min", AttrType::Number}, {"max", AttrType::Number}};
    static const AttrSpec alpha = {{"alpha", AttrType::Number}};
    static const AttrSpec hard_sigmoid = {{"alpha", AttrType::Number}, {"beta", AttrType::Number}};
    static const AttrSpec slice = {{"starts", AttrType::List}, {"ends", AttrType::List}, {"axes", AttrType::List},
                                   {"steps", AttrType::List}};
    static const AttrSpec attention = {{"scale", AttrType::Number},
                                       {"k_transposed", AttrType::Int},
                                       {"causal", AttrType::Int},
                                       {"layout", AttrType::String}};
    static const AttrSpec ml_attention = {{"scale", AttrType::Number}, {"v_dim", AttrType::Int}, {"causal", AttrType::Int}};
    static const AttrSpec moe_gate = {{"top_k", AttrType::Int}, {"groups", AttrType::Int}, {"topk_groups", AttrType::Int}};
    static const AttrSpec pad = {{"pads", AttrType::List}, {"interior", AttrType::List}, {"mode", AttrType::String}};
    static const AttrSpec resize = {{"sizes", AttrType::List}, {"mode", AttrType::String}};
    static const AttrSpec topk = {{"k", AttrType::Int}, {"axis", AttrType::Int}};
    static const AttrSpec argmax = {{"axis", AttrType::Int}, {"keepdims", AttrType::Int}};
    static const AttrSpec group_norm = {{"groups", AttrType::Int}, {"epsilon", AttrType::Number}};
    static const AttrSpec collective = {{"algorithm", AttrType::String}, {"group", AttrType::StringOrList}};
    static const AttrSpec dispatch = {{"experts", AttrType::Int},     {"variant", AttrType::String},
                                      {"quantize", AttrType::String},  {"group", AttrType::StringOrList},
                                      {"seed", AttrType::Int},         {"capacity", AttrType::IntOrMax}};
    static const AttrSpec combine = {{"variant", AttrType::String}, {"group", AttrType::StringOrList}};
    static const AttrSpec grouped = {{"transpose_b", AttrType::Int}};
    static const AttrSpec cast = {{"dtype", AttrType::String}};
    static const AttrSpec cumsum = {{"axis", AttrType::Int}};
    switch (op) {
        case OpType::AllReduce:
        case OpType::AllGather:
        case OpType::ReduceScatter:
        case OpType::AllToAll: return collective;
        case OpType::Dispatch: return dispatch;
        case OpType::Combine: return combine;
        case OpType::GroupedMatMul: return grouped;
        case OpType::Attention: return attention;
        case OpType::MLAttention: return ml_attention;
        case OpType::MoEGate: return moe_gate;
        case OpType::RoPE: return none;
        case OpType::Pad: return pad;
        case OpType::Resize: return resize;
        case OpType::TopK: return topk;
        case OpType::ArgMax: return argmax;
        case OpType::GroupNorm: return group_norm;
        case OpType::Conv2D: return conv;
        case OpType::BatchNorm: return bn;
        case OpType::LayerNorm:
        case OpType::RMSNorm: return ln;
        case OpType::Softmax:
        case OpType::Concat: return axis;
        case OpType::MatMul:
        case OpType::BatchMatMul: return mm;
        case OpType::MaxPool:
        case OpType::AvgPool: return pool;
        case OpType::Reshape: return reshape;
        case OpType::Transpose: return transpose;
        case OpType::ReduceSum:
        case OpType::ReduceMean:
        case OpType::ReduceMax: return reduce;
        case OpType::Clip: return clip;
        case OpType::LeakyReLU: return alpha;
        case OpType::HardSigmoid: return hard_sigmoid;
        case OpType::Gather: return axis;
        case OpType::Slice: return slice;
        case OpType::Quantize:
        case OpType::Dequantize: return quant;
        case OpType::GELU: return gelu;
        case OpType::Cast: return cast;
        case OpType::CumSum: return cumsum;
        case OpType::Unique:
        case OpType::NonZero: return data_dependent;
        default: return none;
    }
}

std::string kind_name(const ojson& j) {
    if (j.is_null()) return "null";
    if (j.is_boolean()) return j.get<bool>() ? "true" : "false";
    if (j.is_number_integer() || j.is_number_unsigned()) return "integer " + j.dump();
    if (j.is_number_float()) return "number " + j.dump();
    if (j.is_string()) {
        std::string s = j.get<std::string>();
        if (s.size() > 40) s = s.substr(0, 37) + "...";
        return "string \"" + s + "\"";
    }
    if (j.is_array()) return "an array";
    return "an object";
}

std::string join(const std::vector<std::string>& v) {
    std::string r;
    for (std::size_t i = 0; i < v.size(); ++i) r += (i ? ", " : "") + v[i];
    return r;
}

bool is_identifier(const std::string& s) {
    if (s.empty() || std::isdigit(static_cast<unsigned char>(s[0]))) return false;
    return std::all_of(s.begin(), s.end(),
                       [](char c) { return std::isalnum(static_cast<unsigned char>(c)) || c == '_'; });
}

// ---------------------------------------------------------------------------

struct DeclaredTensor {
    bool has_shape = false;
    bool has_dtype = false;
    bool has_layout = false;
};

class Reader {
public:
    Reader(std::string file, const std::map<std::string, std::int64_t>& dims, const SpmdView& spmd)
        : file_(std::move(file)), given_(dims) {
        g_.spmd = spmd;
    }

    Graph read(const ojson& doc) {
        // An object: read_json_file checked the top level.
        check_keys(doc, kTopKeys, "");
        read_header(doc);
        read_dims(doc);
        read_tensors(doc);
        read_nodes(doc);
        link();
        read_outputs(doc);
        order();
        infer_all();
        finish();
        return std::move(g_);
    }

private:
    std::string file_;
    const std::map<std::string, std::int64_t>& given_;
    Graph g_;
    std::map<std::string, std::int64_t> dims_;
    std::vector<std::string> dim_names_;
    std::unordered_map<std::string, int> tensor_by_name_;
    std::vector<DeclaredTensor> declared_;  // per tensor index; only declared ones have flags
    std::vector<std::string> node_where_;   // per file-order node: "nodes[3] (conv1)"
    std::vector<std::vector<std::string>> node_inputs_, node_outputs_;  // names, file order
    std::vector<int> order_;                // file index of each topologically ordered node

    [[noreturn]] void fail(const std::string& where, const std::string& what) const {
        throw InputError(file_ + ": " + (where.empty() ? "" : where + ": ") + what);
    }

    static std::string sub(const std::string& where, const std::string& key) {
        return where.empty() ? key : where + "." + key;
    }

    void check_keys(const ojson& obj, const std::vector<std::string>& allowed, const std::string& where) const {
        for (const auto& [k, v] : obj.items()) {
            (void)v;
            if (std::find(allowed.begin(), allowed.end(), k) == allowed.end())
                fail(where, "unknown key '" + k + "'" + did_you_mean(k, allowed) + "; expected one of: " + join(allowed));
        }
    }

    std::string string_at(const ojson& j, const std::string& where) const {
        if (!j.is_string()) fail(where, "expected a string, got " + kind_name(j));
        return j.get<std::string>();
    }

    bool bool_at(const ojson& j, const std::string& where) const {
        if (!j.is_boolean()) fail(where, "expected true or false, got " + kind_name(j));
        return j.get<bool>();
    }

    std::int64_t int_at(const ojson& j, const std::string& where, std::int64_t lo, std::int64_t hi) const {
        std::int64_t v = 0;
        bool ok = false;
        if (j.is_number_unsigned()) {
            const auto u = j.get<std::uint64_t>();
            ok = u <= static_cast<std::uint64_t>(hi);
            v = ok ? static_cast<std::int64_t>(u) : 0;
        } else if (j.is_number_integer()) {
            v = j.get<std::int64_t>();
            ok = true;
        } else if (j.is_number_float()) {
            const double d = j.get<double>();
            ok = d >= -9e18 && d <= 9e18 && std::floor(d) == d;  // range first: the cast is UB outside int64
            v = ok ? static_cast<std::int64_t>(d) : 0;
        }
        if (!ok || v < lo || v > hi)
            fail(where, "expected an integer in [" + std::to_string(lo) + ", " + std::to_string(hi) + "], got " +
                            kind_name(j));
        return v;
    }

    void read_header(const ojson& doc) {
        if (!doc.contains("kind")) fail("", "missing \"kind\": \"graph\"");
        const std::string kind = string_at(doc["kind"], "kind");
        if (kind != "graph") fail("kind", "expected \"graph\" for a graph file, got \"" + kind + "\"");
        if (doc.contains("name")) g_.name = string_at(doc["name"], "name");
        else g_.name = fs::path(file_).stem().string();
        if (doc.contains("notes") && !doc["notes"].is_string() && !doc["notes"].is_array())
            fail("notes", "expected a string, got " + kind_name(doc["notes"]));
        if (doc.contains("workload") && !doc["workload"].is_object())
            fail("workload", "expected an object of default workload options, got " + kind_name(doc["workload"]));
        g_.file = file_;
    }

    void read_dims(const ojson& doc) {
        // Built in: the ranks every rank of a supernode runs the graph on.
        dims_["ranks"] = std::max(1, g_.spmd.ranks);
        if (doc.contains("dims")) {
            const ojson& d = doc["dims"];
            if (!d.is_object()) fail("dims", "expected an object {name: default value}, got " + kind_name(d));
            for (const auto& [k, v] : d.items()) {
                if (k == "ranks")
                    fail("dims.ranks", "'ranks' is built in: the chip's ranks (chip.interconnect.ranks); a graph cannot declare it");
                if (!is_identifier(k))
                    fail("dims." + k, "a dimension name must be letters, digits and '_' (not starting with a digit)");
                dims_[k] = int_at(v, "dims." + k, 1, kMaxDimValue);
                dim_names_.push_back(k);
            }
        }
        for (const auto& [k, v] : given_) {
            if (k == "ranks")
                fail("dims", "workload.dims.ranks: 'ranks' is built in: set chip.interconnect.ranks instead");
            if (!dims_.count(k)) {
                if (k == "batch" && v == 1) continue;  // the default batch of a graph without one
                fail("dims", "unknown dimension '" + k + "' given for this graph" + did_you_mean(k, dim_names_) +
                                 (dim_names_.empty() ? "; the graph declares no dimensions"
                                                     : "; the graph declares: " + join(dim_names_)));
            }
            if (v < 1 || v > kMaxDimValue)
                fail("dims." + k, "value " + std::to_string(v) + " given for this graph is out of range [1, " +
                                      std::to_string(kMaxDimValue) + "]");
            dims_[k] = v;
        }
    }

    // An integer, a dimension name or a product "batch*seq_len*2".
    std::int64_t dim_expr(const ojson& j, const std::string& where, bool allow_nonpositive) const {
        if (!j.is_string()) {
            if (allow_nonpositive) return int_at(j, where, -kMaxDimValue, kMaxDimValue);
            return int_at(j, where, 1, kMaxDimValue);
        }
        const std::string s = j.get<std::string>();
        std::int64_t v = 1;
        std::size_t pos = 0;
        bool any = false;
        while (pos <= s.size()) {
            const std::size_t star = s.find('*', pos);
            std::string tok = s.substr(pos, star == std::string::npos ? std::string::npos : star - pos);
            tok.erase(0, tok.find_first_not_of(" \t"));
            tok.erase(tok.find_last_not_of(" \t") + 1);
            if (tok.empty()) fail(where, "malformed dimension expression \"" + s + "\" (expected NAME or NAME*NAME*...)");
            std::int64_t f = 0;
            if (std::all_of(tok.begin(), tok.end(), [](char c) { return std::isdigit(static_cast<unsigned char>(c)); })) {
                if (tok.size() > 10) fail(where, "dimension " + tok + " is too large");
                f = std::stoll(tok);
                if (f < 1) fail(where, "dimension factors must be >= 1 in \"" + s + "\"");
            } else {
                const auto it = dims_.find(tok);
                if (it == dims_.end())
                    fail(where, "unknown dimension '" + tok + "'" + did_you_mean(tok, dim_names_) +
                                    (dim_names_.empty() ? "; the graph declares no \"dims\""
                                                        : "; declared in \"dims\": " + join(dim_names_)));
                f = it->second;
            }
            if (v > kMaxDimValue / f)
                fail(where, "\"" + s + "\" = more than " + std::to_string(kMaxDimValue) + " (dimension too large)");
            v *= f;
            any = true;
            if (star == std::string::npos) break;
            pos = star + 1;
        }
        if (!any) fail(where, "empty dimension expression");
        return v;
    }

    void check_shape_limits(const Shape& s, const std::string& where, const std::string& what) const {
        if (s.size() > kMaxRank)
            fail(where, what + " has rank " + std::to_string(s.size()) + "; at most " + std::to_string(kMaxRank) +
                            " dimensions are supported");
        std::int64_t n = 1;
        for (const auto d : s) {
            if (d < 1) fail(where, what + " " + to_string(s) + " has a dimension < 1");
            if (n > kMaxTensorElements / d)
                fail(where, what + " " + to_string(s) + " has more than 2^40 elements (absurd size; check the dims)");
            n *= d;
        }
    }

    Shape shape_at(const ojson& j, const std::string& where) const {
        if (!j.is_array())
            fail(where, "expected a list of dimensions (integers or dimension names), got " + kind_name(j));
        if (j.size() > kMaxRank)
            fail(where, "rank " + std::to_string(j.size()) + " is too large; at most " + std::to_string(kMaxRank) +
                            " dimensions are supported");
        Shape s;
        for (std::size_t i = 0; i < j.size(); ++i) s.push_back(dim_expr(j[i], where + "[" + std::to_string(i) + "]", false));
        check_shape_limits(s, where, "shape");
        return s;
    }

    int add_tensor(const std::string& name) {
        if (g_.tensors.size() >= kMaxGraphTensors)
            fail("tensors", "more than " + std::to_string(kMaxGraphTensors) + " tensors");
        Tensor t;
        t.name = name;
        const int idx = static_cast<int>(g_.tensors.size());
        g_.tensors.push_back(std::move(t));
        declared_.emplace_back();
        tensor_by_name_[name] = idx;
        return idx;
    }

    void read_tensors(const ojson& doc) {
        if (!doc.contains("tensors")) fail("", "missing \"tensors\" (an object declaring at least the graph inputs)");
        const ojson& ts = doc["tensors"];
        if (!ts.is_object()) fail("tensors", "expected an object {name: {shape, dtype, ...}}, got " + kind_name(ts));
        if (ts.size() > kMaxGraphTensors) fail("tensors", "more than " + std::to_string(kMaxGraphTensors) + " tensors");
        for (const auto& [name, tj] : ts.items()) {
            const std::string where = "tensors." + name;
            if (name.empty()) fail("tensors", "empty tensor name");
            if (!tj.is_object()) fail(where, "expected an object {shape, dtype, layout, input, const}, got " + kind_name(tj));
            check_keys(tj, kTensorKeys, where);
            const int idx = add_tensor(name);
            Tensor& t = g_.tensors[static_cast<std::size_t>(idx)];
            DeclaredTensor& d = declared_[static_cast<std::size_t>(idx)];
            if (tj.contains("input")) t.is_input = bool_at(tj["input"], where + ".input");
            if (tj.contains("const")) t.is_const = bool_at(tj["const"], where + ".const");
            if (t.is_input && t.is_const) fail(where, "a tensor cannot be both \"input\" and \"const\"");
            if (tj.contains("shape")) {
                t.shape = shape_at(tj["shape"], where + ".shape");
                d.has_shape = true;
            } else if (t.is_input || t.is_const) {
                fail(where, std::string("missing \"shape\" (required for ") + (t.is_input ? "graph inputs" : "consts") + ")");
            }
            if (tj.contains("dtype")) {
                const std::string s = string_at(tj["dtype"], where + ".dtype");
                bool ok = false;
                for (std::size_t i = 0; i < kDTypes.size(); ++i)
                    if (s == kDTypes[i]) {
                        t.dtype = static_cast<DType>(i);
                        ok = true;
                    }
                if (!ok) fail(where + ".dtype", "unknown dtype '" + s + "'" + did_you_mean(s, kDTypes) + "; expected one of: " + join(kDTypes));
                d.has_dtype = true;
            }
            if (tj.contains("layout")) {
                const std::string s = string_at(tj["layout"], where + ".layout");
                bool ok = false;
                for (std::size_t i = 0; i < kLayouts.size(); ++i)
                    if (s == kLayouts[i]) {
                        t.layout = static_cast<Layout>(i);
                        ok = true;
                    }
                if (!ok) fail(where + ".layout", "unknown layout '" + s + "'" + did_you_mean(s, kLayouts) + "; expected one of: " + join(kLayouts));
                d.has_layout = true;
                if (d.has_shape) check_layout(t, where + ".layout");
            } else if (d.has_shape) {
                t.layout = t.shape.size() == 4 ? Layout::NCHW : Layout::ND;
            }
        }
    }

    void check_layout(const Tensor& t, const std::string& where) const {
        if ((t.layout == Layout::NCHW || t.layout == Layout::NC1HWC0) && t.shape.size() != 4)
            fail(where, std::string(to_string(t.layout)) + " needs a 4-D shape [N,C,H,W] (shapes are always logical), got " +
                            to_string(t.shape));
        if (t.layout == Layout::FRACTAL_NZ && t.shape.size() < 2)
            fail(where, "FRACTAL_NZ needs at least a 2-D shape, got " + to_string(t.shape));
    }

    static Attr int_attr(std::int64_t v) {
        Attr a;
        a.kind = Attr::Kind::integer;
        a.i = v;
        return a;
    }

    Attr attr_at(const ojson& j, const std::string& where) const {
        Attr a;
        if (j.is_boolean()) {
            a.kind = Attr::Kind::integer;
            a.i = j.get<bool>() ? 1 : 0;
        } else if (j.is_number_integer() || j.is_number_unsigned()) {
            a.kind = Attr::Kind::integer;
            a.i = int_at(j, where, -kMaxDimValue, kMaxDimValue);
        } else if (j.is_number_float()) {
            a.kind = Attr::Kind::number;
            a.d = j.get<double>();
        } else if (j.is_string()) {
            a.kind = Attr::Kind::string;
            a.s = j.get<std::string>();
        } else if (j.is_array()) {
            a.kind = Attr::Kind::ints;
            if (j.size() > 64) fail(where, "list of " + std::to_string(j.size()) + " values is too long (at most 64)");
            for (std::size_t i = 0; i < j.size(); ++i)
                a.list.push_back(dim_expr(j[i], where + "[" + std::to_string(i) + "]", true));
        } else {
            fail(where, "expected an integer, number, string or list of integers, got " + kind_name(j));
        }
        return a;
    }

    void read_attrs(Node& n, const ojson& aj, const std::string& where) {
        if (!aj.is_object()) fail(where + ": attrs", "expected an object, got " + kind_name(aj));
        const AttrSpec& spec = attr_spec(n.op);
        std::vector<std::string> names;
        for (const auto& s : spec) names.push_back(s.first);
        for (const auto& [k, v] : aj.items()) {
            const std::string at = where + ": attrs." + k;
            const auto it = std::find_if(spec.begin(), spec.end(), [&k = k](const auto& s) { return s.first == k; });
            if (it == spec.end())
                fail(where, "unknown attribute '" + k + "' for " + to_string(n.op) + did_you_mean(k, names) +
                                (names.empty() ? "; " + std::string(to_string(n.op)) + " takes no attributes"
                                               : "; expected one of: " + join(names)));
            // An integer attribute may be a dimension expression ("ranks*2").
            const bool max = it->second == AttrType::IntOrMax && v.is_string() && v.get<std::string>() == "max";
            Attr a = (it->second == AttrType::Int || it->second == AttrType::IntOrMax) && v.is_string() && !max
                         ? int_attr(dim_expr(v, at, true))
                         : attr_at(v, at);
            bool ok = false;
            switch (it->second) {
                case AttrType::Int: ok = a.kind == Attr::Kind::integer; break;
                case AttrType::IntOrList: ok = a.kind == Attr::Kind::integer || a.kind == Attr::Kind::ints; break;
                case AttrType::List:
                    ok = a.kind == Attr::Kind::ints;
                    break;
                case AttrType::Number:
                    if (a.kind == Attr::Kind::integer) {
                        a.kind = Attr::Kind::number;
                        a.d = static_cast<double>(a.i);
                    }
                    ok = a.kind == Attr::Kind::number;
                    break;
                case AttrType::String: ok = a.kind == Attr::Kind::string; break;
                case AttrType::StringOrList: ok = a.kind == Attr::Kind::string || a.kind == Attr::Kind::ints; break;
                case AttrType::IntOrMax: ok = a.kind == Attr::Kind::integer || (a.kind == Attr::Kind::string && a.s == "max"); break;
            }
            if (!ok) fail(at, std::string("expected ") + describe(it->second) + ", got " + kind_name(v));
            n.attrs[k] = std::move(a);
        }
    }

    std::vector<std::string> names_at(const ojson& j, const std::string& where) const {
        if (!j.is_array()) fail(where, "expected a list of tensor names, got " + kind_name(j));
        if (j.size() > 4096) fail(where, "more than 4096 tensors");
        std::vector<std::string> r;
        for (std::size_t i = 0; i < j.size(); ++i) {
            const std::string w = where + "[" + std::to_string(i) + "]";
            r.push_back(string_at(j[i], w));
            if (r.back().empty()) fail(w, "empty tensor name");
        }
        return r;
    }

    // {"cube": [lo, hi], "vector": [lo, hi]}: the cores a node runs on.
    CoreRange read_cores(const ojson& j, const std::string& where) const {
        if (!j.is_object()) fail(where, "expected {\"cube\": [lo, hi], \"vector\": [lo, hi]}, got " + kind_name(j));
        check_keys(j, {"cube", "vector"}, where);
        CoreRange c;
        for (const auto& [key, v] : j.items()) {
            const std::string at = where + "." + key;
            if (!v.is_array() || v.size() != 2 || !v[0].is_number_integer() || !v[1].is_number_integer() ||
                v[0].get<std::int64_t>() < 0 || v[1].get<std::int64_t>() <= v[0].get<std::int64_t>() || v[1].get<std::int64_t>() > 4096)
                fail(at, "expected [first, end) core indices with 0 <= first < end <= 4096, got " + v.dump());
            (key == "cube" ? c.cube_lo : c.vector_lo) = v[0].get<int>();
            (key == "cube" ? c.cube_hi : c.vector_hi) = v[1].get<int>();
        }
        return c;
    }

    void read_nodes(const ojson& doc) {
        if (!doc.contains("nodes")) fail("", "missing \"nodes\" (a list of {name, op, inputs, outputs, attrs})");
        const ojson& ns = doc["nodes"];
        if (!ns.is_array()) fail("nodes", "expected a list of nodes, got " + kind_name(ns));
        if (ns.size() > kMaxGraphNodes)
            fail("nodes", std::to_string(ns.size()) + " nodes is more than the limit of " + std::to_string(kMaxGraphNodes));
        if (ns.empty()) fail("nodes", "the graph has no nodes");
        std::unordered_map<std::string, std::size_t> seen;
        for (std::size_t i = 0; i < ns.size(); ++i) {
            const ojson& nj = ns[i];
            std::string where = "nodes[" + std::to_string(i) + "]";
            if (!nj.is_object()) fail(where, "expected an object {name, op, inputs, outputs, attrs}, got " + kind_name(nj));
            Node n;
            if (!nj.contains("name")) fail(where, "missing \"name\"");
            n.name = string_at(nj["name"], where + ".name");
            if (n.name.empty()) fail(where + ".name", "empty node name");
            where += " (" + n.name + ")";
            check_keys(nj, kNodeKeys, where);
            const auto [it, fresh] = seen.emplace(n.name, i);
            if (!fresh)
                fail(where, "duplicate node name '" + n.name + "' (first used by nodes[" + std::to_string(it->second) + "])");
            if (!nj.contains("op")) fail(where, "missing \"op\"; expected one of: " + join(graph_op_names()));
            const std::string op = string_at(nj["op"], where + ": op");
            if (op == "FormatConvert")
                fail(where, "op 'FormatConvert' is inserted by the compiler and cannot appear in a graph file");
            if (!op_from_string(op, n.op))
                fail(where, "unknown op '" + op + "'" + did_you_mean(op, graph_op_names()) +
                                "; expected one of: " + join(graph_op_names()));
            if (!nj.contains("inputs")) fail(where, "missing \"inputs\"");
            if (!nj.contains("outputs")) fail(where, "missing \"outputs\"");
            std::vector<std::string> ins = names_at(nj["inputs"], where + ": inputs");
            std::vector<std::string> outs = names_at(nj["outputs"], where + ": outputs");
            if (outs.size() != 1)
                fail(where + ": outputs", "expected exactly one output tensor, got " + std::to_string(outs.size()));
            if (nj.contains("attrs")) read_attrs(n, nj["attrs"], where);
            if (nj.contains("device")) {
                const std::string dev = string_at(nj["device"], where + ": device");
                if (dev == "cpu") n.on_cpu = true;
                else if (dev != "npu")
                    fail(where + ": device", "expected \"cpu\" or \"npu\", got \"" + dev + "\"" + did_you_mean(dev, {"cpu", "npu"}));
            }
            if (nj.contains("notes") && !nj["notes"].is_string())
                fail(where + ": notes", "expected a string, got " + kind_name(nj["notes"]));
            if (nj.contains("cores")) n.cores = read_cores(nj["cores"], where + ": cores");
            g_.nodes.push_back(std::move(n));
            node_where_.push_back(where);
            node_inputs_.push_back(std::move(ins));
            node_outputs_.push_back(std::move(outs));
        }
    }

    std::vector<std::string> tensor_names() const {
        std::vector<std::string> r;
        for (const auto& t : g_.tensors) r.push_back(t.name);
        return r;
    }

    // Producers first (creating undeclared tensors), then inputs.
    void link() {
        for (std::size_t i = 0; i < g_.nodes.size(); ++i) {
            for (const std::string& o : node_outputs_[i]) {
                auto it = tensor_by_name_.find(o);
                int t = it == tensor_by_name_.end() ? add_tensor(o) : it->second;
                Tensor& tt = g_.tensors[static_cast<std::size_t>(t)];
                if (tt.is_input) fail(node_where_[i], "output '" + o + "' is declared as a graph input (tensors." + o + ".input)");
                if (tt.is_const) fail(node_where_[i], "output '" + o + "' is declared as a const (tensors." + o + ".const)");
                if (tt.producer >= 0)
                    fail(node_where_[i], "tensor '" + o + "' is produced by two nodes: " +
                                             node_where_[static_cast<std::size_t>(tt.producer)] + " and this one");
                tt.producer = static_cast<int>(i);
                g_.nodes[i].outputs.push_back(t);
            }
        }
        for (std::size_t i = 0; i < g_.nodes.size(); ++i) {
            for (const std::string& in : node_inputs_[i]) {
                const auto it = tensor_by_name_.find(in);
                if (it == tensor_by_name_.end())
                    fail(node_where_[i], "dangling tensor '" + in + "': input is neither declared in \"tensors\" nor produced by any node" +
                                             did_you_mean(in, tensor_names()));
                g_.nodes[i].inputs.push_back(it->second);
            }
        }
        for (std::size_t t = 0; t < g_.tensors.size(); ++t) {
            const Tensor& tt = g_.tensors[t];
            if (!tt.is_input && !tt.is_const && tt.producer < 0)
                fail("tensors." + tt.name,
                     "declared but no node produces it, and it is neither \"input\": true nor \"const\": true");
        }
    }

    void read_outputs(const ojson& doc) {
        if (!doc.contains("outputs")) fail("", "missing \"outputs\" (the list of graph output tensors)");
        const std::vector<std::string> outs = names_at(doc["outputs"], "outputs");
        if (outs.empty()) fail("outputs", "the graph has no outputs");
        for (std::size_t i = 0; i < outs.size(); ++i) {
            const std::string where = "outputs[" + std::to_string(i) + "]";
            const auto it = tensor_by_name_.find(outs[i]);
            if (it == tensor_by_name_.end())
                fail(where, "unknown tensor '" + outs[i] + "'" + did_you_mean(outs[i], tensor_names()));
            Tensor& t = g_.tensors[static_cast<std::size_t>(it->second)];
            if (t.is_output) fail(where, "tensor '" + outs[i] + "' is listed twice");
            t.is_output = true;
            g_.outputs.push_back(it->second);
        }
    }

    // Kahn's algorithm; ties go to the node earlier in the file.
    void order() {
        const std::size_t n = g_.nodes.size();
        std::vector<int> indeg(n, 0);
        std::vector<std::vector<int>> succ(n);
        for (std::size_t i = 0; i < n; ++i)
            for (const int t : g_.nodes[i].inputs) {
                const int p = g_.tensors[static_cast<std::size_t>(t)].producer;
                if (p < 0) continue;
                succ[static_cast<std::size_t>(p)].push_back(static_cast<int>(i));
                ++indeg[i];
            }
        std::priority_queue<int, std::vector<int>, std::greater<int>> ready;
        for (std::size_t i = 0; i < n; ++i)
            if (indeg[i] == 0) ready.push(static_cast<int>(i));
        std::vector<bool> done(n, false);
        while (!ready.empty()) {
            const int i = ready.top();
            ready.pop();
            done[static_cast<std::size_t>(i)] = true;
            order_.push_back(i);
            for (const int s : succ[static_cast<std::size_t>(i)])
                if (--indeg[static_cast<std::size_t>(s)] == 0) ready.push(s);
        }
        if (order_.size() == n) return;

        // A cycle: walk back along unfinished producers from the first
        // unfinished node until a node repeats.
        int cur = -1;
        for (std::size_t i = 0; i < n && cur < 0; ++i)
            if (!done[i]) cur = static_cast<int>(i);
        std::vector<int> path;
        std::vector<int> pos(n, -1);
        while (pos[static_cast<std::size_t>(cur)] < 0) {
            pos[static_cast<std::size_t>(cur)] = static_cast<int>(path.size());
            path.push_back(cur);
            int next = -1;
            for (const int t : g_.nodes[static_cast<std::size_t>(cur)].inputs) {
                const int p = g_.tensors[static_cast<std::size_t>(t)].producer;
                if (p >= 0 && !done[static_cast<std::size_t>(p)]) {
                    next = p;
                    break;
                }
            }
            cur = next;  // always found: an unfinished node has an unfinished producer
        }
        std::vector<int> cycle(path.begin() + pos[static_cast<std::size_t>(cur)], path.end());
        std::reverse(cycle.begin(), cycle.end());  // data-flow order
        std::rotate(cycle.begin(), std::min_element(cycle.begin(), cycle.end()), cycle.end());
        std::string chain;
        for (const int c : cycle) chain += g_.nodes[static_cast<std::size_t>(c)].name + " -> ";
        chain += g_.nodes[static_cast<std::size_t>(cycle.front())].name;
        fail(node_where_[static_cast<std::size_t>(cycle.front())], "cycle through nodes " + chain);
    }

    void infer_all() {
        for (const int i : order_) {
            const Node& n = g_.nodes[static_cast<std::size_t>(i)];
            const std::string& where = node_where_[static_cast<std::size_t>(i)];
            std::string err;
            const Shape s = infer_shape(g_, n, err);
            if (!err.empty()) fail(where, err);
            const DType dt = infer_dtype(g_, n, err);
            if (!err.empty()) fail(where, err);
            const int o = n.outputs.front();
            Tensor& t = g_.tensors[static_cast<std::size_t>(o)];
            check_shape_limits(s, where, "output '" + t.name + "'");
            const DeclaredTensor& d = declared_[static_cast<std::size_t>(o)];
            if (d.has_shape && t.shape != s)
                fail(where, "shape mismatch for output tensor '" + t.name + "': declared " + to_string(t.shape) +
                                " (tensors." + t.name + ".shape) but " + to_string(n.op) + " produces " + to_string(s));
            if (d.has_dtype && t.dtype != dt)
                fail(where, "dtype mismatch for output tensor '" + t.name + "': declared " + to_string(t.dtype) +
                                " (tensors." + t.name + ".dtype) but " + to_string(n.op) + " produces " + to_string(dt));
            t.shape = s;
            t.dtype = dt;
            try {
                t.row_groups = row_groups(g_, n);
                t.group_rows_mean = group_rows_mean(g_, n);
            } catch (const CommError& e) {
                fail(where, e.what());
            }
            if (d.has_layout) check_layout(t, "tensors." + t.name + ".layout");
            else t.layout = s.size() == 4 ? Layout::NCHW : Layout::ND;
        }
    }

    void finish() {
        const std::size_t n = g_.nodes.size();
        std::vector<int> new_index(n);
        for (std::size_t k = 0; k < n; ++k) new_index[static_cast<std::size_t>(order_[k])] = static_cast<int>(k);
        std::vector<Node> nodes;
        nodes.reserve(n);
        for (const int i : order_) nodes.push_back(std::move(g_.nodes[static_cast<std::size_t>(i)]));
        g_.nodes = std::move(nodes);
        for (auto& t : g_.tensors) {
            if (t.producer >= 0) t.producer = new_index[static_cast<std::size_t>(t.producer)];
            t.consumers.clear();
        }
        for (std::size_t k = 0; k < n; ++k)
            for (const int t : g_.nodes[k].inputs) {
                auto& c = g_.tensors[static_cast<std::size_t>(t)].consumers;
                if (c.empty() || c.back() != static_cast<int>(k)) c.push_back(static_cast<int>(k));
            }
        for (std::size_t t = 0; t < g_.tensors.size(); ++t)
            if (g_.tensors[t].is_input) g_.inputs.push_back(static_cast<int>(t));
        if (g_.inputs.empty()) fail("tensors", "the graph has no inputs (mark at least one tensor \"input\": true)");
    }
};

JsonFileSpec graph_file_spec() {
    JsonFileSpec spec;
    spec.what = "graph file";
    spec.max_bytes = kMaxGraphFileBytes;
    return spec;
}

}  // namespace

Graph read_graph_text(const std::string& text, const std::string& file, const std::map<std::string, std::int64_t>& dims,
                      const SpmdView& spmd) {
    return Reader(file, dims, spmd).read(parse_json_text<ojson>(text, file, graph_file_spec()));
}

Graph read_graph(const std::string& file, const std::map<std::string, std::int64_t>& dims, const SpmdView& spmd) {
    return Reader(file, dims, spmd).read(read_json_file<ojson>(file, graph_file_spec()));
}

void reinfer_for_rank(Graph& g, int rank) {
    g.spmd.rank = rank;
    for (Node& n : g.nodes) {
        std::string err;
        const Shape s = infer_shape(g, n, err);
        if (!err.empty()) throw InputError(g.file + ": " + n.name + ": rank " + std::to_string(rank) + ": " + err);
        Tensor& t = g.tensors[static_cast<std::size_t>(n.outputs.front())];
        t.shape = s;
        t.row_groups = row_groups(g, n);
        t.group_rows_mean = group_rows_mean(g, n);
    }
}

}  // namespace npusim::compiler
