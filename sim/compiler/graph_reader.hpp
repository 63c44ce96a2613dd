// Reads a model graph file (docs/graph-format.md): resolves symbolic
// dimensions, checks every name, orders the nodes topologically and fills
// in (and checks) every tensor's shape by shape inference.
#pragma once
#include <cstdint>
#include <map>
#include <string>

#include "compiler/graph.hpp"

namespace npusim::compiler {

// Reads FILE. `dims` override the file's "dims" defaults (the caller passes
// workload.batch as "batch" and workload.dims.*); a name the file does not
// declare is an InputError with a did-you-mean, except "batch" = 1 for a graph
// that has no batch dimension (ignored). Every problem is an InputError
// "FILE: <place>: <what>" (place = "nodes[3] (conv1)", "tensors.x.shape", ...);
// malformed JSON is "FILE:LINE:COL: invalid JSON: ...".
// On a supernode every rank runs the graph: `spmd` says which rank it is read
// for (shapes after a Dispatch depend on it).
Graph read_graph(const std::string& file, const std::map<std::string, std::int64_t>& dims = {},
                 const SpmdView& spmd = {});

// The same from text already in memory; `file` is only used in messages.
Graph read_graph_text(const std::string& text, const std::string& file,
                      const std::map<std::string, std::int64_t>& dims = {}, const SpmdView& spmd = {});

// The shapes of a graph read for one rank, inferred again for `rank` (the
// file's checks were made when it was read).
void reinfer_for_rank(Graph& g, int rank);

// Limits checked before anything is allocated from them.
constexpr std::int64_t kMaxTensorElements = std::int64_t(1) << 40;
constexpr std::size_t kMaxGraphNodes = 100000;
constexpr std::size_t kMaxGraphTensors = 1000000;
constexpr std::int64_t kMaxDimValue = std::int64_t(1) << 31;
constexpr std::size_t kMaxRank = 8;
// Graph files are read whole; larger than other JSON inputs (up to
// kMaxGraphTensors declared tensors).
constexpr std::size_t kMaxGraphFileBytes = std::size_t(1) << 30;

}  // namespace npusim::compiler
