// `npusim import MODEL.onnx --out GRAPH.json`: an ONNX model as npusim's
// graph file (docs/onnx.md), to read, edit or keep; `--list-ops` prints
// docs/onnx.md.
#include <filesystem>
#include <fstream>
#include <iostream>

#include <boost/program_options.hpp>
#include <fmt/format.h>

#include "cli/commands.hpp"
#include "cli/parse_options.hpp"
#include "common/did_you_mean.hpp"
#include "common/errors.hpp"
#include "common/output_file.hpp"
#include "compiler/graph_reader.hpp"
#include "onnx/onnx_import.hpp"

namespace npusim::cli {

namespace po = boost::program_options;

namespace {

// --set workload.batch=N and --set workload.dims.NAME=N: the only run
// document keys an import reads.
void add_dim(const std::string& arg, std::map<std::string, std::int64_t>& dims) {
    const auto eq = arg.find('=');
    const std::string path = arg.substr(0, eq);
    std::string name;
    if (path == "workload.batch") name = "batch";
    else if (path.rfind("workload.dims.", 0) == 0 && path.size() > 14) name = path.substr(14);
    else
        throw InputError(fmt::format("--set {}: import takes only workload.batch and workload.dims.NAME{}", arg,
                                     did_you_mean(path, {"workload.batch", "workload.dims"})));
    std::int64_t v = 0;
    std::size_t used = 0;
    try {
        v = std::stoll(eq == std::string::npos ? "" : arg.substr(eq + 1), &used);
    } catch (const std::exception&) {
        used = 0;
    }
    if (eq == std::string::npos || used != arg.size() - eq - 1 || v < 1 || v > compiler::kMaxDimValue)
        throw InputError(fmt::format("--set {}: expected an integer in [1, {}]", arg, compiler::kMaxDimValue));
    dims[name] = v;
}

}  // namespace

int import_command(const Args& args) {
    std::string model, out_file;
    std::vector<std::string> sets;
    bool list_ops = false, quiet = false;
    po::options_description opts("npusim import options");
    opts.add_options()
        ("help,h", "show this help")
        ("out", po::value(&out_file), "write the graph file (JSON) here")
        ("set", po::value(&sets), "bind a dim: workload.batch=N or workload.dims.NAME=N (repeatable)")
        ("list-ops", po::bool_switch(&list_ops), "print the supported ONNX ops (docs/onnx.md) and exit")
        ("quiet,q", po::bool_switch(&quiet), "no report on stdout");
    Positional pos{"model", {}};
    pos.hidden.add_options()("model", po::value(&model), "ONNX model");
    if (!parse_options(args, opts, pos)) return 0;
    if (list_ops) {
        std::cout << onnx_import::onnx_reference();
        return 0;
    }
    if (model.empty()) throw InputError("import: expected an ONNX model: npusim import MODEL.onnx --out GRAPH.json");
    if (out_file.empty()) throw InputError("import: --out GRAPH.json is required");
    std::map<std::string, std::int64_t> dims;
    for (const auto& s : sets) add_dim(s, dims);
    onnx_import::ImportSummary sum;
    const std::string doc = onnx_import::import_model(model, dims, &sum);
    // What is written must read back as a graph (shapes checked by the compiler's own inference).
    const compiler::Graph g = compiler::read_graph_text(doc, model);
    write_output_file(out_file, doc + "\n");  // its folder made; a failure names the OS reason
    if (!quiet)
        std::cout << fmt::format("imported {}: opset {}, {} ONNX nodes ({} folded at import) -> {} graph nodes, {} tensors "
                                 "({} const)\n  graph -> {}\n",
                                 model, sum.opset, sum.onnx_nodes, sum.folded, g.nodes.size(), g.tensors.size(),
                                 sum.consts, out_file);
    return 0;
}

}  // namespace npusim::cli
