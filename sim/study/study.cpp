#include "study/study.hpp"

#include <algorithm>
#include <filesystem>
#include <set>

#include <fmt/format.h>

#include "common/did_you_mean.hpp"
#include "common/errors.hpp"
#include "config/run_config.hpp"
#include "config/schema.hpp"
#include "study/responses.hpp"

namespace npusim::study {

namespace fs = std::filesystem;

namespace {

const std::vector<std::string> kStudyKeys = {"name",    "notes",   "chip",    "workload", "set",   "axes",
                                             "combine", "metrics", "changes", "modes",    "expect"};


std::string require_string(const std::string& file, const ojson& doc, const std::string& key) {
    const auto it = doc.find(key);
    if (it == doc.end()) fail_in(file, fmt::format("missing required key \"{}\" (a path relative to the study file)", key));
    if (!it->is_string() || it->get<std::string>().empty())
        fail_in(file, fmt::format("\"{}\": expected a file path (a non-empty string), got {}", key, json_kind(*it)));
    return it->get<std::string>();
}

std::string resolve(const std::string& study_file, const std::string& key, const std::string& rel) {
    fs::path p(rel);
    if (p.is_relative()) p = fs::path(study_file).parent_path() / p;
    p = fs::absolute(p).lexically_normal();
    std::error_code ec;
    if (!fs::is_regular_file(p, ec))
        fail_in(study_file, fmt::format("\"{}\": file not found: {} (paths are relative to the study file)", key, p.string()));
    return p.string();
}


// The schema key an axis path names (walked one level at a time so the error
// names the first unknown segment and suggests a sibling).
const KeySpec* check_key_path(const std::string& file, const std::string& where, const std::string& path,
                              const std::string& kind) {
    const auto segs = split_key_path(path);
    for (const auto& s : segs)
        if (s.empty()) fail_in(file, fmt::format("{}: empty key name in path '{}'", where, path));
    if (segs.size() < 2 || (segs[0] != "chip" && segs[0] != "workload"))
        fail_in(file, fmt::format("{}: '{}': a path must start with 'chip.' or 'workload.'{}", where, path,
                               did_you_mean(segs[0], {"chip", "workload"})));
    const KeySpec* spec = nullptr;
    std::string parent = segs[0];
    for (std::size_t i = 1; i < segs.size(); ++i) {
        const std::string full = parent + "." + segs[i];
        if ((spec = find_key(full, kind))) {
            if (spec->type == ValueType::object) return spec;
            if (i + 1 != segs.size()) fail_in(file, fmt::format("{}: {} is a single value, not a group of keys", where, full));
        } else if (!is_group(full, kind)) {
            fail_in(file, fmt::format("{}: unknown key '{}' in {}{}", where, segs[i], parent,
                                   did_you_mean(segs[i], child_names(parent, kind))));
        }
        parent = full;
    }
    if (!spec) fail_in(file, fmt::format("{}: {} is a group of keys; an axis needs a single key inside it", where, path));
    return spec;
}


// "chip" / "workload": a path, or an object NAME: PATH | {"file": PATH, "set": {...}}.
std::vector<RunFile> run_files(const std::string& file, const ojson& doc, const std::string& key) {
    std::vector<RunFile> out;
    const auto it = doc.find(key);
    if (it != doc.end() && it->is_object()) {
        if (it->empty()) fail_in(file, fmt::format("\"{}\": expected NAME: FILE entries, got an empty object", key));
        for (auto e = it->begin(); e != it->end(); ++e) {
            const std::string where = fmt::format("\"{}\".\"{}\"", key, e.key());
            RunFile f;
            f.name = e.key();
            if (e->is_string()) {
                f.file = e->get<std::string>();
            } else if (e->is_object()) {
                for (auto k = e->begin(); k != e->end(); ++k)
                    if (k.key() != "file" && k.key() != "set")
                        fail_in(file, fmt::format("{}: unknown key \"{}\"{}; an entry has: file, set", where, k.key(),
                                               did_you_mean(k.key(), {"file", "set"})));
                if (!e->contains("file"))
                    fail_in(file, fmt::format("{}: missing required key \"file\" (a path relative to the study file)", where));
                f.file = require_string(file, *e, "file");
                if (e->contains("set")) {
                    if (!(*e)["set"].is_object())
                        fail_in(file, fmt::format("{}: \"set\": expected an object of PATH: VALUE", where));
                    f.set = (*e)["set"];
                }
            } else {
                fail_in(file, fmt::format("{}: expected a file path or {{\"file\": ..., \"set\": {{...}}}}, got {}", where,
                                       json_kind(*e)));
            }
            f.path = resolve(file, key + "." + f.name, f.file);
            out.push_back(std::move(f));
        }
        return out;
    }
    RunFile f;
    f.file = require_string(file, doc, key);
    f.path = resolve(file, key, f.file);
    out.push_back(std::move(f));
    return out;
}

void read_changes(const std::string& file, const ojson& doc, const std::string& kind, Study& s) {
    if (!doc.contains("changes")) return;
    const ojson& ch = doc["changes"];
    if (!ch.is_object() || ch.empty())
        fail_in(file, "\"changes\": expected a non-empty object of PATH: [values...], e.g. {\"chip.hbm.bandwidth_gbps\": "
                   "[{\"scale\": 0.5}, {\"scale\": 2}]}, got " + json_kind(ch));
    for (auto it = ch.begin(); it != ch.end(); ++it) {
        const std::string where = "\"changes\".\"" + it.key() + "\"";
        if (!it->is_array() || it->empty()) fail_in(file, where + ": expected a non-empty list of values");
        Change c;
        c.path = it.key();
        const KeySpec* spec = check_key_path(file, where, c.path, kind);
        c.unit = spec->unit;
        c.integer = spec->type == ValueType::integer;
        for (const auto& a : s.axes)
            if (a.path == c.path) fail_in(file, where + ": " + c.path + " is also an axis; keep it in one place");
        std::set<std::string> seen;
        for (const auto& v : *it) {
            if (v.is_object()) {
                if (v.size() != 1 || !v.contains("scale") || !v["scale"].is_number() || v["scale"].get<double>() <= 0)
                    fail_in(file, fmt::format("{}: {}: expected a value or {{\"scale\": F}} with F > 0 (F times the base "
                                           "point's value)", where, v.dump()));
            }
            if (!seen.insert(v.dump()).second) fail_in(file, fmt::format("{}: the value {} is listed twice", where, v.dump()));
            c.values.push_back(v);
        }
        s.changes.push_back(std::move(c));
    }
}

void read_modes(const std::string& file, const ojson& doc, Study& s) {
    if (!doc.contains("modes")) return;
    if (s.changes.empty()) fail_in(file, "\"modes\": modes are those of the \"changes\"; add \"changes\"");
    const ojson& m = doc["modes"];
    if (!m.is_array() || m.empty()) fail_in(file, "\"modes\": expected a list of \"fixed\" and/or \"recompiled\"");
    s.modes.clear();
    for (const auto& v : m) {
        const std::string t = v.is_string() ? v.get<std::string>() : v.dump();
        const Mode mode = t == "fixed" ? Mode::fixed : Mode::recompiled;
        if (t != "fixed" && t != "recompiled")
            fail_in(file, fmt::format("\"modes\": expected \"fixed\" (the base point's compiled stream on the changed "
                                   "chip) or \"recompiled\", got {}{}", v.dump(), did_you_mean(t, {"fixed", "recompiled"})));
        if (std::find(s.modes.begin(), s.modes.end(), mode) != s.modes.end())
            fail_in(file, "\"modes\": " + t + " is listed twice");
        s.modes.push_back(mode);
    }
    if (s.has_fixed()) {
        if (s.changes.empty()) fail_in(file, "\"modes\": \"fixed\" compares changes with their base point: add \"changes\"");
        for (const auto& c : s.changes)
            if (c.path.rfind("chip.", 0) != 0)
                fail_in(file, "\"modes\": \"fixed\" runs the base point's stream, so every change must be a chip key; \"" +
                               c.path + "\" is not");
        for (const auto& a : s.axes)
            if (a.path.rfind("workload.", 0) == 0)
                fail_in(file, "\"modes\": \"fixed\" compiles one stream per base point; a workload axis (\"" + a.path +
                               "\") belongs in the workload entries' \"set\"");
    }
}

// "expect"."known": objects of the fields that name a response in
// responses.jsonl, so a misspelt field is an error, not a miss never matched.
void read_known(const std::string& file, const ojson& known, Study& s) {
    if (!known.is_array()) fail_in(file, "\"expect\".\"known\": expected a list of responses (as in responses.jsonl)");
    std::vector<std::string> fields = {"chip", "workload", "change", "value", "from", "to", "mode", "stream", "verdict"};
    for (const auto& a : s.axes) fields.push_back(a.path);
    for (std::size_t i = 0; i < known.size(); ++i) {
        const ojson& k = known[i];
        const std::string where = fmt::format("\"expect\".\"known\"[{}]", i);
        if (!k.is_object() || k.empty())
            fail_in(file, where + ": expected an object of the fields that name a response, e.g. {\"chip\": \"a2\", "
                                  "\"change\": \"chip.l2.size_mb\", \"verdict\": \"no effect\"}");
        for (auto it = k.begin(); it != k.end(); ++it)
            if (std::find(fields.begin(), fields.end(), it.key()) == fields.end())
                fail_in(file, fmt::format("{}: unknown field \"{}\"{}; a response is named by: {}", where, it.key(),
                                          did_you_mean(it.key(), fields), fmt::join(fields, ", ")));
    }
    s.expect.known = known;
}

void read_expect(const std::string& file, const ojson& doc, Study& s) {
    if (!doc.contains("expect")) return;
    const ojson& e = doc["expect"];
    const std::vector<std::string> keys = {"rule", "metric", "tolerance", "known"};
    if (!e.is_object()) fail_in(file, "\"expect\": expected an object {\"rule\": ..., \"tolerance\": ..., \"known\": [...]}");
    for (auto it = e.begin(); it != e.end(); ++it)
        if (std::find(keys.begin(), keys.end(), it.key()) == keys.end())
            fail_in(file, fmt::format("\"expect\": unknown key \"{}\"{}", it.key(), did_you_mean(it.key(), keys)));
    const std::string rule = e.contains("rule") && e["rule"].is_string() ? e["rule"].get<std::string>() : std::string();
    if (rule != "roofline" && rule != "monotone")
        fail_in(file, fmt::format("\"expect\".\"rule\": expected \"roofline\" (each change within the band its base "
                               "run's roofline allows) or \"monotone\" (each change's values, as written, grow a "
                               "resource: no step slower), got {}{}",
                               e.contains("rule") ? e["rule"].dump() : "nothing", did_you_mean(rule, {"roofline", "monotone"})));
    if (s.changes.empty()) fail_in(file, "\"expect\": responses compare changes with their base point: add \"changes\"");
    s.expect.rule = rule;
    if (e.contains("metric")) {
        if (!e["metric"].is_string()) fail_in(file, "\"expect\".\"metric\": expected a dotted path into the statistics");
        s.expect.metric = e["metric"].get<std::string>();
    }
    if (e.contains("tolerance")) {
        if (!e["tolerance"].is_number() || e["tolerance"].get<double>() < 0)
            fail_in(file, "\"expect\".\"tolerance\": expected a fraction >= 0, e.g. 0.01");
        s.expect.tolerance = e["tolerance"].get<double>();
    }
    if (e.contains("known")) read_known(file, e["known"], s);
    if (rule == "roofline")
        for (const auto& c : s.changes)
            if (!roofline_rule_known(c.path))
                fail_in(file, fmt::format("\"expect\": the roofline rule does not know what more of {} is; it knows: {}",
                                       c.path, fmt::join(roofline_rule_keys(), ", ")));
    if (std::find(s.metrics.begin(), s.metrics.end(), s.expect.metric) == s.metrics.end())
        s.metrics.push_back(s.expect.metric);
}
}  // namespace

std::string set_arg(const std::string& path, const ojson& value) {
    return path + "=" + (value.is_string() ? value.get<std::string>() : value.dump());
}

bool Study::has_fixed() const { return std::find(modes.begin(), modes.end(), Mode::fixed) != modes.end(); }

std::vector<std::string> base_run_sets(const Study& s, const RunFile& chip, const RunFile& workload) {
    std::vector<std::string> out = s.base_set_args();
    for (const RunFile* f : {&chip, &workload})
        for (auto it = f->set.begin(); it != f->set.end(); ++it) out.push_back(set_arg(it.key(), it.value()));
    return out;
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
    const ojson r = responses_json();
    if (!r.empty()) f["responses"] = r;
    return f.dump();
}

ojson Study::responses_json() const {
    ojson j = ojson::object();
    auto files = [](const std::vector<RunFile>& v) {
        ojson a = ojson::array();
        for (const auto& f : v) a.push_back({{"name", f.name}, {"path", f.path}, {"set", f.set}});
        return a;
    };
    if (chips.size() > 1 || !chips.front().name.empty()) j["chips"] = files(chips);
    if (workloads.size() > 1 || !workloads.front().name.empty()) j["workloads"] = files(workloads);
    if (!changes.empty()) {
        j["changes"] = ojson::array();
        for (const auto& c : changes) j["changes"].push_back({{"path", c.path}, {"unit", c.unit}, {"values", c.values}});
        j["modes"] = ojson::array();
        for (Mode m : modes) j["modes"].push_back(m == Mode::fixed ? "fixed" : "recompiled");
    }
    if (!expect.rule.empty())
        j["expect"] = {{"rule", expect.rule}, {"metric", expect.metric}, {"tolerance", expect.tolerance}};
    return j;
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
    const ojson r = responses_json();
    for (auto it = r.begin(); it != r.end(); ++it) j[it.key()] = it.value();
    j["points"] = point_count;
    j["fingerprint"] = fingerprint();
    return j;
}

namespace {

void read_name_and_notes(const std::string& file, const ojson& doc, Study& s) {
    if (doc.contains("name")) {
        if (!doc["name"].is_string()) fail_in(file, "\"name\": expected a string, got " + json_kind(doc["name"]));
        s.name = doc["name"].get<std::string>();
    }
    if (doc.contains("notes")) {
        const ojson& n = doc["notes"];
        if (n.is_string()) s.notes = n.get<std::string>();
        else if (n.is_array()) {
            for (const auto& line : n) {
                if (!line.is_string()) fail_in(file, "\"notes\": expected a string or a list of strings");
                s.notes += (s.notes.empty() ? "" : " ") + line.get<std::string>();
            }
        } else fail_in(file, "\"notes\": expected a string or a list of strings, got " + json_kind(n));
    }
}

void read_set_and_combine(const std::string& file, const ojson& doc, Study& s) {
    if (doc.contains("set")) {
        if (!doc["set"].is_object())
            fail_in(file, "\"set\": expected an object of PATH: VALUE, e.g. {\"workload.batch\": 1}, got " + json_kind(doc["set"]));
        s.set = doc["set"];
    }

    // Combine.
    if (doc.contains("combine")) {
        const ojson& c = doc["combine"];
        const std::string v = c.is_string() ? c.get<std::string>() : std::string();
        if (v == "grid") s.combine = Combine::grid;
        else if (v == "zip") s.combine = Combine::zip;
        else
            fail_in(file, fmt::format("\"combine\": expected \"grid\" (every combination) or \"zip\" (the i-th values "
                                   "together), got {}{}", c.dump(), did_you_mean(v, {"grid", "zip"})));
    }

}

void read_axes(const std::string& file, const ojson& doc, Study& s) {
    // Axes: required unless the files or "changes" vary the runs.
    const bool varies = s.chips.size() > 1 || s.workloads.size() > 1 || doc.contains("changes");
    if (!doc.contains("axes") && !varies)
        fail_in(file, "missing required key \"axes\" (an object of PATH: [values...])");
    const ojson& axes = doc.contains("axes") ? doc["axes"] : ojson::object();
    if (!axes.is_object() || (axes.empty() && !varies))
        fail_in(file, "\"axes\": expected a non-empty object of PATH: [values...], e.g. {\"chip.hbm.bandwidth_gbps\": "
                   "[800, 1600]}, got " + (axes.is_object() ? std::string("an empty object") : json_kind(axes)));
    for (auto it = axes.begin(); it != axes.end(); ++it) {
        const std::string where = "\"axes\".\"" + it.key() + "\"";
        if (!it->is_array() || it->empty())
            fail_in(file, fmt::format("{}: expected a non-empty list of values, got {}", where,
                                   it->is_array() ? std::string("an empty list") : json_kind(*it)));
        Axis a;
        a.path = it.key();
        std::set<std::string> seen;
        for (const auto& v : *it) {
            if (!seen.insert(v.dump()).second)
                fail_in(file, fmt::format("{}: the value {} is listed twice", where, v.dump()));
            a.values.push_back(v);
        }
        if (s.set.contains(a.path))
            fail_in(file, fmt::format("{}: {} is also in \"set\"; keep it in one place", where, a.path));
        s.axes.push_back(std::move(a));
    }
    if (s.combine == Combine::zip)
        for (const auto& a : s.axes)
            if (a.values.size() != s.axes.front().values.size())
                fail_in(file, fmt::format("\"combine\": \"zip\" needs axes of equal length, but {} has {} values and {} has {}",
                                       s.axes.front().path, s.axes.front().values.size(), a.path, a.values.size()));

}

void read_metrics(const std::string& file, const ojson& doc, Study& s) {
    // Metrics.
    if (doc.contains("metrics")) {
        const ojson& m = doc["metrics"];
        if (!m.is_array() || m.empty())
            fail_in(file, "\"metrics\": expected a non-empty list of dotted paths into the statistics, e.g. "
                       "[\"total_cycles\", \"units.cube.utilization\"], got " + json_kind(m));
        for (const auto& v : m) {
            if (!v.is_string() || v.get<std::string>().empty())
                fail_in(file, "\"metrics\": expected dotted paths (strings), got " + json_kind(v));
            const std::string p = v.get<std::string>();
            if (std::find(s.metrics.begin(), s.metrics.end(), p) != s.metrics.end())
                fail_in(file, "\"metrics\": " + p + " is listed twice");
            for (const auto& a : s.axes)
                if (a.path == p) fail_in(file, "\"metrics\": " + p + " is also an axis");
            s.metrics.push_back(p);
        }
    } else {
        s.metrics = {"total_cycles"};
    }

}

// Every base run (chip x workload entry) must load; returns the workload kind
// the key paths are checked against.
std::string check_base_runs(const std::string& file, const Study& s) {
    std::string kind;
    for (const auto& c : s.chips)
        for (const auto& w : s.workloads) {
            try {
                kind = RunConfig::load(c.path, w.path, base_run_sets(s, c, w)).workload_kind();
            } catch (const InputError& e) {
                const std::string which = (c.name.empty() ? "" : " " + c.name) + (w.name.empty() ? "" : " " + w.name);
                fail_in(file, fmt::format("the study's chip, workload and \"set\"{} do not make a valid run: {}",
                                       which.empty() ? "" : " (" + which.substr(1) + ")", e.what()));
            }
        }
    return kind;
}

}  // namespace

Study load_study(const std::string& file) {
    const ojson doc = read_json_object_file(file, "study file");
    for (auto it = doc.begin(); it != doc.end(); ++it)
        if (std::find(kStudyKeys.begin(), kStudyKeys.end(), it.key()) == kStudyKeys.end())
            fail_in(file, fmt::format("unknown key \"{}\"{}; a study has: {}", it.key(), did_you_mean(it.key(), kStudyKeys),
                                   fmt::join(kStudyKeys, ", ")));
    Study s;
    s.file = file;
    s.name = fs::path(file).stem().string();
    read_name_and_notes(file, doc, s);
    s.chips = run_files(file, doc, "chip");
    s.workloads = run_files(file, doc, "workload");
    s.chip = s.chips.front().file;
    s.workload = s.workloads.front().file;
    s.chip_path = s.chips.front().path;
    s.workload_path = s.workloads.front().path;
    read_set_and_combine(file, doc, s);
    read_axes(file, doc, s);
    read_metrics(file, doc, s);
    // Then every axis and change path must name a key of the runs' kind.
    const std::string kind = check_base_runs(file, s);
    for (auto& a : s.axes) a.unit = check_key_path(file, "\"axes\".\"" + a.path + "\"", a.path, kind)->unit;
    read_changes(file, doc, kind, s);
    read_modes(file, doc, s);
    read_expect(file, doc, s);
    return s;
}

}  // namespace npusim::study
