#include "config/schema.hpp"

#include <algorithm>
#include <set>
#include <sstream>

#include <fmt/format.h>

namespace npusim {
namespace {

using json = nlohmann::json;
using Apply = std::function<void(ChipParams&, const json&)>;

// Fluent builder so each table row reads as one line of facts.
class Key {
public:
    Key(std::string path, ValueType type) {
        s_.path = std::move(path);
        s_.type = type;
    }
    Key& unit(std::string u) { s_.unit = std::move(u); return *this; }
    Key& def(json v) { s_.default_value = std::move(v); return *this; }
    Key& default_note(std::string n) { s_.default_note = std::move(n); return *this; }
    Key& required() { s_.required = true; s_.default_value = nullptr; return *this; }
    Key& at_least(double v) { s_.min = Bound{v, true}; return *this; }
    Key& above(double v) { s_.min = Bound{v, false}; return *this; }
    Key& at_most(double v) { s_.max = Bound{v, true}; return *this; }
    Key& one_of(std::vector<std::string> v) { s_.allowed = std::move(v); return *this; }
    Key& kind(std::string k) { s_.workload_kind = std::move(k); return *this; }
    Key& meaning(std::string m) { s_.meaning = std::move(m); return *this; }
    Key& apply(Apply a) { s_.apply = std::move(a); return *this; }

    // Binds the key to a ChipParams field: the default is the field's
    // initialiser (chip_params.hpp stays the one place defaults live) and the
    // validated value is copied into the field.
    template <class G, class T>
    Key& field(G ChipParams::*group, T G::*member) {
        static const ChipParams defaults;
        if (!s_.required) s_.default_value = (defaults.*group).*member;
        s_.apply = [group, member](ChipParams& c, const json& v) { (c.*group).*member = v.get<T>(); };
        return *this;
    }
    template <class T>
    Key& field(T ChipParams::*member) {
        static const ChipParams defaults;
        if (!s_.required) s_.default_value = defaults.*member;
        s_.apply = [member](ChipParams& c, const json& v) { c.*member = v.get<T>(); };
        return *this;
    }

    operator KeySpec() const { return s_; }  // NOLINT: builder converts implicitly

private:
    KeySpec s_;
};

// Sane upper bounds: large enough for any real or imagined chip, small enough
// that products downstream (bytes = KB * 1024 * count ...) cannot overflow.
constexpr double kMaxCores = 4096;
constexpr double kMaxKb = 1024.0 * 1024.0;      // 1 GB expressed in KB
constexpr double kMaxBytesPerCycle = 1048576;   // 1 MB per cycle per port
constexpr double kMaxGbps = 1e6;                // 1 PB/s
constexpr double kMaxNs = 1e6;                  // 1 ms
constexpr double kMaxCycles = 1e6;

Key integer(std::string path) { return Key(std::move(path), ValueType::integer); }
Key number(std::string path) { return Key(std::move(path), ValueType::number); }

std::vector<KeySpec> build_keys() {
    using VT = ValueType;
    std::vector<KeySpec> k;

    // --- chip: top level -------------------------------------------------
    k.push_back(Key("chip.name", VT::string)
                    .def("")
                    .default_note("chip file name without `.json`")
                    .meaning("Chip name, echoed into stats and traces.")
                    .field(&ChipParams::name));
    k.push_back(Key("chip.notes", VT::string_or_strings)
                    .def(json::array())
                    .meaning("Free text: sources of the figures, which ones are estimates. Not read by the simulator."));
    k.push_back(number("chip.clock_ghz").unit("GHz").required().above(0).at_most(100)
                    .meaning("Core clock; all cycle counts in stats are in this clock.")
                    .field(&ChipParams::clock_ghz));
    k.push_back(Key("chip.layout", VT::enumeration)
                    .one_of({"coupled", "split"})
                    .def("split")
                    .meaning("`coupled`: one core holds cube and vector units; `split`: separate AIC (cube) and AIV (vector) cores.")
                    .apply([](ChipParams& c, const json& v) {
                        c.layout = v.get<std::string>() == "coupled" ? CoreLayout::coupled : CoreLayout::split;
                    }));

    // --- chip.cores.cube ------------------------------------------------
    k.push_back(integer("chip.cores.cube.count").unit("cores").required().at_least(0).at_most(kMaxCores)
                    .meaning("Number of cube (matrix) cores or units on the die.")
                    .field(&ChipParams::cube, &CubeParams::count));
    k.push_back(integer("chip.cores.cube.shape_m").unit("elements").at_least(1).at_most(1024)
                    .meaning("Cube fractal M: rows of A per cube cycle (fp16).")
                    .field(&ChipParams::cube, &CubeParams::shape_m));
    k.push_back(integer("chip.cores.cube.shape_k").unit("elements").at_least(1).at_most(1024)
                    .meaning("Cube fractal K: reduction depth per cube cycle (fp16; int8 doubles it).")
                    .field(&ChipParams::cube, &CubeParams::shape_k));
    k.push_back(integer("chip.cores.cube.shape_n").unit("elements").at_least(1).at_most(1024)
                    .meaning("Cube fractal N: columns of B per cube cycle (fp16).")
                    .field(&ChipParams::cube, &CubeParams::shape_n));
    k.push_back(number("chip.cores.cube.gm_bytes_per_cycle").unit("B/cycle").above(0).at_most(kMaxBytesPerCycle)
                    .meaning("Per-core port to L2/GM used by MTE2 loads and FixPipe stores.")
                    .field(&ChipParams::cube, &CubeParams::gm_bytes_per_cycle));
    k.push_back(number("chip.cores.cube.l1_to_l0_bytes_per_cycle").unit("B/cycle").above(0).at_most(kMaxBytesPerCycle)
                    .meaning("MTE1 rate from L1 into L0A/L0B.")
                    .field(&ChipParams::cube, &CubeParams::l1_to_l0_bytes_per_cycle));
    k.push_back(number("chip.cores.cube.fixpipe_bytes_per_cycle").unit("B/cycle").above(0).at_most(kMaxBytesPerCycle)
                    .meaning("FixPipe rate from L0C to L1/UB (on-core).")
                    .field(&ChipParams::cube, &CubeParams::fixpipe_bytes_per_cycle));
    k.push_back(integer("chip.cores.cube.task_start_cycles").unit("cycles").at_least(0).at_most(kMaxCycles)
                    .meaning("Fixed cost of entering a kernel on a cube core.")
                    .field(&ChipParams::cube, &CubeParams::task_start_cycles));

    // --- chip.cores.vector ----------------------------------------------
    k.push_back(integer("chip.cores.vector.count").unit("cores").required().at_least(0).at_most(kMaxCores)
                    .meaning("Number of vector cores or units on the die.")
                    .field(&ChipParams::vector, &VectorParams::count));
    k.push_back(integer("chip.cores.vector.repeat_bytes").unit("B").at_least(1).at_most(65536)
                    .meaning("Bytes processed by one V-pipe repeat (one cycle at cost 1).")
                    .field(&ChipParams::vector, &VectorParams::repeat_bytes));
    k.push_back(number("chip.cores.vector.gm_bytes_per_cycle").unit("B/cycle").above(0).at_most(kMaxBytesPerCycle)
                    .meaning("Per-core port to L2/GM used by MTE2 loads and MTE3 stores.")
                    .field(&ChipParams::vector, &VectorParams::gm_bytes_per_cycle));
    k.push_back(number("chip.cores.vector.ub_bytes_per_cycle").unit("B/cycle").above(0).at_most(kMaxBytesPerCycle)
                    .meaning("On-core moves into and out of UB.")
                    .field(&ChipParams::vector, &VectorParams::ub_bytes_per_cycle));
    k.push_back(integer("chip.cores.vector.tile_kb").unit("KB").at_least(1).at_most(kMaxKb)
                    .meaning("Chunk one vector instruction sequence moves through UB; double-buffered, so 2x must fit in UB.")
                    .field(&ChipParams::vector, &VectorParams::tile_kb));
    k.push_back(integer("chip.cores.vector.task_start_cycles").unit("cycles").at_least(0).at_most(kMaxCycles)
                    .meaning("Fixed cost of entering a kernel on a vector core.")
                    .field(&ChipParams::vector, &VectorParams::task_start_cycles));

    // --- chip.cores.scalar ----------------------------------------------
    k.push_back(integer("chip.cores.scalar.count").unit("cores").at_least(1).at_most(kMaxCores)
                    .meaning("Scalar (control) cores that fetch descriptors and dispatch tasks.")
                    .field(&ChipParams::scalar, &ScalarParams::count));
    k.push_back(integer("chip.cores.scalar.dispatch_cycles").unit("cycles").at_least(0).at_most(kMaxCycles)
                    .meaning("Cost per dispatched task, serial on one scalar core.")
                    .field(&ChipParams::scalar, &ScalarParams::dispatch_cycles));

    // --- chip.buffers -----------------------------------------------------
    k.push_back(integer("chip.buffers.ub_kb").unit("KB").required().at_least(1).at_most(kMaxKb)
                    .meaning("Unified Buffer per vector core (vector operands).")
                    .field(&ChipParams::buffers, &BufferParams::ub_kb));
    k.push_back(integer("chip.buffers.l1_kb").unit("KB").at_least(1).at_most(kMaxKb)
                    .meaning("L1 buffer per cube core (staging for L0A/L0B).")
                    .field(&ChipParams::buffers, &BufferParams::l1_kb));
    k.push_back(integer("chip.buffers.l0a_kb").unit("KB").at_least(1).at_most(kMaxKb)
                    .meaning("L0A per cube core (left operand).")
                    .field(&ChipParams::buffers, &BufferParams::l0a_kb));
    k.push_back(integer("chip.buffers.l0b_kb").unit("KB").at_least(1).at_most(kMaxKb)
                    .meaning("L0B per cube core (right operand).")
                    .field(&ChipParams::buffers, &BufferParams::l0b_kb));
    k.push_back(integer("chip.buffers.l0c_kb").unit("KB").at_least(1).at_most(kMaxKb)
                    .meaning("L0C per cube core (accumulator).")
                    .field(&ChipParams::buffers, &BufferParams::l0c_kb));

    // --- chip.l2 ----------------------------------------------------------
    k.push_back(number("chip.l2.size_mb").unit("MB").above(0).at_most(kMaxKb)
                    .meaning("Shared L2 capacity, used by the hit (recency) model.")
                    .field(&ChipParams::l2, &L2Params::size_mb));
    k.push_back(number("chip.l2.bandwidth_gbps").unit("GB/s").above(0).at_most(kMaxGbps)
                    .meaning("Aggregate L2 bandwidth shared fairly by all cores.")
                    .field(&ChipParams::l2, &L2Params::bandwidth_gbps));
    k.push_back(number("chip.l2.latency_ns").unit("ns").at_least(0).at_most(kMaxNs)
                    .meaning("Latency of an L2 hit.")
                    .field(&ChipParams::l2, &L2Params::latency_ns));
    k.push_back(integer("chip.l2.region_kb").unit("KB").at_least(1).at_most(kMaxKb)
                    .meaning("Granularity of address ranges tracked by the L2 hit model.")
                    .field(&ChipParams::l2, &L2Params::region_kb));

    // --- chip.hbm -------------------------------------------------------
    k.push_back(number("chip.hbm.bandwidth_gbps").unit("GB/s").required().above(0).at_most(kMaxGbps)
                    .meaning("Aggregate HBM (GM) bandwidth of the die, shared by all cores.")
                    .field(&ChipParams::hbm, &HbmParams::bandwidth_gbps));
    k.push_back(number("chip.hbm.latency_ns").unit("ns").at_least(0).at_most(kMaxNs)
                    .meaning("Latency of an access that misses L2.")
                    .field(&ChipParams::hbm, &HbmParams::latency_ns));
    k.push_back(number("chip.hbm.size_gb").unit("GB").above(0).at_most(kMaxKb)
                    .meaning("HBM capacity of the die.")
                    .field(&ChipParams::hbm, &HbmParams::size_gb));

    // --- workload ---------------------------------------------------------
    // A new workload kind adds its name to workload.kind's list, its keys
    // with .kind("name") and a section in build_sections().
    k.push_back(Key("workload.kind", VT::enumeration)
                    .one_of({"tasks", "graph"})
                    .required()
                    .meaning("What the workload is; selects which other workload keys exist."));
    k.push_back(Key("workload.file", VT::string)
                    .kind("tasks")
                    .required()
                    .meaning("Task-descriptor stream (JSON Lines) to replay; in a `.json` workload file, relative to that file."));

    // Kind "graph": a model graph compiled on the fly (DESIGN §4.6).
    k.push_back(Key("workload.file", VT::string)
                    .kind("graph")
                    .required()
                    .meaning("The model graph file (set from `--workload`)."));
    k.push_back(Key("workload.batch", VT::integer).kind("graph").def(1).at_least(1).at_most(65536)
                    .meaning("Batch size: the graph's `batch` dimension."));
    k.push_back(Key("workload.sync", VT::enumeration).kind("graph").def("tile").one_of({"op", "tile"})
                    .meaning("Event granularity: `op` waits for all tiles of a producer, `tile` only for the tiles a task reads."));
    k.push_back(Key("workload.input_layout", VT::enumeration).kind("graph").def("NCHW").one_of({"NCHW", "NC1HWC0"})
                    .meaning("Layout the framework hands 4-D graph inputs over in; `NC1HWC0` needs no input conversion."));
    k.push_back(Key("workload.passes.fold_bn", VT::boolean).kind("graph").def(true)
                    .meaning("Fold BatchNorm into the preceding Conv2D's weights and bias."));
    k.push_back(Key("workload.passes.fuse_activation", VT::boolean).kind("graph").def(true)
                    .meaning("Apply ReLU in the Cube core's FixPipe instead of a separate Vector task."));
    k.push_back(Key("workload.passes.fuse_vector", VT::boolean).kind("graph").def(true)
                    .meaning("Fuse chains of element-wise Vector ops into one task (data enters UB once)."));
    k.push_back(Key("workload.passes.hoist_layout", VT::boolean).kind("graph").def(true)
                    .meaning("Merge FormatConvert tasks per tensor and hoist them toward the graph inputs."));
    k.push_back(Key("workload.fusion_boundary", VT::enumeration).kind("graph").def("auto").one_of({"auto", "fuse", "split"})
                    .meaning("Cube op followed by heavy Vector work: decide by cost (`auto`) or force fusing / splitting."));
    k.push_back(Key("workload.dims", VT::object).kind("graph").def(json::object())
                    .meaning("Values for the graph's symbolic dimensions, e.g. `{\"seq_len\": 256}` (unset ones keep the graph's defaults)."));
    k.push_back(Key("workload.tiling", VT::object).kind("graph").def(json::object())
                    .meaning("Forced tilings by node name, e.g. `{\"conv1\": {\"m_blocks\": 2, \"n_blocks\": 8}}` (`tiles` for Vector ops)."));
    return k;
}

std::vector<SectionSpec> build_sections() {
    return {
        {"chip", "", "Chip", "Top-level keys of a chip file."},
        {"chip.cores.cube", "", "Cube cores", "Matrix cores (AIC on split parts): MTE2 -> L1 -> MTE1 -> L0A/L0B -> cube -> L0C -> FixPipe."},
        {"chip.cores.vector", "", "Vector cores", "Vector cores (AIV on split parts): MTE2 -> UB -> V pipe -> UB -> MTE3."},
        {"chip.cores.scalar", "", "Scalar cores", "Control cores that fetch task descriptors, resolve events and dispatch."},
        {"chip.buffers", "", "On-core buffers", "Buffer capacities per core; tiles must fit in them."},
        {"chip.l2", "", "L2", "Shared L2 of the die, in front of HBM."},
        {"chip.hbm", "", "HBM", "Global memory of the die."},
        {"workload", "graph", "Workload kind `graph`",
         "Compiles a model graph (docs/graph-format.md) on the fly. Given as `--workload MODEL.json`; the graph file's own "
         "`workload` object gives per-model defaults, `--set workload.*` overrides them."},
        {"workload.passes", "graph", "Compiler passes (kind `graph`)", "Each pass of the built-in compiler, switchable."},
        {"workload", "tasks", "Workload kind `tasks`",
         "Replays a task-descriptor stream (DESIGN §4.3). Given directly as `--workload FILE.jsonl`, the section is "
         "`{\"kind\": \"tasks\", \"file\": \"FILE.jsonl\"}`."},
    };
}

std::string parent_of(const std::string& path) {
    const auto dot = path.rfind('.');
    return dot == std::string::npos ? std::string() : path.substr(0, dot);
}

std::string escape_cell(std::string s) {
    // Table cells cannot hold a bare '|'.
    std::string out;
    for (char c : s) {
        if (c == '|') out += "\\|";
        else out += c;
    }
    return out;
}

std::string type_cell(const KeySpec& k) {
    switch (k.type) {
        case ValueType::integer: return "integer";
        case ValueType::number: return "number";
        case ValueType::boolean: return "boolean";
        case ValueType::string: return "string";
        case ValueType::string_or_strings: return "string or list of strings";
        case ValueType::object: return "object";
        case ValueType::enumeration: {
            std::string s = "one of ";
            for (std::size_t i = 0; i < k.allowed.size(); ++i) {
                if (i) s += ", ";
                s += "`" + k.allowed[i] + "`";
            }
            return s;
        }
    }
    return "?";
}

std::string default_cell(const KeySpec& k) {
    if (k.required) return "**required**";
    if (!k.default_note.empty()) return k.default_note;
    const json& d = k.default_value;
    if (d.is_number()) return format_number(d.get<double>());
    return "`" + d.dump() + "`";
}

std::string range_cell(const KeySpec& k) {
    std::string s;
    if (k.min) s += std::string(k.min->inclusive ? ">= " : "> ") + format_number(k.min->value);
    if (k.max) {
        if (!s.empty()) s += ", ";
        s += std::string(k.max->inclusive ? "<= " : "< ") + format_number(k.max->value);
    }
    return s.empty() ? "—" : s;
}

}  // namespace

const std::vector<KeySpec>& config_keys() {
    static const std::vector<KeySpec> keys = build_keys();
    return keys;
}

const std::vector<SectionSpec>& config_sections() {
    static const std::vector<SectionSpec> sections = build_sections();
    return sections;
}

const std::vector<std::string>& workload_kinds() {
    static const std::vector<std::string> kinds = find_key("workload.kind", "")->allowed;
    return kinds;
}

bool key_applies(const KeySpec& key, const std::string& kind) {
    return key.workload_kind.empty() || key.workload_kind == kind;
}

const KeySpec* find_key(const std::string& path, const std::string& kind) {
    for (const auto& k : config_keys())
        if (k.path == path && key_applies(k, kind)) return &k;
    return nullptr;
}

bool is_group(const std::string& path, const std::string& kind) {
    const std::string prefix = path + ".";
    for (const auto& k : config_keys())
        if (key_applies(k, kind) && k.path.compare(0, prefix.size(), prefix) == 0) return true;
    return false;
}

std::vector<std::string> child_names(const std::string& path, const std::string& kind) {
    const std::string prefix = path.empty() ? std::string() : path + ".";
    std::set<std::string> names;
    for (const auto& k : config_keys()) {
        if (!key_applies(k, kind) || k.path.compare(0, prefix.size(), prefix) != 0) continue;
        const std::string rest = k.path.substr(prefix.size());
        names.insert(rest.substr(0, rest.find('.')));
    }
    return {names.begin(), names.end()};
}

std::string type_phrase(const KeySpec& k) {
    switch (k.type) {
        case ValueType::integer: return "an integer";
        case ValueType::number: return "a number";
        case ValueType::boolean: return "true or false";
        case ValueType::string: return "a string";
        case ValueType::string_or_strings: return "a string or a list of strings";
        case ValueType::object: return "an object";
        case ValueType::enumeration: {
            std::string s = "one of ";
            for (std::size_t i = 0; i < k.allowed.size(); ++i) {
                if (i) s += ", ";
                s += "'" + k.allowed[i] + "'";
            }
            return s;
        }
    }
    return "?";
}

std::string format_number(double v) { return fmt::format("{}", v); }

std::string configuration_reference_markdown() {
    std::ostringstream md;
    md << "# Configuration reference\n\n"
          "<!-- Generated from the schema table in sim/config/schema.cpp by\n"
          "     configuration_reference_markdown(); do not edit by hand. A test in\n"
          "     tests/test_config.cpp fails when this file and the table disagree;\n"
          "     regenerate with: build/npusim config-reference > docs/configuration.md\n"
          "     (or NPUSIM_UPDATE_DOCS=1 build/npusim_tests '[docs]') -->\n\n"
          "A run is one JSON document `{\"chip\": {...}, \"workload\": {...}}` (DESIGN §4.2). "
          "It is built from the chip file (`--chip`), the workload file (`--workload`) and the "
          "`--set` overrides, checked against the table below, completed with defaults, and "
          "echoed as `config` in every statistics file.\n\n"
          "- **Chip file.** A JSON object holding the `chip` keys below without the `chip.` "
          "prefix. `\"extends\": \"other.json\"` (a path relative to the extending file) deep-merges "
          "the other file underneath: objects merge key by key, the extending file wins, numbers, "
          "strings and lists are replaced. Chains are allowed; a cycle is an error. After "
          "extends, every key marked **required** must be present; every other key missing "
          "gets its default, so the resolved document is complete.\n"
          "- **Workload.** A `.jsonl` file is a task stream: the section becomes "
          "`{\"kind\": \"tasks\", \"file\": PATH}`. A `.json` file is a JSON object with a string "
          "`kind`; each kind has its own section of keys below.\n"
          "- **`--set PATH=VALUE`** (repeatable, applied in order after the files) changes one "
          "key by dotted path, e.g. `--set chip.hbm.bandwidth_gbps=3200`. PATH starts with "
          "`chip.` or `workload.` and must name a key below. VALUE is read as JSON when it "
          "parses (`3200`, `true`, `\"text\"`, `{\"bandwidth_gbps\": 800}` merges into a group), "
          "otherwise as plain text; for string keys the text is always taken as written.\n"
          "- **Errors** exit with code 2. The message names the file (or the `--set` argument), "
          "the JSON line:column or the full key path, and what was expected; unknown keys get a "
          "did-you-mean. Integers must be whole numbers (`2.0` is read as 2, `1.5` is an error). "
          "Bounds in the *Range* column keep every value in a range the simulator computes with "
          "safely. Across keys: the die needs at least one cube or vector core, and "
          "2 x `chip.cores.vector.tile_kb` (double buffering) must fit in `chip.buffers.ub_kb`.\n";

    for (const auto& sec : config_sections()) {
        md << "\n## `" << sec.path << "`";
        if (!sec.workload_kind.empty()) md << " (kind `" << sec.workload_kind << "`)";
        md << " — " << sec.title << "\n\n" << sec.meaning << "\n\n";
        md << "| Key | Type | Unit | Default | Range | Meaning |\n";
        md << "|---|---|---|---|---|---|\n";
        for (const auto& k : config_keys()) {
            if (parent_of(k.path) != sec.path) continue;
            if (!sec.workload_kind.empty() && !key_applies(k, sec.workload_kind)) continue;
            md << "| `" << k.path << "` | " << escape_cell(type_cell(k)) << " | "
               << (k.unit.empty() ? "—" : k.unit) << " | " << escape_cell(default_cell(k)) << " | "
               << range_cell(k) << " | " << escape_cell(k.meaning) << " |\n";
        }
    }
    return md.str();
}

}  // namespace npusim
