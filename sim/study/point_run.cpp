#include "study/point_run.hpp"

#include <fstream>
#include <sstream>

#include <fmt/format.h>

#include "common/did_you_mean.hpp"
#include "common/errors.hpp"
#include "common/json_file.hpp"

namespace npusim::study {

using json = nlohmann::json;

PointFiles point_files(const std::string& out_dir, const std::string& id) {
    PointFiles f;
    f.dir = out_dir + "/points/" + id;
    f.stats = f.dir + "/stats.json";
    f.log = f.dir + "/log.txt";
    f.result = f.dir + "/result.json";
    return f;
}

std::vector<std::string> run_arguments(const std::string& chip, const std::string& workload,
                                       const std::vector<std::string>& set_args, const std::string& stats_file) {
    std::vector<std::string> a = {"run", "--chip", chip, "--workload", workload};
    for (const auto& s : set_args) {
        a.push_back("--set");
        a.push_back(s);
    }
    a.insert(a.end(), {"--stats", stats_file, "--quiet"});
    return a;
}

namespace {

void leaf_paths(const json& j, const std::string& prefix, std::vector<std::string>& out) {
    if (!j.is_object()) {
        out.push_back(prefix);
        return;
    }
    for (auto it = j.begin(); it != j.end(); ++it) {
        if (prefix.empty() && it.key() == "config") continue;
        const std::string p = prefix.empty() ? it.key() : prefix + "." + it.key();
        // Suggest groups too, so "units.cube.utilisation" finds its sibling.
        if (it->is_object()) out.push_back(p);
        leaf_paths(*it, p, out);
    }
}

}  // namespace

bool lookup_metric(const json& stats, const std::string& path, json& value, std::string& error) {
    const json* node = &stats;
    std::size_t start = 0;
    for (;;) {
        const auto dot = path.find('.', start);
        const std::string seg = path.substr(start, dot - start);
        if (!node->is_object() || !node->contains(seg)) {
            std::vector<std::string> all;
            leaf_paths(stats, "", all);
            error = fmt::format("metric '{}' is not in the statistics{}", path, did_you_mean(path, all));
            return false;
        }
        node = &(*node)[seg];
        if (dot == std::string::npos) break;
        start = dot + 1;
    }
    if (node->is_object() || node->is_array()) {
        error = fmt::format("metric '{}' is a group of statistics, not one value", path);
        return false;
    }
    value = *node;
    return true;
}

bool outcome_dependent_metric(const std::string& path) {
    for (const char* group : {"critical_path.by_kind.", "critical_path.by_resource.", "critical_path.host_stages.", "host.stages."})
        if (path.rfind(group, 0) == 0) return true;
    return false;
}

json read_stats(const std::string& file) {
    JsonFileSpec spec;
    spec.what = "statistics file";
    spec.max_bytes = std::size_t(1) << 30;  // written by npusim; no user file is this large
    return read_json_file<json>(file, spec);
}

std::string error_from_log(const std::string& log_file, int exit_code) {
    const std::string text = read_text_file(log_file);
    std::string msg;
    const auto at = text.find("npusim");
    if (at != std::string::npos) {
        msg = text.substr(at);
        for (const char* prefix : {"npusim: error: ", "npusim run: error: ", "npusim: "})
            if (msg.rfind(prefix, 0) == 0) {
                msg = msg.substr(std::string(prefix).size());
                break;
            }
    } else {
        msg = text;
    }
    // One line: the message may span several.
    std::string flat;
    for (char c : msg) {
        if (c == '\r') continue;
        if (c == '\n') {
            if (!flat.empty() && flat.back() != ' ') flat += "; ";
            continue;
        }
        flat += c;
    }
    while (!flat.empty() && (flat.back() == ' ' || flat.back() == ';')) flat.pop_back();
    if (flat.size() > 600) flat = flat.substr(0, 600) + " ...";
    const std::string how = exit_code >= 128 ? fmt::format("killed by signal {}", exit_code - 128)
                                             : fmt::format("exit {}", exit_code);
    return flat.empty() ? how : how + ": " + flat;
}

Row make_row(const Point& p, const std::vector<std::string>& metrics, int exit_code, double elapsed_s,
             const PointFiles& files) {
    Row r;
    r.index = p.index;
    r.id = p.id;
    r.axes = p.values;
    r.exit_code = exit_code;
    r.elapsed_s = elapsed_s;
    for (const auto& m : metrics) r.metrics[m] = nullptr;
    if (exit_code != 0) {
        r.status = "failed";
        r.error = error_from_log(files.log, exit_code);
        return r;
    }
    try {
        const json stats = read_stats(files.stats);
        if (stats.contains("version") && stats["version"].is_string()) r.version = stats["version"].get<std::string>();
        std::vector<std::string> missing;
        for (const auto& m : metrics) {
            json v;
            std::string err;
            if (lookup_metric(stats, m, v, err)) r.metrics[m] = ojson::parse(v.dump());
            else missing.push_back(err);
        }
        if (missing.empty()) {
            r.status = "ok";
        } else {
            r.status = "failed";
            r.error = fmt::format("{}", fmt::join(missing, "; "));
        }
    } catch (const InputError& e) {
        r.status = "failed";
        r.error = e.what();
    }
    return r;
}

}  // namespace npusim::study
