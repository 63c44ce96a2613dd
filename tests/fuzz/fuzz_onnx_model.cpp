// ONNX model files (docs/onnx.md): import_model_bytes, i.e. the protobuf
// parse, opset and external-data checks, the ONNX checker and shape
// inference, constant folding, pattern fusion and op mapping; then the graph
// it writes must read back. Bad input is an InputError naming the file.
#include <string>

#include "common/errors.hpp"
#include "compiler/graph_reader.hpp"
#include "fuzzing.hpp"
#include "onnx/onnx_import.hpp"

using namespace npusim;

NPUSIM_FUZZ_TARGET(onnx_model) {
    const std::string bytes(reinterpret_cast<const char*>(data), size);
    std::string doc;
    try {
        doc = onnx_import::import_model_bytes(bytes, "model.onnx", fuzz::scratch_dir(), {{"batch", 1}});
    } catch (const InputError& e) {
        const std::string msg = e.what();
        NPUSIM_FUZZ_CHECK(msg.rfind("model.onnx: ", 0) == 0, "message does not start with the file: " + msg);
        return 0;
    }
    try {
        (void)compiler::read_graph_text(doc, "model.onnx");
    } catch (const InputError& e) {
        // A mapping whose output the graph reader refuses: the message still names the file.
        const std::string msg = e.what();
        NPUSIM_FUZZ_CHECK(msg.rfind("model.onnx", 0) == 0, "graph reader message does not start with the file: " + msg);
    }
    return 0;
}
