#include "study/study.hpp"

#include <algorithm>
#include <filesystem>
#include <set>

#include <fmt/format.h>

#include "common/did_you_mean.hpp"
#include "common/errors.hpp"
#include "config/run_config.hpp"
#include "config/schema.hpp"

namespace npusim::study {

namespace fs = std::filesystem;

namespace {

const std::vector<std::string> kStudyKeys = {"name", "notes", "chip", "workload", "set", "axes", "combine", "metrics"};

[[noreturn]] void fail(const std::string& file, const std::string& msg) { throw InputError(file + ": " + msg); }

std::string require_string(const std::string& file, const ojson& doc, const std::string& key) {
    const auto it = doc.find(key);
    if (it == doc.end()) fail(file, fmt::format("missing required key \"{}\" (a path relative to the study file)", key));
    if (!it->is_string() || it->get<std::string>().empty())
        fail(file, fmt::format("\"{}\": expected a file path (a non-empty string), got {}", key, json_kind(*it)));
    return it->get<std::string>();
}

std::string resolve(const std::string& study_file, const std::string& key, const std::string& rel) {
    fs::path p(rel);
    if (p.is_relative()) p = fs::path(study_file).parent_path() / p;
    p = fs::absolute(p).lexically_normal();
    std::error_code ec;
    if (!fs::is_regular_file(p, ec))
        fail(study_file, fmt::format("\"{}\": file not found: {} (paths are relative to the study file)", key, p.string()));
    return p.string();
}


// The schema key an axis path names (walked one level at a time so the error
// names the first unknown segment and suggests a sibling).
const KeySpec* check_key_path(const std::string& file, const std::string& where, const std::string& path,
                              const std::string& kind) {
    const auto segs = split_key_path(path);
    for (const auto& s : segs)
        if (s.empty()) fail(file, fmt::format("{}: empty key name in path '{}'", where, path));
    if (segs.size() < 2 || (segs[0] != "chip" && segs[0] != "workload"))
        fail(file, fmt::format("{}: '{}': a path must start with 'chip.' or 'workload.'{}", where, path,
                               did_you_mean(segs[0], {"chip", "workload"})));
    const KeySpec* spec = nullptr;
    std::string parent = segs[0];
    for (std::size_t i = 1; i < segs.size(); ++i) {
        const std::string full = parent + "." + segs[i];
        if ((spec = find_key(full, kind))) {
            if (spec->type == ValueType::object) return spec;
            if (i + 1 != segs.size()) fail(file, fmt::format("{}: {} is a single value, not a group of keys", where, full));
        } else if (!is_group(full, kind)) {
            fail(file, fmt::format("{}: unknown key '{}' in {}{}", where, segs[i], parent,
                                   did_you_mean(segs[i], child_names(parent, kind))));
        }
        parent = full;
    }
    if (!spec) fail(file, fmt::format("{}: {} is a group of keys; an axis needs a single key inside it", where, path));
    return spec;
}

}  // namespace

std::string set_arg(const std::string& path, const ojson& value) {
    return path + "=" + (value.is_string() ? value.get<std::string>() : value.dump());
}

std::vector<std::string> Study::base_set_args() const {
    std::vector<std::string> out;
    for (auto it = set.begin(); it != set.end(); ++it) out.push_back(set_arg(it.key(), it.value()));
    return out;
}

std::string Study::fingerprint() const {
    ojson f;
    f["chip"] = chip_path;
    f["workload"] = workload_path;
    f["set"] = set;
    ojson axis_paths = ojson::array();
    for (const auto& a : axes) axis_paths.push_back(a.path);
    f["axes"] = axis_paths;
    f["metrics"] = metrics;
    return f.dump();
}

ojson Study::to_json(std::size_t point_count) const {
    ojson j;
    j["name"] = name;
    j["study_file"] = fs::absolute(file).lexically_normal().string();
    if (!notes.empty()) j["notes"] = notes;
    j["chip"] = chip_path;
    j["workload"] = workload_path;
    j["set"] = set;
    j["axes"] = ojson::array();
    for (const auto& a : axes) j["axes"].push_back({{"path", a.path}, {"unit", a.unit}, {"values", a.values}});
    j["combine"] = combine == Combine::grid ? "grid" : "zip";
    j["metrics"] = metrics;
    j["points"] = point_count;
    j["fingerprint"] = fingerprint();
    return j;
}

Study load_study(const std::string& file) {
    const ojson doc = read_json_object_file(file, "study file");
    for (auto it = doc.begin(); it != doc.end(); ++it)
        if (std::find(kStudyKeys.begin(), kStudyKeys.end(), it.key()) == kStudyKeys.end())
            fail(file, fmt::format("unknown key \"{}\"{}; a study has: {}", it.key(), did_you_mean(it.key(), kStudyKeys),
                                   fmt::join(kStudyKeys, ", ")));
    Study s;
    s.file = file;
    s.name = fs::path(file).stem().string();
    if (doc.contains("name")) {
        if (!doc["name"].is_string()) fail(file, "\"name\": expected a string, got " + json_kind(doc["name"]));
        s.name = doc["name"].get<std::string>();
    }
    if (doc.contains("notes")) {
        const ojson& n = doc["notes"];
        if (n.is_string()) s.notes = n.get<std::string>();
        else if (n.is_array()) {
            for (const auto& line : n) {
                if (!line.is_string()) fail(file, "\"notes\": expected a string or a list of strings");
                s.notes += (s.notes.empty() ? "" : " ") + line.get<std::string>();
            }
        } else fail(file, "\"notes\": expected a string or a list of strings, got " + json_kind(n));
    }
    s.chip = require_string(file, doc, "chip");
    s.workload = require_string(file, doc, "workload");
    s.chip_path = resolve(file, "chip", s.chip);
    s.workload_path = resolve(file, "workload", s.workload);

    if (doc.contains("set")) {
        if (!doc["set"].is_object())
            fail(file, "\"set\": expected an object of PATH: VALUE, e.g. {\"workload.batch\": 1}, got " + json_kind(doc["set"]));
        s.set = doc["set"];
    }

    // Combine.
    if (doc.contains("combine")) {
        const ojson& c = doc["combine"];
        const std::string v = c.is_string() ? c.get<std::string>() : std::string();
        if (v == "grid") s.combine = Combine::grid;
        else if (v == "zip") s.combine = Combine::zip;
        else
            fail(file, fmt::format("\"combine\": expected \"grid\" (every combination) or \"zip\" (the i-th values "
                                   "together), got {}{}", c.dump(), did_you_mean(v, {"grid", "zip"})));
    }

    // Axes.
    if (!doc.contains("axes")) fail(file, "missing required key \"axes\" (an object of PATH: [values...])");
    const ojson& axes = doc["axes"];
    if (!axes.is_object() || axes.empty())
        fail(file, "\"axes\": expected a non-empty object of PATH: [values...], e.g. {\"chip.hbm.bandwidth_gbps\": "
                   "[800, 1600]}, got " + (axes.is_object() ? std::string("an empty object") : json_kind(axes)));
    for (auto it = axes.begin(); it != axes.end(); ++it) {
        const std::string where = "\"axes\".\"" + it.key() + "\"";
        if (!it->is_array() || it->empty())
            fail(file, fmt::format("{}: expected a non-empty list of values, got {}", where,
                                   it->is_array() ? std::string("an empty list") : json_kind(*it)));
        Axis a;
        a.path = it.key();
        std::set<std::string> seen;
        for (const auto& v : *it) {
            if (!seen.insert(v.dump()).second)
                fail(file, fmt::format("{}: the value {} is listed twice", where, v.dump()));
            a.values.push_back(v);
        }
        if (s.set.contains(a.path))
            fail(file, fmt::format("{}: {} is also in \"set\"; keep it in one place", where, a.path));
        s.axes.push_back(std::move(a));
    }
    if (s.combine == Combine::zip)
        for (const auto& a : s.axes)
            if (a.values.size() != s.axes.front().values.size())
                fail(file, fmt::format("\"combine\": \"zip\" needs axes of equal length, but {} has {} values and {} has {}",
                                       s.axes.front().path, s.axes.front().values.size(), a.path, a.values.size()));

    // Metrics.
    if (doc.contains("metrics")) {
        const ojson& m = doc["metrics"];
        if (!m.is_array() || m.empty())
            fail(file, "\"metrics\": expected a non-empty list of dotted paths into the statistics, e.g. "
                       "[\"total_cycles\", \"units.cube.utilization\"], got " + json_kind(m));
        for (const auto& v : m) {
            if (!v.is_string() || v.get<std::string>().empty())
                fail(file, "\"metrics\": expected dotted paths (strings), got " + json_kind(v));
            const std::string p = v.get<std::string>();
            if (std::find(s.metrics.begin(), s.metrics.end(), p) != s.metrics.end())
                fail(file, "\"metrics\": " + p + " is listed twice");
            for (const auto& a : s.axes)
                if (a.path == p) fail(file, "\"metrics\": " + p + " is also an axis");
            s.metrics.push_back(p);
        }
    } else {
        s.metrics = {"total_cycles"};
    }

    // The base run must load; then every axis path must name a key of it.
    std::string kind;
    try {
        kind = RunConfig::load(s.chip_path, s.workload_path, s.base_set_args()).workload_kind();
    } catch (const InputError& e) {
        fail(file, std::string("the study's chip, workload and \"set\" do not make a valid run: ") + e.what());
    }
    for (auto& a : s.axes) a.unit = check_key_path(file, "\"axes\".\"" + a.path + "\"", a.path, kind)->unit;
    return s;
}

}  // namespace npusim::study
