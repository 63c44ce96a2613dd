#include "onnx/model_file.hpp"

#include <algorithm>
#include <cctype>
#include <filesystem>
#include <fstream>
#include <map>
#include <set>
#include <unordered_map>
#include <sstream>

#include <fmt/format.h>
#include <onnx/checker.h>
#include <onnx/version_converter/convert.h>

#include "common/errors.hpp"
#include "onnx/constant_value.hpp"
#include "onnx/onnx_import.hpp"

namespace npusim::onnx_import {
namespace fs = std::filesystem;

namespace {

[[noreturn]] void fail(const std::string& file, const std::string& what) { throw InputError(file + ": " + what); }

// A library message on one line: its lines joined (the checker names the
// node on the lines after the first), at most 300 characters (it may append
// pages of context).
std::string first_line(const std::string& s) {
    std::string line;
    for (const char c : s) {
        const bool space = c == '\n' || c == '\r' || c == '\t' || c == ' ';
        if (space && (line.empty() || line.back() == ' ')) continue;
        line += space ? ' ' : c;
        if (line.size() > 300) return line.substr(0, 297) + "...";
    }
    while (!line.empty() && line.back() == ' ') line.pop_back();
    return line;
}

std::int64_t tensor_bytes(const ::onnx::TensorProto& t) {
    std::int64_t n = 1;
    for (const auto d : t.dims()) n *= std::max<std::int64_t>(d, 0);
    switch (t.data_type()) {
        case ::onnx::TensorProto::DOUBLE:
        case ::onnx::TensorProto::INT64:
        case ::onnx::TensorProto::UINT64: return n * 8;
        case ::onnx::TensorProto::FLOAT:
        case ::onnx::TensorProto::INT32:
        case ::onnx::TensorProto::UINT32: return n * 4;
        case ::onnx::TensorProto::FLOAT16:
        case ::onnx::TensorProto::BFLOAT16:
        case ::onnx::TensorProto::INT16:
        case ::onnx::TensorProto::UINT16: return n * 2;
        default: return n;
    }
}

// Every initializer stored outside the model must be in a file next to it
// (relative path, inside the model's folder) that holds its bytes.
void check_external_data(const LoadedModel& m) {
    for (const auto& t : m.model.graph().initializer()) {
        if (t.data_location() != ::onnx::TensorProto::EXTERNAL) continue;
        std::string location;
        std::int64_t offset = 0, length = -1;
        for (const auto& e : t.external_data()) {
            try {
                if (e.key() == "location") location = e.value();
                else if (e.key() == "offset") offset = std::stoll(e.value());
                else if (e.key() == "length") length = std::stoll(e.value());
            } catch (const std::exception&) {
                fail(m.file, fmt::format("initializer '{}': external data {} '{}' is not a number", t.name(), e.key(), e.value()));
            }
        }
        if (location.empty()) fail(m.file, fmt::format("initializer '{}': external data without a location", t.name()));
        const fs::path rel(location);
        if (rel.is_absolute() || std::any_of(rel.begin(), rel.end(), [](const fs::path& p) { return p == ".."; }))
            fail(m.file, fmt::format("initializer '{}': external data location '{}' must be a relative path inside the "
                                     "model's folder", t.name(), location));
        const fs::path path = fs::path(m.dir) / rel;
        std::error_code ec;
        const auto size = fs::file_size(path, ec);
        if (ec)
            fail(m.file, fmt::format("initializer '{}': external data file '{}' not found (looked for {})", t.name(),
                                     location, path.string()));
        const std::int64_t need = offset + (length >= 0 ? length : tensor_bytes(t));
        if (offset < 0 || need > static_cast<std::int64_t>(size))
            fail(m.file, fmt::format("initializer '{}': external data file '{}' has {} bytes, the tensor needs bytes {} "
                                     "to {} (truncated?)", t.name(), location, size, offset, need));
    }
}

}  // namespace

bool is_onnx_file_name(const std::string& file) {
    const std::string suffix = ".onnx";
    if (file.size() < suffix.size()) return false;
    return std::equal(suffix.rbegin(), suffix.rend(), file.rbegin(),
                      [](char s, char c) { return std::tolower(static_cast<unsigned char>(c)) == s; });
}

namespace {

// An initializer holds exactly its shape's elements: raw data of another
// length (or fewer typed values) would be read past its end or as zeros.
void check_initializer_sizes(const LoadedModel& m) {
    using TP = ::onnx::TensorProto;
    for (const TP& t : m.model.graph().initializer()) {
        if (t.data_location() == TP::EXTERNAL || element_bytes(t.data_type()) == 0) continue;
        std::int64_t n = 1;
        bool sane = true;
        for (const auto d : t.dims()) {
            if (d < 0 || (d > 0 && n > (std::int64_t(1) << 40) / d)) sane = false;
            else n *= d;
        }
        if (!sane) continue;  // the checker and the importer refuse such shapes
        const std::string what = fmt::format("initializer '{}': its shape [{}] of {}", t.name(), fmt::join(t.dims(), ", "),
                                             TP::DataType_Name(static_cast<TP::DataType>(t.data_type())));
        if (t.has_raw_data()) {
            const auto need = static_cast<std::uint64_t>(n) * element_bytes(t.data_type());
            if (t.raw_data().size() != need)
                fail(m.file, fmt::format("{} needs {} bytes of raw data, it holds {}", what, need, t.raw_data().size()));
            continue;
        }
        const auto have = t.float_data_size() + t.int32_data_size() + t.int64_data_size() + t.double_data_size() +
                          t.uint64_data_size();
        if (have < n) fail(m.file, fmt::format("{} needs {} values, it holds {}", what, n, have));
    }
}

// An older model is brought to kMinOpset by libonnx's version converter
// (the adapters ONNX ships for each op change), after the checker passed
// it: the importer then reads one set of op semantics.
void convert_opset(LoadedModel& m) {
    // The converter first builds libonnx's IR, which dereferences the
    // producer of every graph output and value_info name unchecked: an
    // output nothing defines is refused here, value_info (inference redoes
    // it) dropped.
    auto& g = *m.model.mutable_graph();
    g.clear_value_info();
    std::set<std::string> defined;
    for (const auto& i : g.input()) defined.insert(i.name());
    for (const auto& t : g.initializer()) defined.insert(t.name());
    for (const auto& n : g.node())
        for (const auto& o : n.output()) defined.insert(o);
    for (const auto& o : g.output())
        if (!defined.count(o.name()))
            fail(m.file, fmt::format("graph output '{}' is not produced by any node, input or initializer; its ops: {}", o.name(),
                                     op_types_of(m.model)));
    ::onnx::ModelProto converted;
    try {
        converted = ::onnx::version_conversion::ConvertVersion(m.model, kMinOpset);
    } catch (const std::exception& e) {
        fail(m.file, fmt::format("opset {} could not be converted to opset {} (onnx version converter: {}); its ops: {}",
                                 m.opset, kMinOpset, first_line(e.what()), op_types_of(m.model)));
    }
    m.file_ops = op_types_of(m.model);
    m.model.Swap(&converted);
    m.converted_from = m.opset;
    m.opset = kMinOpset;
}

// Everything after the parse: what makes the message a model npusim reads.
void check_loaded(LoadedModel& m) {
    const std::string& file = m.file;
    if (m.model.ir_version() <= 0 || !m.model.has_graph())
        fail(file, "not an ONNX model: no ir_version or no graph (another protobuf message, or truncated)");
    if (m.model.graph().node_size() == 0) fail(file, "the model's graph has no nodes");

    bool found = false;
    for (const auto& o : m.model.opset_import()) {
        if (o.domain().empty() || o.domain() == "ai.onnx") {
            m.opset = static_cast<int>(o.version());
            found = true;
        }
    }
    if (!found) fail(file, "the model imports no opset of the default ONNX domain (ai.onnx); its ops: " + op_types_of(m.model));
    if (m.opset < kMinConvertedOpset || m.opset > kMaxOpset)
        fail(file, fmt::format("opset {} is not supported (supported: {} to {}, {} to {} converted to {}); convert the "
                               "model with onnx.version_converter.convert_version(model, {}); its ops: {}",
                               m.opset, kMinOpset, kMaxOpset, kMinConvertedOpset, kMinOpset - 1, kMinOpset,
                               std::clamp(m.opset, kMinOpset, kMaxOpset), op_types_of(m.model)));
    check_external_data(m);
    try {
        // check_model(ModelProto) looks for external data in the working
        // folder; this is its body with the model's folder set.
        ::onnx::checker::CheckerContext ctx;
        if (m.model.ir_version() > ::onnx::IR_VERSION)
            fail(file, fmt::format("ir_version {} is newer than this ONNX library reads ({})", m.model.ir_version(),
                                   static_cast<int>(::onnx::IR_VERSION)));
        ctx.set_ir_version(static_cast<int>(m.model.ir_version()));
        std::unordered_map<std::string, int> opsets;
        for (const auto& o : m.model.opset_import()) opsets[o.domain()] = static_cast<int>(o.version());
        ctx.set_opset_imports(opsets);
        ctx.set_model_dir(m.dir);
        ::onnx::checker::LexicalScopeContext lex;
        ::onnx::checker::check_graph(m.model.graph(), ctx, lex);
        if (ctx.get_ir_version() >= 8) ::onnx::checker::check_model_local_functions(m.model, ctx, lex);
    } catch (const InputError&) {
        throw;
    } catch (const std::exception& e) {
        fail(file, "invalid ONNX model (onnx checker): " + first_line(e.what()) + "; its ops: " + op_types_of(m.model));
    }
    // The checker lets a zero stride through, and libonnx's Conv/Pool shape
    // inference then divides by it (SIGFPE): window attributes must be >= 1.
    for (const auto& n : m.model.graph().node())
        for (const auto& a : n.attribute()) {
            if (a.name() != "strides" && a.name() != "dilations" && a.name() != "kernel_shape" && a.name() != "blocksize")
                continue;
            std::vector<std::int64_t> values(a.ints().begin(), a.ints().end());
            if (a.type() == ::onnx::AttributeProto::INT) values.push_back(a.i());
            for (const auto v : values)
                if (v < 1)
                    fail(file, fmt::format("node '{}' ({}): attribute {} must be >= 1, got {}", n.name(), n.op_type(), a.name(), v));
        }
    check_initializer_sizes(m);
    if (m.opset < kMinOpset) convert_opset(m);
}

}  // namespace

std::string op_types_of(const ::onnx::ModelProto& model) {
    std::map<std::string, int> ops;
    for (const auto& n : model.graph().node()) ++ops[(n.domain().empty() ? "" : n.domain() + ":") + n.op_type()];
    std::string list;
    for (const auto& [op, k] : ops) list += fmt::format("{}{} x{}", list.empty() ? "" : ", ", op, k);
    return list.empty() ? "none" : list;
}

LoadedModel load_model_bytes(const std::string& bytes, const std::string& file, const std::string& dir) {
    LoadedModel m;
    m.file = file;
    m.dir = dir;
    if (bytes.empty()) fail(file, "empty file; expected an ONNX model");
    if (!m.model.ParseFromString(bytes))
        fail(file, "not an ONNX model: the bytes are not a protobuf ModelProto (truncated, or another format)");
    check_loaded(m);
    return m;
}

LoadedModel load_model_file(const std::string& file) {
    std::error_code ec;
    if (!fs::is_regular_file(file, ec)) fail(file, "cannot read ONNX model: no such file");
    const auto size = fs::file_size(file, ec);
    if (ec || size > kMaxModelFileBytes)
        fail(file, fmt::format("ONNX model file too large ({} bytes; at most {})", size, kMaxModelFileBytes));
    if (size == 0) fail(file, "empty file; expected an ONNX model");
    std::ifstream in(file, std::ios::binary);
    if (!in) fail(file, "cannot read ONNX model");
    LoadedModel m;
    m.file = file;
    const fs::path parent = fs::path(file).parent_path();
    m.dir = parent.empty() ? "." : parent.string();
    // Parsed from the stream: a 100 MB model is not held twice.
    if (!m.model.ParseFromIstream(&in))
        fail(file, "not an ONNX model: the bytes are not a protobuf ModelProto (truncated, or another format)");
    check_loaded(m);
    return m;
}

}  // namespace npusim::onnx_import
