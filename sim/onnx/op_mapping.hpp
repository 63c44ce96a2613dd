// ONNX nodes -> nodes of the compiler's graph (docs/onnx.md). Each mapped
// ONNX op type has one function; it reads the node through a MapContext
// (inputs resolved to graph tensors, shapes from ONNX shape inference,
// constant values from the folder) and emits one or more graph nodes, or
// says why it cannot.
#pragma once
#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>
#include <onnx/onnx_pb.h>

#include "onnx/constant_value.hpp"

namespace npusim::onnx_import {

using Shape = std::vector<std::int64_t>;
using ojson = nlohmann::ordered_json;

// What the importer knows of an ONNX tensor name.
struct TensorFacts {
    bool known = false;  // shape fully known
    Shape shape;
    int elem_type = ::onnx::TensorProto::FLOAT;
};

// The graph document under construction.
class GraphBuilder {
public:
    ojson tensors = ojson::object();
    ojson nodes = ojson::array();

    // A unique node name derived from `base`.
    std::string node_name(const std::string& base);
    // A fresh tensor name derived from `base` (intermediates of multi-node mappings).
    std::string temp_tensor(const std::string& base);
    void declare(const std::string& name, const Shape& shape, const std::string& dtype, bool input, bool is_const);
    bool declared(const std::string& name) const { return tensors.contains(name); }
    void add_node(const std::string& name, const std::string& op, const std::vector<std::string>& inputs,
                  const std::string& output, ojson attrs = ojson::object());

private:
    std::map<std::string, int> node_names_;
    std::map<std::string, int> temp_names_;
};

// The graph dtype an ONNX element type is simulated in: floats in fp16 (the
// NPU's inference precision), bf16 as bf16, 8-bit as int8, wider integers
// in a 4-byte stand-in (fp32).
std::string graph_dtype(int elem_type);

class MapContext {
public:
    MapContext(const ::onnx::NodeProto& node, int opset, GraphBuilder& b, const std::map<std::string, TensorFacts>& facts,
               const std::map<std::string, ConstValue>& consts, std::map<std::string, std::string>& aliases,
               std::string name);

    const ::onnx::NodeProto& node;
    const int opset;
    GraphBuilder& b;
    const std::string name;  // the graph node name for this ONNX node

    std::size_t inputs() const;             // declared inputs (empty names count)
    bool has_input(std::size_t i) const;    // present and not ""
    bool is_const(std::size_t i) const;
    const ConstValue* value(std::size_t i) const;  // with data, else nullptr
    const Shape& shape(std::size_t i) const;       // of a runtime or const input
    int elem_type(std::size_t i) const;
    // The graph tensor for input i; a constant is declared as a const tensor.
    std::string in(std::size_t i) const;
    const Shape& out_shape(std::size_t k = 0) const;
    bool out_known(std::size_t k = 0) const;
    std::string out(std::size_t k = 0) const { return node.output(static_cast<int>(k)); }
    // True if output k (k >= 1) is read by anything (extra outputs are not mapped).
    bool output_used(std::size_t k) const;
    void alias_output(const std::string& to, std::size_t k = 0) const { aliases_[out(k)] = to; }
    void emit(const std::string& op, const std::vector<std::string>& ins, const std::string& output,
              ojson attrs = ojson::object(), const std::string& suffix = "") const;

    std::map<std::string, bool>* used_outputs = nullptr;  // every tensor name some node or the graph reads

private:
    const std::map<std::string, TensorFacts>& facts_;
    const std::map<std::string, ConstValue>& consts_;
    std::map<std::string, std::string>& aliases_;
};

// Maps the node; returns "" on success, or the reason it cannot be mapped
// ("Conv (3-D)", "Erf"), used as the key of the unsupported-op report.
std::string map_node(MapContext& c);

// The ONNX op types the importer maps to graph nodes, and those it only
// folds (constant subgraphs), sorted.
const std::vector<std::string>& mapped_op_types();
const std::vector<std::string>& folded_op_types();
// What a mapped op type becomes, for docs/onnx.md.
const char* mapping_of(const std::string& op_type);

}  // namespace npusim::onnx_import
