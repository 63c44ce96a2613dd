#include "onnx/onnx_import.hpp"

#include "onnx/conv_windows.hpp"

#include <algorithm>
#include <filesystem>
#include <set>

#include <fmt/format.h>
#include <nlohmann/json.hpp>
#include <onnx/shape_inference/implementation.h>

#include "common/did_you_mean.hpp"
#include "common/errors.hpp"
#include "onnx/constant_value.hpp"
#include "onnx/fold.hpp"
#include "onnx/model_file.hpp"
#include "onnx/op_mapping.hpp"
#include "onnx/patterns.hpp"
#include "onnx/shape_completion.hpp"

namespace npusim::onnx_import {
namespace {

using TP = ::onnx::TensorProto;

// Float weights are never needed as values; integers (shapes, axes) and small
// float constants (scales) are.
constexpr std::int64_t kMaxDecodedFloats = 4096;

bool is_float_type(int t) { return t == TP::FLOAT || t == TP::DOUBLE || t == TP::FLOAT16 || t == TP::BFLOAT16; }

[[noreturn]] void import_fail(const std::string& file, const std::string& what) { throw InputError(file + ": " + what); }

std::string first_line_of(const std::string& s) {
    const auto nl = s.find('\n');
    std::string line = nl == std::string::npos ? s : s.substr(0, nl);
    if (line.size() > 300) line = line.substr(0, 297) + "...";
    return line;
}

class Importer {
public:
    Importer(LoadedModel& m, const std::map<std::string, std::int64_t>& dims) : m_(m), dims_(dims) {}

    std::string run(ImportSummary* summary) {
        auto& g = *m_.model.mutable_graph();
        sum_.opset = m_.opset;
        sum_.onnx_nodes = static_cast<std::size_t>(g.node_size());
        original_ops_ = op_types_of(m_.model);
        for (auto& t : *g.mutable_initializer()) {
            const ConstValue& v = consts_[t.name()] =
                decode_tensor(t, m_.dir, is_float_type(t.data_type()) ? kMaxDecodedFloats : kMaxFoldElements);
            // Weights' values are never needed again (the checker has seen
            // them): shape inference then copies dims, not megabytes.
            if (!v.has_data) {
                t.clear_raw_data();
                t.clear_float_data();
                t.clear_double_data();
                t.clear_int32_data();
                t.clear_int64_data();
            }
        }
        bind_inputs();
        check_conv_windows(m_);  // before libonnx's inference, with the inputs' dims bound
        // Exporters' stored shapes may name the dims just bound; inference redoes them.
        g.clear_value_info();
        make_einsum_explicit(g);
        for (auto& o : *g.mutable_output())
            if (o.type().has_tensor_type()) o.mutable_type()->mutable_tensor_type()->clear_shape();
        fold();
        sum_.fused = fuse_patterns(*m_.model.mutable_graph(), consts_);
        const std::string doc = build();
        if (summary) *summary = sum_;
        return doc;
    }

private:
    LoadedModel& m_;
    const std::map<std::string, std::int64_t>& dims_;
    std::map<std::string, ConstValue> consts_;
    std::map<std::string, TensorFacts> facts_;
    std::vector<std::string> inputs_;  // runtime graph inputs, in order
    ImportSummary sum_;
    std::string original_ops_;  // before folding removes nodes, for messages

    // A scalar input that reaches a normalisation's data (directly or through
    // one-input ops, which keep it a scalar) is refused.
    void refuse_normalised_scalar(const std::string& input) {
        const auto& g = m_.model.graph();
        std::set<std::string> scalar = {input};
        for (bool grew = true; grew;) {
            grew = false;
            for (const auto& n : g.node()) {
                if (n.input_size() == 0 || !scalar.count(n.input(0))) continue;
                if (n.op_type().find("Normalization") != std::string::npos)
                    import_fail(m_.file, fmt::format("input '{}' is a scalar, normalised by {} '{}' (nothing to normalise); the "
                                              "model's ops: {}", input, n.op_type(), n.name(), op_types_of(m_.model)));
                if (n.input_size() == 1)
                    for (const auto& o : n.output()) grew = scalar.insert(o).second || grew;
            }
        }
    }

    // Symbolic input dims -> values: the leading dim is the batch.
    void bind_inputs() {
        auto& g = *m_.model.mutable_graph();
        std::set<std::string> params;
        std::vector<std::string> missing;
        bool batch_bound = false;
        const auto given = [&](const std::string& n) { return dims_.find(n); };
        for (auto& in : *g.mutable_input()) {
            if (consts_.count(in.name())) continue;  // an initializer listed as input (older IR)
            inputs_.push_back(in.name());
            if (!in.type().has_tensor_type())
                import_fail(m_.file, fmt::format("input '{}': only tensor inputs are supported (not sequences or maps); the model's "
                                          "ops: {}", in.name(), op_types_of(m_.model)));
            if (!in.type().tensor_type().has_shape())
                import_fail(m_.file, fmt::format("input '{}' has no shape (its rank is unknown); the model's ops: {}", in.name(),
                                          op_types_of(m_.model)));
            // A scalar input (a bound, an axis, a scale given at run time) is
            // one element. libonnx's shape inference is not hardened against
            // a scalar where a normalisation needs an axis (LayerNormalization
            // of a rank-0 input is a SIGSEGV): refused there.
            if (in.type().tensor_type().shape().dim_size() == 0) {
                refuse_normalised_scalar(in.name());
                continue;
            }
            auto* shape = in.mutable_type()->mutable_tensor_type()->mutable_shape();
            for (int i = 0; i < shape->dim_size(); ++i) {
                auto* d = shape->mutable_dim(i);
                if (d->has_dim_value() && d->dim_value() > 0) continue;
                if (d->has_dim_value() && d->dim_value() <= 0 && !d->has_dim_param())
                    import_fail(m_.file, fmt::format("input '{}': dimension {} is {} (an empty tensor: nothing to simulate); the "
                                              "model's ops: {}", in.name(), i, d->dim_value(), op_types_of(m_.model)));
                const std::string param = d->has_dim_param() ? d->dim_param() : "";
                if (!param.empty()) params.insert(param);
                std::int64_t v = -1;
                if (!param.empty() && given(param) != dims_.end()) {
                    v = given(param)->second;
                } else if (i == 0) {
                    v = given("batch") != dims_.end() ? given("batch")->second : 1;
                    batch_bound = true;
                }
                if (v < 1) {
                    missing.push_back(param.empty() ? fmt::format("input '{}' dimension {} (unnamed)", in.name(), i)
                                                    : fmt::format("'{}' (input '{}' dimension {})", param, in.name(), i));
                    continue;
                }
                d->clear_dim_param();
                d->set_dim_value(v);
                sum_.dims[param.empty() || i == 0 ? (param.empty() ? "batch" : param) : param] = v;
            }
        }
        const std::vector<std::string> names(params.begin(), params.end());
        for (const auto& [k, v] : dims_) {
            if (k == "batch") {
                if (!batch_bound && v != 1 && !params.count("batch"))
                    import_fail(m_.file, fmt::format("workload.batch = {}: the model's inputs have a fixed leading dimension; "
                                              "export it with a dynamic batch axis to vary the batch", v));
                continue;
            }
            if (!params.count(k))
                import_fail(m_.file, fmt::format("dims: unknown dimension '{}' given for this model{}; the model's symbolic "
                                          "dimensions: {}", k, did_you_mean(k, names),
                                          names.empty() ? std::string("none") : fmt::format("{}", fmt::join(names, ", "))));
        }
        if (!missing.empty()) {
            std::string list;
            for (const auto& s : missing) list += (list.empty() ? "" : ", ") + s;
            import_fail(m_.file, "symbolic dimensions without a value: " + list +
                              "; give each with --set workload.dims.NAME=N (the leading dimension binds to workload.batch)");
        }
    }

    // libonnx's inference, then the shapes it leaves open that npusim knows
    // (onnx/shape_completion.hpp), then inference again to carry them on.
    void infer() {
        infer_once();
        const ShapeLookup known = [this](const std::string& name, Shape& shape, int& type) {
            if (const auto c = consts_.find(name); c != consts_.end()) {
                shape = c->second.shape;
                type = c->second.elem_type;
                return true;
            }
            const TensorFacts* f = fact(name);
            if (!f || !f->known) return false;
            shape = f->shape;
            type = f->elem_type;
            return true;
        };
        for (int round = 0; round < 8 && complete_shapes(*m_.model.mutable_graph(), known) > 0; ++round) infer_once();
    }

    void infer_once() {
        // A tensor folded to an initializer since the last round may still
        // have the value_info inference gave it then (a partial shape, say
        // [?, 64]); libonnx then skips the nodes that read it.
        auto& g = *m_.model.mutable_graph();
        std::set<std::string> folded;
        for (const auto& t : g.initializer()) folded.insert(t.name());
        auto* vi = g.mutable_value_info();
        vi->erase(std::remove_if(vi->begin(), vi->end(), [&](const ::onnx::ValueInfoProto& v) { return folded.count(v.name()) > 0; }),
                  vi->end());
        try {
            ::onnx::shape_inference::InferShapes(m_.model, ::onnx::OpSchemaRegistry::Instance(),
                                                 ::onnx::ShapeInferenceOptions(false, 0, true));
        } catch (const std::exception& e) {
            import_fail(m_.file, "ONNX shape inference failed: " + first_line_of(e.what()));
        }
        facts_.clear();
        const auto take = [&](const ::onnx::ValueInfoProto& v) {
            if (!v.type().has_tensor_type()) return;
            TensorFacts f;
            f.elem_type = v.type().tensor_type().elem_type();
            f.known = v.type().tensor_type().has_shape();
            for (const auto& d : v.type().tensor_type().shape().dim()) {
                if (!d.has_dim_value() || d.dim_value() < 0) f.known = false;
                f.shape.push_back(d.has_dim_value() ? d.dim_value() : -1);
            }
            // A graph output is listed twice when shape completion added
            // its value_info: keep the known one.
            if (const TensorFacts* had = fact(v.name()); had && had->known && !f.known) return;
            facts_[v.name()] = std::move(f);
        };
        for (const auto& v : g.input()) take(v);
        for (const auto& v : g.value_info()) take(v);
        for (const auto& v : g.output()) take(v);
    }

    const TensorFacts* fact(const std::string& name) const {
        const auto it = facts_.find(name);
        return it == facts_.end() ? nullptr : &it->second;
    }

    static bool has_subgraph(const ::onnx::NodeProto& n) {
        for (const auto& a : n.attribute())
            if (a.has_g() || a.graphs_size()) return true;
        return false;
    }

    // Rounds of: shape inference, then fold every node whose value is now
    // known. A folded value becomes an initializer, so the next round's
    // inference sees it (a Reshape whose target was computed gets its shape).
    void fold() {
        auto& g = *m_.model.mutable_graph();
        for (int round = 0; round < 16; ++round) {
            infer();
            bool changed = false;
            google::protobuf::RepeatedPtrField<::onnx::NodeProto> kept;
            for (auto& n : *g.mutable_node()) {
                bool outputs_const = n.output_size() > 0;
                for (const auto& o : n.output()) outputs_const = outputs_const && (o.empty() || consts_.count(o));
                if (outputs_const) {  // shape-only constant from an earlier round
                    *kept.Add() = n;
                    continue;
                }
                std::vector<Operand> ops;
                bool all_const = true;
                for (const auto& i : n.input()) {
                    Operand o;
                    if (i.empty()) {
                        ops.push_back(o);
                        continue;
                    }
                    if (const auto c = consts_.find(i); c != consts_.end()) {
                        o.value = &c->second;
                        o.shape = &c->second.shape;
                    } else {
                        all_const = false;
                        if (const TensorFacts* f = fact(i); f && f->known) o.shape = &f->shape;
                    }
                    ops.push_back(o);
                }
                const bool reads_shape = n.op_type() == "Shape" || n.op_type() == "Size";
                if ((all_const || reads_shape) && !has_subgraph(n) && n.domain().empty()) {
                    const TensorFacts* f0 = n.output_size() ? fact(n.output(0)) : nullptr;
                    ConstValue v;
                    if (n.output_size() == 1 &&
                        fold_node(n, ops, f0 && f0->known ? &f0->shape : nullptr, m_.opset, v)) {
                        g.add_initializer()->CopyFrom(encode_tensor(n.output(0), v));
                        consts_[n.output(0)] = std::move(v);
                        ++sum_.folded;
                        changed = true;
                        continue;
                    }
                    if (all_const) {
                        // Computed from constants only (e.g. a transposed weight):
                        // a constant of the inferred shape, values not needed.
                        bool known = true;
                        for (const auto& o : n.output())
                            if (!o.empty() && !(fact(o) && fact(o)->known)) known = false;
                        if (known) {
                            for (const auto& o : n.output())
                                if (!o.empty()) consts_[o] = ConstValue{fact(o)->shape, fact(o)->elem_type, false, {}};
                            ++sum_.folded;
                            changed = true;
                        }
                    }
                }
                *kept.Add() = n;
            }
            g.mutable_node()->Swap(&kept);
            if (!changed) return;
        }
    }

    // Op types change in an opset conversion (Upsample becomes Resize):
    // messages name the file's own as well.
    std::string converted_note() const {
        return m_.converted_from ? fmt::format("; converted from opset {}, whose ops were: {}", m_.converted_from, m_.file_ops)
                                 : std::string();
    }

    std::string build() {
        const auto& g = m_.model.graph();
        GraphBuilder b;
        for (const auto& name : inputs_) {
            const TensorFacts* f = fact(name);
            if (!f || !f->known) import_fail(m_.file, fmt::format("input '{}': shape unknown", name));
            b.declare(name, f->shape, graph_dtype(f->elem_type), true, false);
        }
        std::map<std::string, bool> used;
        for (const auto& n : g.node())
            for (const auto& i : n.input()) used[i] = true;
        for (const auto& o : g.output()) used[o.name()] = true;

        std::map<std::string, std::string> aliases;
        std::map<std::string, std::vector<std::string>> unsupported;
        std::map<std::string, int> onnx_names;
        int index = 0;
        for (const auto& n : g.node()) {
            ++index;
            bool outputs_const = true;
            for (const auto& o : n.output()) outputs_const = outputs_const && (o.empty() || consts_.count(o));
            if (outputs_const) continue;
            const std::string name = n.name().empty() ? fmt::format("{}_{}", n.op_type(), index) : n.name();
            std::string why;
            for (const auto& i : n.input()) {
                if (i.empty() || consts_.count(i)) continue;
                const TensorFacts* f = fact(i);
                if (!f || !f->known) {
                    why = n.op_type() + " (input shape unknown at import)";
                    break;
                }
                for (const auto d : f->shape)
                    if (d == 0) why = n.op_type() + " (empty tensor)";
            }
            if (why.empty()) {
                MapContext c(n, m_.opset, b, facts_, consts_, aliases, name);
                c.used_outputs = &used;
                try {
                    why = map_node(c);
                } catch (const std::exception&) {
                    why = n.op_type() + " (malformed attributes)";  // e.g. a list shorter than its rank
                }
            }
            if (!why.empty()) unsupported[why].push_back(name);
        }
        if (!unsupported.empty()) {
            std::size_t total = 0;
            std::string list;
            for (const auto& [op, names] : unsupported) {
                total += names.size();
                std::string shown;
                for (std::size_t i = 0; i < names.size() && i < 4; ++i) shown += (i ? ", " : "") + names[i];
                if (names.size() > 4) shown += fmt::format(", and {} more", names.size() - 4);
                list += fmt::format("{}{} x{} ({})", list.empty() ? "" : "; ", op, names.size(), shown);
            }
            import_fail(m_.file, fmt::format("{} node{} cannot be mapped to npusim's ops: {} (docs/onnx.md lists the supported "
                                      "ops){}", total, total == 1 ? "" : "s", list, converted_note()));
        }

        ojson outputs = ojson::array();
        std::set<std::string> seen;
        for (const auto& o : g.output()) {
            std::string t = o.name();
            if (const auto a = aliases.find(t); a != aliases.end()) t = a->second;
            if (consts_.count(t) || std::find(inputs_.begin(), inputs_.end(), t) != inputs_.end()) continue;
            if (seen.insert(t).second) outputs.push_back(t);
        }
        const bool only_views = std::all_of(b.nodes.begin(), b.nodes.end(), [](const ojson& n) { return n["op"] == "Reshape"; });
        if (outputs.empty() || only_views)
            import_fail(m_.file, std::string("nothing to simulate: ") +
                              (outputs.empty() ? "every output is a constant or an input once the model is folded"
                                               : "only views (reshapes) remain once the model is folded") +
                              "; the model's ops: " + original_ops_ + converted_note());

        sum_.graph_nodes = b.nodes.size();
        for (const auto& [k, t] : b.tensors.items())
            if (t.contains("const")) ++sum_.consts;
        std::string dims;
        for (const auto& [k, v] : sum_.dims) dims += fmt::format("{}{}={}", dims.empty() ? "" : ", ", k, v);
        const std::string stem = std::filesystem::path(m_.file).stem().string();
        ojson doc{{"kind", "graph"},
                  {"name", stem},
                  {"notes", fmt::format("imported from {} (opset {}, {} {}{}) by npusim import: {} ONNX nodes, {} folded "
                                        "at import{}. Shapes are those of the bound dims; re-import to change them.",
                                        std::filesystem::path(m_.file).filename().string(), m_.opset,
                                        m_.model.producer_name().empty() ? "unknown producer" : m_.model.producer_name(),
                                        m_.model.producer_version(), g.name().empty() ? "" : ", graph " + g.name(),
                                        sum_.onnx_nodes, sum_.folded, dims.empty() ? "" : " (" + dims + ")")},
                  {"tensors", std::move(b.tensors)},
                  {"nodes", std::move(b.nodes)},
                  {"outputs", std::move(outputs)}};
        // Names are protobuf strings, not checked for UTF-8: replace what is not (JSON must be).
        return doc.dump(1, ' ', false, ojson::error_handler_t::replace);
    }
};

}  // namespace

std::string import_model_bytes(const std::string& bytes, const std::string& file, const std::string& dir,
                               const std::map<std::string, std::int64_t>& dims, ImportSummary* summary) {
    LoadedModel m = load_model_bytes(bytes, file, dir);
    return Importer(m, dims).run(summary);
}

std::string import_model(const std::string& file, const std::map<std::string, std::int64_t>& dims,
                         ImportSummary* summary) {
    LoadedModel m = load_model_file(file);
    return Importer(m, dims).run(summary);
}

const std::vector<std::string>& mapped_onnx_ops() { return mapped_op_types(); }
const std::vector<std::string>& folded_onnx_ops() { return folded_op_types(); }

}  // namespace npusim::onnx_import
