// The model graph the compiler reads (docs/design.md §1.1): tensors with shape,
// dtype and layout; nodes with op type, attributes, inputs and outputs.
// Plain C++; the compiler knows nothing of SystemC.
#pragma once
#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "collective/routing.hpp"
#include "common/op_type.hpp"
#include "tasks/task.hpp"

namespace npusim::compiler {

enum class Layout : std::uint8_t { ND, NCHW, NC1HWC0, FRACTAL_NZ };
const char* to_string(Layout l);

// The op vocabulary lives in common/op_type.hpp (the chip file's per-op host
// costs name op types too); the compiler uses it under its own namespace.
using npusim::graph_op_names;
using npusim::op_from_string;
using npusim::OpType;
using npusim::to_string;

using Shape = std::vector<std::int64_t>;
std::int64_t elements(const Shape& s);
std::string to_string(const Shape& s);

struct Tensor {
    std::string name;
    Shape shape;
    DType dtype = DType::fp16;
    Layout layout = Layout::NCHW;  // as produced (inputs: as handed over)
    bool is_input = false;         // graph input, lives in GM
    bool is_const = false;         // weights / constants, live in GM
    bool is_output = false;
    int producer = -1;             // node index, -1 for inputs/consts
    std::vector<int> consumers;    // node indices, in node order
    // Rows in groups (a Dispatch's output: the tokens of each local expert
    // in turn, and what follows it row by row): rows per group; empty: none.
    std::vector<std::int64_t> row_groups;
    // ... and the mean rows per group over every rank of the group (the same
    // on each rank: what a grouped kernel's tiling is chosen for).
    double group_rows_mean = 0;

    std::uint64_t bytes() const { return static_cast<std::uint64_t>(elements(shape)) * dtype_bytes(dtype); }
};

// Attribute values: integers, numbers, strings, lists of integers.
struct Attr {
    enum class Kind : std::uint8_t { integer, number, string, ints } kind = Kind::integer;
    std::int64_t i = 0;
    double d = 0;
    std::string s;
    std::vector<std::int64_t> list;
};

// The cores a node's tasks run on (docs/graph-format.md, "Core groups"):
// cube cores [cube_lo, cube_hi) and vector cores [vector_lo, vector_hi);
// hi = 0: every core of that type. Two streams on a split die.
struct CoreRange {
    int cube_lo = 0, cube_hi = 0, vector_lo = 0, vector_hi = 0;
    bool set() const { return cube_hi > 0 || vector_hi > 0; }
    bool operator==(const CoreRange& o) const {
        return cube_lo == o.cube_lo && cube_hi == o.cube_hi && vector_lo == o.vector_lo && vector_hi == o.vector_hi;
    }
    bool operator!=(const CoreRange& o) const { return !(*this == o); }
};

struct Node {
    std::string name;
    OpType op = OpType::ReLU;
    std::vector<int> inputs;   // tensor indices
    std::vector<int> outputs;  // tensor indices
    std::map<std::string, Attr> attrs;
    bool on_cpu = false;       // labelled for the host CPU (host runtime, hetero mode)
    CoreRange cores;

    std::int64_t attr_int(const std::string& key, std::int64_t fallback) const;
    std::vector<std::int64_t> attr_ints(const std::string& key, std::vector<std::int64_t> fallback) const;
};

// Which rank of a supernode the graph is read for (docs/graph-format.md,
// "Graphs that span ranks"): every rank runs the graph (SPMD); shapes after
// a Dispatch depend on the tokens the routing sends this rank.
struct SpmdView {
    int rank = 0;
    int ranks = 1;  // the chip's ranks (1: a single die)
    RoutingSpec routing;
};

struct Graph {
    std::string name;
    std::string file;
    std::vector<Tensor> tensors;
    std::vector<Node> nodes;  // topologically ordered after reading
    std::vector<int> inputs, outputs;
    SpmdView spmd;

    int tensor_index(const std::string& name) const;  // -1 if absent
};

}  // namespace npusim::compiler
