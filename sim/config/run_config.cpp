// Builds the run document: chip file (+ extends chain) -> workload section ->
// --set overrides -> validation against the schema table -> ChipParams.
#include "config/run_config.hpp"

#include <algorithm>
#include <cctype>
#include <cmath>
#include <filesystem>
#include <functional>
#include <memory>
#include <map>
#include <tuple>

#include <nlohmann/json.hpp>

#include "common/arith.hpp"
#include "common/did_you_mean.hpp"
#include "common/errors.hpp"
#include "common/input_limits.hpp"
#include "common/json_file.hpp"
#include "config/schema.hpp"
#include "config/workload_kind.hpp"

namespace npusim {

using json = nlohmann::json;
namespace fs = std::filesystem;

struct RunConfig::Impl {
    json doc;
    ChipParams chip;
    WorkloadParams workload;
    std::string workload_file;
    WorkloadKind kind = WorkloadKind::none;
    std::vector<std::string> warnings;
    std::function<std::string(const std::string&)> source_of;  // RunConfig::source_of
};

namespace {

[[noreturn]] void fail(const std::string& msg) { throw InputError(msg); }

// ---------------------------------------------------------------------------
// Provenance: which input (a file or a --set argument) last wrote each part of
// the document, so an error names the thing the user has to edit. Recorded at
// the node that was written; lookups walk up to the nearest recorded ancestor.
class Sources {
public:
    int add(std::string label) {
        labels_.push_back(std::move(label));
        return static_cast<int>(labels_.size()) - 1;
    }
    void record(const std::string& path, int source) {
        // What was under `path` was replaced, so forget its old origins.
        const std::string prefix = path + ".";
        for (auto it = at_.lower_bound(prefix); it != at_.end() && it->first.compare(0, prefix.size(), prefix) == 0;)
            it = at_.erase(it);
        at_[path] = source;
    }
    int index(std::string path) const {
        for (;;) {
            const auto it = at_.find(path);
            if (it != at_.end()) return it->second;
            const auto dot = path.rfind('.');
            if (dot == std::string::npos) return 0;
            path.erase(dot);
        }
    }
    // The last input that wrote `path` or anything under it (a --set of
    // workload.streams.moe.cube is a write to workload.streams).
    int latest(const std::string& path) const {
        int i = index(path);
        const std::string prefix = path + ".";
        for (auto it = at_.lower_bound(prefix); it != at_.end() && it->first.compare(0, prefix.size(), prefix) == 0;
             ++it)
            i = std::max(i, it->second);
        return i;
    }
    const std::string& label(const std::string& path) const { return labels_[index(path)]; }
    const std::string& label_at(int i) const { return labels_[i]; }

private:
    std::vector<std::string> labels_;
    std::map<std::string, int> at_;
};

// ---------------------------------------------------------------------------
// Describing values in messages.

// Numbers as written by a person: 1000000000, not 1000000000.0.
std::string number_text(const json& v) { return v.is_number_float() ? format_number(v.get<double>()) : v.dump(); }

// "string \"fast\"", "number 5", "boolean true", "a list", ... for messages.
std::string describe(const json& v) {
    switch (v.type()) {
        case json::value_t::string: {
            std::string s = v.get<std::string>();
            if (s.size() > 60) s = s.substr(0, 57) + "...";
            return "string " + json(s).dump();
        }
        case json::value_t::boolean: return "boolean " + v.dump();
        case json::value_t::null: return "null";
        case json::value_t::object: return "an object";
        case json::value_t::array: return "a list";
        default: return "number " + number_text(v);
    }
}

json parse_json_object_file(const std::string& file, const std::string& what, const std::string& extended_by = "") {
    JsonFileSpec spec;
    spec.what = what;
    if (!extended_by.empty()) spec.note = " (extended by " + extended_by + ")";
    return read_json_file<json>(file, spec);
}

// ---------------------------------------------------------------------------
// Chip file and its extends chain.

struct ChipLayer {
    std::string file;
    json doc;
};

std::string canonical_key(const std::string& file) {
    std::error_code ec;
    const fs::path p = fs::weakly_canonical(file, ec);
    return ec ? fs::absolute(file).lexically_normal().string() : p.string();
}

// Returns the chain from the named file down to its last base.
std::vector<ChipLayer> load_chip_chain(const std::string& chip_file) {
    constexpr std::size_t kMaxDepth = 64;  // cycles are caught earlier; this bounds runaway chains
    std::vector<ChipLayer> chain;
    std::vector<std::string> seen;
    std::string file = chip_file;
    std::string extended_by;
    for (;;) {
        const std::string key = canonical_key(file);
        const auto again = std::find(seen.begin(), seen.end(), key);
        if (again != seen.end()) {
            std::string names;
            for (const auto& layer : chain) names += layer.file + " -> ";
            fail(chip_file + ": extends cycle: " + names + file);
        }
        if (chain.size() >= kMaxDepth) fail(chip_file + ": extends chain longer than 64 files");
        seen.push_back(key);

        json d = parse_json_object_file(file, "chip file", extended_by);
        std::string next;
        if (d.contains("extends")) {
            const json& e = d["extends"];
            if (!e.is_string() || e.get<std::string>().empty())
                fail(file + ": extends: expected a file name (string), got " + describe(e));
            if (e.get<std::string>().find('\0') != std::string::npos)
                fail(file + ": extends: a file name cannot contain a NUL character (\\u0000)");
            const fs::path target(e.get<std::string>());
            next = target.is_absolute() ? target.string()
                                        : (fs::path(file).parent_path() / target).lexically_normal().string();
            d.erase("extends");
        }
        chain.push_back({file, std::move(d)});
        if (next.empty()) return chain;
        extended_by = file;
        file = next;
    }
}

// Deep merge: objects recursively, everything else replaced; records which
// source wrote each replaced node.
void merge_into(json& dst, const json& src, const std::string& path, int source, Sources& sources) {
    for (auto it = src.begin(); it != src.end(); ++it) {
        const std::string p = path + "." + it.key();
        auto d = dst.find(it.key());
        if (d != dst.end() && d->is_object() && it->is_object()) {
            merge_into(*d, *it, p, source, sources);
        } else {
            dst[it.key()] = *it;
            sources.record(p, source);
        }
    }
}

// ---------------------------------------------------------------------------
// Workload section.

// The kind a workload section names; a missing kind is the fault of `missing_label`.
WorkloadKind kind_in(const json& w, const std::string& missing_label, const std::string& kind_label) {
    if (!w.contains("kind"))
        fail(missing_label + ": missing required key workload.kind (one of: " + workload_kind_list() + ")");
    return parse_workload_kind(w["kind"], kind_label);
}

json load_workload(const std::string& workload_file) {
    if (workload_file.empty()) return json::object();  // chip-only use (e.g. lint)
    if (workload_kind_of_file_name(workload_file) == WorkloadKind::tasks)
        return json{{"kind", "tasks"}, {"file", workload_file}};
    // An ONNX model is a graph the compiler imports when it reads it.
    if (workload_kind_of_file_name(workload_file) == WorkloadKind::graph)
        return json{{"kind", "graph"}, {"file", workload_file}};

    json w = parse_json_object_file(workload_file, "workload file");
    switch (kind_in(w, workload_file, workload_file)) {
        case WorkloadKind::graph: {
            // A graph file is the workload itself: the section holds the options
            // (the file's own "workload" object as per-model defaults), not the graph.
            json section = json::object();
            if (w.contains("workload")) {
                if (!w["workload"].is_object())
                    fail(workload_file + ": workload: expected an object of per-model workload options, got " +
                         describe(w["workload"]));
                section = w["workload"];
            }
            section["kind"] = "graph";
            section["file"] = workload_file;
            return section;
        }
        case WorkloadKind::llm:
            // The model's config.json is relative to the run file.
            if (w.contains("model") && w["model"].is_string()) {
                const fs::path f(w["model"].get<std::string>());
                if (!f.empty() && f.is_relative())
                    w["model"] = (fs::path(workload_file).parent_path() / f).lexically_normal().string();
            }
            w["file"] = workload_file;
            return w;
        case WorkloadKind::tasks:
            // A task stream named inside a workload file is relative to that file.
            if (w.contains("file") && w["file"].is_string()) {
                const fs::path f(w["file"].get<std::string>());
                if (!f.empty() && f.is_relative())
                    w["file"] = (fs::path(workload_file).parent_path() / f).lexically_normal().string();
            }
            return w;
        default: return w;
    }
}

std::string current_kind(const json& doc) {
    const json& w = doc["workload"];
    const auto it = w.find("kind");
    return it != w.end() && it->is_string() ? it->get<std::string>() : std::string();
}

// ---------------------------------------------------------------------------
// --set PATH=VALUE


void apply_set(json& doc, const std::string& arg, Sources& sources) {
    const std::string label = "--set " + arg;
    // The document is JSON text: bytes that are not UTF-8 would fail later,
    // when it is written into the stats.
    try {
        (void)json(arg).dump();
    } catch (const json::type_error&) {
        fail(label + ": not valid UTF-8 text");
    }
    if (json_too_deep_at(arg) != std::string::npos)
        fail(label + ": invalid JSON: nested deeper than " + std::to_string(kMaxJsonDepth) + " levels");
    const auto eq = arg.find('=');
    if (eq == std::string::npos || eq == 0)
        fail(label + ": expected PATH=VALUE, e.g. --set chip.hbm.bandwidth_gbps=3200");
    const std::string path = arg.substr(0, eq);
    const std::string text = arg.substr(eq + 1);
    const auto segs = split_key_path(path);
    for (const auto& s : segs)
        if (s.empty()) fail(label + ": empty key name in path '" + path + "'");
    if (segs.size() < 2 || (segs[0] != "chip" && segs[0] != "workload"))
        fail(label + ": path must start with 'chip.' or 'workload.'" +
             (segs.size() < 2 ? std::string() : did_you_mean(segs[0], {"chip", "workload"})));

    // The path must exist in the schema: walk it one level at a time so the
    // error names the first unknown segment and its siblings.
    const std::string kind = current_kind(doc);
    const KeySpec* spec = nullptr;
    std::string parent = segs[0];
    for (std::size_t i = 1; i < segs.size(); ++i) {
        const std::string full = parent + "." + segs[i];
        if ((spec = find_key(full, kind))) {
            if (spec->type == ValueType::object) break;  // its inner keys are the workload's to check
            if (i + 1 != segs.size()) fail(label + ": " + full + " is a single value, not a group of keys");
        } else if (!is_group(full, kind)) {
            if (const std::string retired = retired_key_message(full); !retired.empty()) fail(label + ": " + retired);
            fail(label + ": unknown key '" + segs[i] + "' in " + parent + unknown_key_hint(segs[i], parent, kind));
        }
        parent = full;
    }

    json value = json::parse(text, nullptr, /*allow_exceptions=*/false);
    if (value.is_discarded()) value = text;
    // "--set chip.name=123" means the text 123; only JSON containers stay as parsed.
    if (spec && (spec->type == ValueType::string || spec->type == ValueType::enumeration) && value.is_primitive() &&
        !value.is_string())
        value = text;

    const int source = sources.add(label);
    json* node = &doc;
    for (std::size_t i = 0; i + 1 < segs.size(); ++i) {
        json& next = (*node)[segs[i]];
        if (!next.is_object()) next = json::object();
        node = &next;
    }
    json& slot = (*node)[segs.back()];
    if (slot.is_object() && value.is_object()) {
        merge_into(slot, value, path, source, sources);  // same rule as extends
    } else {
        slot = std::move(value);
        sources.record(path, source);
    }
}

// ---------------------------------------------------------------------------
// Validation against the schema table.

std::string unit_suffix(const KeySpec& k) { return k.unit.empty() ? "" : " (" + k.unit + ")"; }

class Validator {
public:
    Validator(const Sources& sources, std::string kind) : sources_(sources), kind_(std::move(kind)) {}

    // Unknown keys, wrong types and bounds, depth first.
    void check_object(json& obj, const std::string& prefix) const {
        for (auto it = obj.begin(); it != obj.end(); ++it) {
            const std::string full = prefix + "." + it.key();
            if (const KeySpec* spec = find_key(full, kind_)) {
                check_value(*spec, *it, full);
            } else if (is_group(full, kind_)) {
                if (!it->is_object())
                    fail(sources_.label(full) + ": " + full + ": expected an object (a group of keys), got " + describe(*it));
                check_object(*it, full);
            } else {
                if (const std::string retired = retired_key_message(full); !retired.empty())
                    fail(sources_.label(full) + ": " + retired);
                fail(sources_.label(full) + ": unknown key '" + it.key() + "' in " + prefix +
                     unknown_key_hint(it.key(), prefix, kind_));
            }
        }
    }

    // Required keys must exist; every other key gets its default.
    void fill_defaults(json& doc, const std::string& section, const std::string& missing_label) const {
        for (const auto& spec : config_keys()) {
            if (!key_applies(spec, kind_) || spec.path.compare(0, section.size() + 1, section + ".") != 0) continue;
            const auto segs = split_key_path(spec.path);
            json* node = &doc;
            for (std::size_t i = 0; i + 1 < segs.size(); ++i) node = &(*node)[segs[i]];  // groups checked above
            if (node->contains(segs.back())) continue;
            if (spec.required) {
                // "Aggregate HBM ..." stays, "Number of ..." reads as "number of ...".
                std::string meaning = spec.meaning;
                if (meaning.size() > 1 && std::islower(static_cast<unsigned char>(meaning[1])))
                    meaning[0] = static_cast<char>(std::tolower(static_cast<unsigned char>(meaning[0])));
                fail(missing_label + ": missing required key " + spec.path + ", expected " + type_phrase(spec) +
                     unit_suffix(spec) + ": " + meaning);
            }
            (*node)[segs.back()] = spec.default_value;
        }
    }

private:
    void check_value(const KeySpec& spec, json& v, const std::string& path) const {
        const std::string where = sources_.label(path) + ": " + path + ": ";
        const std::string unit = unit_suffix(spec);
        switch (spec.type) {
            case ValueType::integer:
            case ValueType::number: {
                if (!v.is_number()) fail(where + "expected " + type_phrase(spec) + unit + ", got " + describe(v));
                const double x = v.get<double>();
                if (!std::isfinite(x)) fail(where + "expected a finite number" + unit + ", got " + number_text(v));
                if (spec.type == ValueType::integer && v.is_number_float() && std::floor(x) != x)
                    fail(where + "expected an integer" + unit + ", got " + number_text(v));
                if (spec.min && (x < spec.min->value || (!spec.min->inclusive && x == spec.min->value)))
                    fail(where + "expected " + type_phrase(spec) + (spec.min->inclusive ? " >= " : " > ") +
                         format_number(spec.min->value) + unit + ", got " + number_text(v));
                if (spec.max && (x > spec.max->value || (!spec.max->inclusive && x == spec.max->value)))
                    fail(where + "expected " + type_phrase(spec) + (spec.max->inclusive ? " <= " : " < ") +
                         format_number(spec.max->value) + unit + ", got " + number_text(v));
                // Store whole numbers as integers so the echo reads 4, not 4.0.
                if (spec.type == ValueType::integer && v.is_number_float()) v = static_cast<std::int64_t>(x);
                return;
            }
            case ValueType::boolean:
                if (!v.is_boolean()) fail(where + "expected true or false, got " + describe(v));
                return;
            case ValueType::string:
                if (!v.is_string()) fail(where + "expected a string, got " + describe(v));
                // A NUL would cut the text (file names, messages) short.
                if (v.get<std::string>().find('\0') != std::string::npos)
                    fail(where + "expected text without NUL characters (\\u0000)");
                return;
            case ValueType::enumeration: {
                if (path == "workload.kind") {
                    (void)parse_workload_kind(v, sources_.label(path));
                    return;
                }
                const bool ok = v.is_string() &&
                                std::find(spec.allowed.begin(), spec.allowed.end(), v.get<std::string>()) != spec.allowed.end();
                if (!ok)
                    fail(where + "expected " + type_phrase(spec) + ", got " + describe(v) +
                         (v.is_string() ? did_you_mean(v.get<std::string>(), spec.allowed) : std::string()));
                return;
            }
            case ValueType::object:
                if (!v.is_object()) fail(where + "expected an object, got " + describe(v));
                return;
            case ValueType::string_or_strings: {
                bool ok = v.is_string() || v.is_array();
                if (v.is_array())
                    for (const auto& e : v) ok = ok && e.is_string();
                if (!ok) fail(where + "expected a string or a list of strings, got " + describe(v));
                return;
            }
        }
    }

    const Sources& sources_;
    std::string kind_;
};

const json& at_path(const json& doc, const std::string& path) {
    const json* node = &doc;
    for (const auto& s : split_key_path(path)) node = &node->at(s);
    return *node;
}

// A key given where it is not read (schema's only_with: workload.kv_len in
// a prefill run) would change nothing without a word: an error naming both.
// Unless the key came from the workload file and a --set changed the
// deciding key (a decode run file with its kv_len, run with --set
// workload.phase=prefill): that user chose to leave it unread. `given`:
// the document as written, before defaults.
void check_only_with(const json& doc, const json& given, const std::string& kind, const Sources& sources) {
    const int file = sources.index("workload");
    for (const auto& spec : config_keys()) {
        if (spec.only_with.first.empty() || !key_applies(spec, kind)) continue;
        const json* node = &given;
        for (const auto& s : split_key_path(spec.path)) {
            node = node->is_object() && node->contains(s) ? &node->at(s) : nullptr;
            if (!node) break;
        }
        const auto& [key, value] = spec.only_with;
        const json& actual = at_path(doc, key);
        const int from = sources.latest(spec.path);
        if (!node || actual == value || (from == file && sources.latest(key) > file)) continue;
        const std::string v = value.is_string() ? value.get<std::string>() : value.dump();
        fail(sources.label_at(from) + ": " + spec.path + ": read only when " + key + " is " + v + ", but it is " +
             actual.dump() + " here; remove " + spec.path + " or set " + key + " to " + v);
    }
}

// Rules that involve more than one key. The error names the input that last
// touched either key (a --set beats a file).
void cross_checks(const json& doc, const Sources& sources) {
    auto label_of = [&](const std::string& a, const std::string& b) {
        return sources.label_at(std::max(sources.index(a), sources.index(b)));
    };
    const std::int64_t cube = at_path(doc, "chip.cores.cube.count").get<std::int64_t>();
    const std::int64_t vec = at_path(doc, "chip.cores.vector.count").get<std::int64_t>();
    if (cube + vec < 1)
        fail(label_of("chip.cores.cube.count", "chip.cores.vector.count") +
             ": chip.cores.cube.count + chip.cores.vector.count: the chip needs at least one core, got 0");

    const std::int64_t tile_kb = at_path(doc, "chip.cores.vector.tile_kb").get<std::int64_t>();
    const std::int64_t ub_kb = at_path(doc, "chip.buffers.ub_kb").get<std::int64_t>();
    if (tile_kb * 2 > ub_kb)
        fail(label_of("chip.cores.vector.tile_kb", "chip.buffers.ub_kb") + ": chip.cores.vector.tile_kb = " +
             std::to_string(tile_kb) + " KB is double-buffered (" + std::to_string(tile_kb * 2) +
             " KB) and must fit in chip.buffers.ub_kb = " + std::to_string(ub_kb) + " KB");

    // L2 geometry (hw/l2_cache): ways index a set by bits, lines tile the
    // slice interleave, and one set must fit in the capacity.
    const std::int64_t ways = at_path(doc, "chip.l2.ways").get<std::int64_t>();
    if ((ways & (ways - 1)) != 0)
        fail(sources.label("chip.l2.ways") + ": chip.l2.ways: expected a power of two, got " + std::to_string(ways));
    const std::int64_t line = at_path(doc, "chip.l2.line_bytes").get<std::int64_t>();
    const std::int64_t region_kb = at_path(doc, "chip.l2.region_kb").get<std::int64_t>();
    if ((region_kb * 1024) % line != 0)
        fail(label_of("chip.l2.line_bytes", "chip.l2.region_kb") + ": chip.l2.line_bytes = " + std::to_string(line) +
             " B must divide chip.l2.region_kb = " + std::to_string(region_kb) + " KB");
    if (region_kb * 1024 / line > 64)
        fail(label_of("chip.l2.line_bytes", "chip.l2.region_kb") + ": chip.l2.region_kb = " + std::to_string(region_kb) +
             " KB holds " + std::to_string(region_kb * 1024 / line) + " lines of chip.l2.line_bytes = " + std::to_string(line) +
             " B; one tag covers at most 64");
    const double l2_bytes = at_path(doc, "chip.l2.size_mb").get<double>() * 1024 * 1024;
    if (l2_bytes < static_cast<double>(line))
        fail(label_of("chip.l2.line_bytes", "chip.l2.size_mb") + ": chip.l2.size_mb must hold at least one line of chip.l2.line_bytes = " +
             std::to_string(line) + " B");
    // Fewer bytes than one set would leave the cache to shrink its ways or
    // its tag block behind the user's back: refuse instead.
    const std::int64_t set_kb = ways * region_kb;
    if (l2_bytes < static_cast<double>(set_kb) * 1024)
        fail(label_of("chip.l2.ways", "chip.l2.size_mb") + ": chip.l2.size_mb = " +
             nlohmann::json(l2_bytes / (1024 * 1024)).dump() + " MB holds less than one set: chip.l2.ways = " +
             std::to_string(ways) + " x chip.l2.region_kb = " + std::to_string(region_kb) + " KB = " + std::to_string(set_kb) +
             " KB (fewer ways or a larger L2)");

    // A DataBlock's header is overhead on its payload, and a receiver plane
    // must be able to hold at least one whole block to accept anything.
    const std::int64_t block = at_path(doc, "chip.interconnect.datablock_bytes").get<std::int64_t>();
    const std::int64_t header = at_path(doc, "chip.interconnect.header_bytes").get<std::int64_t>();
    if (header >= block)
        fail(label_of("chip.interconnect.header_bytes", "chip.interconnect.datablock_bytes") +
             ": chip.interconnect.header_bytes = " + std::to_string(header) +
             " B must be less than chip.interconnect.datablock_bytes = " + std::to_string(block) + " B");
    const std::int64_t ingress = at_path(doc, "chip.interconnect.ingress_buffer_bytes").get<std::int64_t>();
    if (ingress < block + header)
        fail(label_of("chip.interconnect.ingress_buffer_bytes", "chip.interconnect.datablock_bytes") +
             ": chip.interconnect.ingress_buffer_bytes = " + std::to_string(ingress) +
             " B must hold one DataBlock with its header (" + std::to_string(block + header) + " B)");
}

// docs/design.md §4.2: a chip with a mesh must say how big it is. Runs before the
// defaults are filled in, so "has an interconnect section" means the input
// (a chip file or a --set) wrote one.
void check_mesh_keys(const json& doc, const Sources& sources) {
    const json& chip = doc["chip"];
    const auto ic = chip.find("interconnect");
    if (ic == chip.end() || !ic->is_object()) return;
    for (const char* key : {"ranks", "planes", "datablock_bytes"}) {
        if (ic->contains(key)) continue;
        const std::string path = std::string("chip.interconnect.") + key;
        const KeySpec* spec = find_key(path, "");
        fail(sources.label("chip.interconnect") + ": missing required key " + path + " (a chip with an interconnect section must give ranks, planes and datablock_bytes), expected " +
             type_phrase(*spec) + unit_suffix(*spec));
    }
    const std::int64_t block = ic->at("datablock_bytes").get<std::int64_t>();
    if (block % 32 != 0)
        fail(sources.label("chip.interconnect.datablock_bytes") + ": chip.interconnect.datablock_bytes: expected a multiple of 32 (B), got " +
             std::to_string(block));

    // Two tiers (docs/design.md §2 Links): a mesh of more than one rank must say
    // how big a node is and give the latency and bandwidth of every tier that
    // some pair of its ranks uses; no tier silently takes a default.
    const std::int64_t ranks = ic->at("ranks").get<std::int64_t>();
    if (ranks <= 1) return;
    auto missing = [&](const std::string& path, const std::string& why) {
        const KeySpec* spec = find_key(path, "");
        fail(sources.label("chip.interconnect") + ": missing required key " + path + " (" + why + "), expected " +
             type_phrase(*spec) + unit_suffix(*spec));
    };
    if (!ic->contains("node_size"))
        missing("chip.interconnect.node_size", "a mesh of " + std::to_string(ranks) + " ranks must say how many share a node");
    const std::int64_t node = ic->at("node_size").get<std::int64_t>();
    const std::int64_t nodes = ceil_div(ranks, node);
    for (const auto& [tier, used, why] :
         {std::tuple{"intra_node", node > 1, std::string("ranks of one node write to each other through it")},
          std::tuple{"inter_node", ranks > node,
                     std::to_string(ranks) + " ranks in nodes of " + std::to_string(node) + " span " +
                         std::to_string(nodes) + " nodes"}}) {
        if (!used) continue;
        const auto t = ic->find(tier);
        for (const char* key : {"latency_ns", "plane_bandwidth_gbps"})
            if (t == ic->end() || !t->contains(key))
                missing(std::string("chip.interconnect.") + tier + "." + key, why);
    }
}

ChipParams to_chip_params(const json& doc) {
    ChipParams c;
    for (const auto& spec : config_keys())
        if (spec.apply) spec.apply(c, at_path(doc, spec.path));
    return c;
}

}  // namespace

// ---------------------------------------------------------------------------

RunConfig RunConfig::load(const std::string& chip_file, const std::string& workload_file,
                          const std::vector<std::string>& set_overrides) {
    // Names from a study or golden file may hold a NUL (\u0000), which would
    // cut the name short when the file is opened and in every message.
    for (const std::string* name : {&chip_file, &workload_file})
        if (name->find('\0') != std::string::npos) {
            std::string shown;
            for (const char c : *name) shown += c == '\0' ? std::string("\\u0000") : std::string(1, c);
            fail(shown + ": a file name cannot contain a NUL character");
        }
    Sources sources;
    json doc = json::object();

    // Chip: merge from the last base up, so the named file wins.
    const auto chain = load_chip_chain(chip_file);
    std::vector<int> layer_source(chain.size());
    for (std::size_t i = chain.size(); i-- > 0;) layer_source[i] = sources.add(chain[i].file);
    sources.record("chip", layer_source[0]);  // defaults and missing keys belong to the named file
    doc["chip"] = json::object();
    for (std::size_t i = chain.size(); i-- > 0;) merge_into(doc["chip"], chain[i].doc, "chip", layer_source[i], sources);
    if (!doc["chip"].contains("name")) doc["chip"]["name"] = fs::path(chip_file).stem().string();

    // Workload.
    const int workload_source = sources.add(workload_file.empty() ? chip_file : workload_file);
    doc["workload"] = load_workload(workload_file);
    sources.record("workload", workload_source);

    for (const auto& arg : set_overrides) apply_set(doc, arg, sources);

    // Chip section.
    const Validator chip_check(sources, "");
    chip_check.check_object(doc["chip"], "chip");
    check_mesh_keys(doc, sources);
    chip_check.fill_defaults(doc, "chip", chip_file);
    cross_checks(doc, sources);

    // Workload section: its kind decides which keys exist.
    json& w = doc["workload"];
    WorkloadKind kind = WorkloadKind::none;
    // Given by the workload file or --set, not filled in as the default: a
    // graph's own dims.batch holds unless the user sets workload.batch.
    const bool batch_given = w.is_object() && w.contains("batch");
    if (!w.empty()) {
        kind = kind_in(w, sources.label("workload"), sources.label("workload.kind"));
        const Validator workload_check(sources, to_string(kind));
        workload_check.check_object(w, "workload");
        const json given = {{"workload", w}};
        // Missing keys are the fault of whatever set the kind (file or --set).
        workload_check.fill_defaults(doc, "workload", sources.label("workload.kind"));
        check_only_with(doc, given, to_string(kind), sources);
    }

    auto impl = std::make_shared<Impl>();
    for (const auto& spec : config_keys()) {
        if (!spec.plausible || spec.path.compare(0, 5, "chip.") != 0) continue;
        const std::string w = plausibility_warning(spec, at_path(doc, spec.path).get<double>());
        if (!w.empty()) impl->warnings.push_back(sources.label(spec.path) + ": " + w);
    }
    impl->chip = to_chip_params(doc);
    impl->workload = read_workload_params(doc["workload"], [&](const std::string& path) { return sources.label(path); });
    impl->workload.graph.batch_given = batch_given;
    impl->doc = std::move(doc);
    impl->workload_file = workload_file;
    impl->kind = kind;
    impl->source_of = [kept = std::make_shared<const Sources>(sources)](const std::string& path) {
        return kept->label_at(kept->latest(path));
    };
    RunConfig rc;
    rc.impl_ = std::move(impl);
    return rc;
}

namespace {
// A template so it need not name the private Impl type.
template <class Ptr>
const auto& must(const Ptr& p) {
    if (!p) throw std::logic_error("RunConfig used before RunConfig::load");
    return *p;
}
}  // namespace

const std::vector<std::string>& RunConfig::warnings() const { return must(impl_).warnings; }

std::string RunConfig::source_of(const std::string& key_path) const { return must(impl_).source_of(key_path); }

const ChipParams& RunConfig::chip() const { return must(impl_).chip; }

const WorkloadParams& RunConfig::workload() const { return must(impl_).workload; }

const nlohmann::json& RunConfig::document() const { return must(impl_).doc; }

std::string RunConfig::dump() const { return must(impl_).doc.dump(2); }

WorkloadKind RunConfig::kind() const { return must(impl_).kind; }

std::string RunConfig::workload_kind() const { return to_string(must(impl_).kind); }

std::string RunConfig::workload_file() const { return must(impl_).workload_file; }

}  // namespace npusim
