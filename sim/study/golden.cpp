#include "study/golden.hpp"

#include <algorithm>
#include <cmath>
#include <filesystem>

#include <fmt/format.h>

#include "common/did_you_mean.hpp"
#include "common/errors.hpp"
#include "study/point_run.hpp"
#include "study/study.hpp"

namespace npusim::study {

namespace fs = std::filesystem;
using json = nlohmann::json;

namespace {

const std::vector<std::string> kGoldenKeys = {"notes", "chip", "workload", "set", "metrics"};
const std::vector<std::string> kMetricKeys = {"expected", "tolerance", "rel_tolerance", "notes"};


std::string resolve(const std::string& file, const std::string& key, const ojson& doc) {
    const auto it = doc.find(key);
    if (it == doc.end()) fail_in(file, fmt::format("missing required key \"{}\" (a path relative to the golden file)", key));
    if (!it->is_string() || it->get<std::string>().empty())
        fail_in(file, fmt::format("\"{}\": expected a file path (a non-empty string), got {}", key, json_kind(*it)));
    fs::path p(it->get<std::string>());
    if (p.is_relative()) p = fs::path(file).parent_path() / p;
    p = p.lexically_normal();
    std::error_code ec;
    if (!fs::is_regular_file(p, ec))
        fail_in(file, fmt::format("\"{}\": file not found: {} (paths are relative to the golden file)", key, p.string()));
    return p.string();
}

double tolerance_value(const std::string& file, const std::string& where, const ojson& v) {
    if (!v.is_number() || !(v.get<double>() >= 0) || !std::isfinite(v.get<double>()))
        fail_in(file, fmt::format("{}: expected a number >= 0, got {}", where, v.dump()));
    return v.get<double>();
}

}  // namespace

std::vector<std::string> Golden::set_args() const {
    std::vector<std::string> out;
    for (auto it = set.begin(); it != set.end(); ++it) out.push_back(set_arg(it.key(), it.value()));
    return out;
}

std::vector<std::string> golden_files(const std::string& path) {
    std::error_code ec;
    if (fs::is_directory(path, ec)) {
        std::vector<std::string> files;
        for (const auto& e : fs::directory_iterator(path, ec))
            if (e.is_regular_file() && e.path().extension() == ".json") files.push_back(e.path().string());
        std::sort(files.begin(), files.end());
        if (files.empty()) throw InputError(path + ": no golden files (*.json) in this folder");
        return files;
    }
    if (!fs::exists(path, ec)) throw InputError(path + ": no such golden file or folder");
    return {path};
}

Golden load_golden(const std::string& file) {
    Golden g;
    g.file = file;
    g.name = fs::path(file).stem().string();
    g.doc = read_json_object_file(file, "golden file");
    const ojson& doc = g.doc;
    for (auto it = doc.begin(); it != doc.end(); ++it)
        if (std::find(kGoldenKeys.begin(), kGoldenKeys.end(), it.key()) == kGoldenKeys.end())
            fail_in(file, fmt::format("unknown key \"{}\"{}; a golden has: {}", it.key(), did_you_mean(it.key(), kGoldenKeys),
                                   fmt::join(kGoldenKeys, ", ")));
    g.chip_path = resolve(file, "chip", doc);
    g.workload_path = resolve(file, "workload", doc);
    g.chip = doc.at("chip").get<std::string>();
    g.workload = doc.at("workload").get<std::string>();
    if (doc.contains("set")) {
        if (!doc["set"].is_object())
            fail_in(file, "\"set\": expected an object of PATH: VALUE, e.g. {\"workload.batch\": 1}, got " + json_kind(doc["set"]));
        g.set = doc["set"];
    }
    if (!doc.contains("metrics")) fail_in(file, "missing required key \"metrics\"");
    const ojson& ms = doc["metrics"];
    if (ms.is_array()) {
        for (const auto& m : ms) {
            if (!m.is_string() || m.get<std::string>().empty())
                fail_in(file, "\"metrics\": expected metric names (dotted paths into the statistics), got " + json_kind(m));
            GoldenMetric gm;
            gm.path = m.get<std::string>();
            g.metrics.push_back(gm);
        }
    } else if (ms.is_object()) {
        for (auto it = ms.begin(); it != ms.end(); ++it) {
            GoldenMetric gm;
            gm.path = it.key();
            const std::string where = "\"metrics\".\"" + it.key() + "\"";
            if (it->is_number() || it->is_string() || it->is_boolean()) {
                gm.has_expected = true;
                gm.expected = *it;
            } else if (it->is_object()) {
                for (auto k = it->begin(); k != it->end(); ++k)
                    if (std::find(kMetricKeys.begin(), kMetricKeys.end(), k.key()) == kMetricKeys.end())
                        fail_in(file, fmt::format("{}: unknown key \"{}\"{}; a metric has: {}", where, k.key(),
                                               did_you_mean(k.key(), kMetricKeys), fmt::join(kMetricKeys, ", ")));
                if (it->contains("expected")) {
                    gm.has_expected = true;
                    gm.expected = (*it)["expected"];
                }
                if (it->contains("tolerance")) gm.tolerance = tolerance_value(file, where + ".tolerance", (*it)["tolerance"]);
                if (it->contains("rel_tolerance"))
                    gm.rel_tolerance = tolerance_value(file, where + ".rel_tolerance", (*it)["rel_tolerance"]);
            } else {
                fail_in(file, fmt::format("{}: expected {{\"expected\": VALUE, \"tolerance\": T}} or a value, got {}", where,
                                       json_kind(*it)));
            }
            g.metrics.push_back(gm);
        }
    } else {
        fail_in(file, "\"metrics\": expected an object of METRIC: {\"expected\": VALUE, \"tolerance\": T}, got " + json_kind(ms));
    }
    if (g.metrics.empty()) fail_in(file, "\"metrics\": lists no metric");
    return g;
}

Comparison compare_metric(const GoldenMetric& m, const json& stats) {
    Comparison c;
    c.metric = m.path;
    c.expected = m.has_expected ? m.expected : ojson();
    json v;
    std::string err;
    if (!lookup_metric(stats, m.path, v, err)) {
        c.problem = err;
        c.unknown = true;
        return c;
    }
    c.actual = ojson::parse(v.dump());
    if (m.path == "version") {
        c.pass = true;
        return c;
    }
    if (!m.has_expected) {
        c.problem = "no expected value yet (run with --update)";
        return c;
    }
    // A number written as a string ("48988") can never match: the golden
    // is broken, not the run.
    if (c.expected.is_number() != c.actual.is_number()) {
        c.problem = fmt::format("the expected value {} is {} but the statistic is {}{}", c.expected.dump(),
                                json_kind(c.expected), json_kind(c.actual),
                                c.actual.is_number() && c.expected.is_string() ? ": write it without quotes" : "");
        c.unknown = true;
        return c;
    }
    if (c.expected.is_number() && c.actual.is_number()) {
        c.numeric = true;
        const double e = c.expected.get<double>(), a = c.actual.get<double>();
        c.delta = a - e;
        c.allowed = std::max(m.tolerance, m.rel_tolerance * std::fabs(e));
        c.pass = std::fabs(c.delta) <= c.allowed;
    } else {
        c.pass = c.expected == c.actual;
    }
    return c;
}

void update_golden(const Golden& g, const json& stats) {
    ojson doc = g.doc;
    ojson metrics = ojson::object();
    for (const auto& m : g.metrics) {
        json v;
        std::string err;
        if (!lookup_metric(stats, m.path, v, err)) throw InputError(g.file + ": cannot update: " + err);
        const ojson actual = ojson::parse(v.dump());
        if (doc["metrics"].is_object() && doc["metrics"][m.path].is_object()) {
            ojson spec = doc["metrics"][m.path];
            spec["expected"] = actual;
            metrics[m.path] = spec;
        } else {
            const bool whole = actual.is_number_integer() || actual.is_number_unsigned();
            ojson spec;
            spec["expected"] = actual;
            spec["tolerance"] = whole ? ojson(0) : ojson(1e-9);
            metrics[m.path] = spec;
        }
    }
    doc["metrics"] = metrics;
    // One metric per line keeps the file short and its diffs readable.
    std::string text = "{\n";
    std::size_t k = 0;
    for (auto it = doc.begin(); it != doc.end(); ++it, ++k) {
        text += "  " + ojson(it.key()).dump() + ": ";
        if (it.key() == "metrics") {
            text += "{\n";
            std::size_t j = 0;
            for (auto m = it->begin(); m != it->end(); ++m, ++j)
                text += "    " + ojson(m.key()).dump() + ": " + m->dump() + (j + 1 < it->size() ? ",\n" : "\n");
            text += "  }";
        } else {
            std::string v = it->dump(2);
            for (std::size_t at = v.find('\n'); at != std::string::npos; at = v.find('\n', at + 3)) v.insert(at + 1, "  ");
            text += v;
        }
        text += k + 1 < doc.size() ? ",\n" : "\n";
    }
    write_file_atomically(g.file, text + "}\n");
}

}  // namespace npusim::study
