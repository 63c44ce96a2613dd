#include "study/responses.hpp"

#include <algorithm>
#include <cmath>
#include <map>

#include <fmt/format.h>

namespace npusim::study {

using json = nlohmann::json;

namespace {

// What "more of the resource" is for each chip key: its kind in band().
const std::map<std::string, std::string>& kinds() {
    static const std::map<std::string, std::string> k = {
        {"chip.hbm.bandwidth_gbps", "hbm_bw"},   {"chip.l2.bandwidth_gbps", "l2_bw"},
        {"chip.hbm.latency_ns", "hbm_lat"},      {"chip.l2.size_mb", "l2_size"},
        {"chip.cores.cube.count", "cube_count"}, {"chip.cores.vector.count", "vector_count"},
        {"chip.buffers.ub_kb", "ub"},            {"chip.buffers.l1_kb", "l1"},
        {"chip.buffers.l0c_kb", "l0c"},          {"chip.clock_ghz", "clock"}};
    return k;
}

constexpr double kSlack = 0.02;     // a band edge from a roofline estimate is not exact
constexpr double kNoEffect = 0.001;  // |r - 1| below this is "no effect"...
constexpr double kMustMove = 0.10;   // ...a miss when the roofline allows a move of at least this

// The number at a dotted statistics path, or `fallback` where a run has none.
double num(const json& s, const std::string& path, double fallback = 0.0) {
    std::string pointer = "/" + path;
    std::replace(pointer.begin(), pointer.end(), '.', '/');
    const json::json_pointer at(pointer);
    return s.contains(at) && s[at].is_number() ? s[at].get<double>() : fallback;
}

// What the base run spends its time on, each as a fraction of the run.
struct Fractions {
    double T = 1, hbm = 0, hbm_all = 0, l2 = 0, hbm_bound = 0, l2_bound = 0, cube_any = 0, vector_any = 0, cube = 0,
           vector = 0, cube_compute = 0, vector_compute = 0, l2_hit_bytes = 0, serial_transfers = 0, footprint = 0;
};

Fractions fractions(const json& s) {
    Fractions f;
    f.T = std::max(num(s, "total_cycles", 1), 1.0);
    double busiest = 0;
    if (s.contains("cores") && s["cores"].is_object())
        for (const auto& c : s["cores"]) busiest = std::max(busiest, num(c, "tasks"));
    const double moved = std::max(num(s, "memory.hbm.read_bytes") + num(s, "memory.hbm.write_bytes"), 1.0);
    // HBM demand without the L2's eager write-backs (they only fill time HBM
    // had nothing else to do) ... and with them: all a larger L2 could save.
    f.hbm = num(s, "units.hbm.utilization") * (1 - num(s, "memory.l2.clean_bytes") / moved);
    f.hbm_all = num(s, "units.hbm.utilization");
    f.l2 = num(s, "units.l2.utilization");
    f.hbm_bound = num(s, "units.hbm.bound_fraction");
    f.l2_bound = num(s, "units.l2.bound_fraction");
    f.cube_any = num(s, "overlap.cube_busy_cycles") / f.T;
    f.vector_any = num(s, "overlap.vector_busy_cycles") / f.T;
    f.cube = num(s, "units.cube.utilization");
    f.vector = num(s, "units.vector.utilization");
    // The pipes whose cycles a clock change keeps (a core's busy time also
    // holds waits for HBM and L2, which are in ns).
    f.cube_compute = std::max(num(s, "units.cube_m.utilization"), num(s, "units.cube_mte1.utilization"));
    f.vector_compute = num(s, "units.vector_v.utilization");
    f.l2_hit_bytes = num(s, "memory.l2.hit_bytes");
    // Transfers on the busiest core's path, had each waited its full latency in series.
    f.serial_transfers = num(s, "memory.transfers") * busiest / std::max(num(s, "tasks.count", 1), 1.0);
    f.footprint = num(s, "memory.hbm.addressed_bytes");
    return f;
}

struct Band {
    std::string sign;  // "+": must not be slower, "-": must not be faster
    double lo = 0, hi = 0;
    bool must_move = true;
};

Band band(const std::string& kind, double factor, const Fractions& fr, const json& chip, bool fixed, double tol) {
    const bool lat = kind == "hbm_lat";
    const bool grows = lat ? factor < 1 : factor > 1;
    const double f = lat ? 1 / factor : factor;
    double b = 0, u = 0;
    bool must_move = true;
    if (kind == "hbm_bw" || kind == "l2_bw") {
        // Growing, a tier speeds the run up only while it was the limit; shrunk,
        // it may become the limit wherever it was busy.
        const bool hbm = kind == "hbm_bw";
        b = grows ? (hbm ? fr.hbm_bound : fr.l2_bound) : (hbm ? fr.hbm : fr.l2);
        u = hbm ? fr.hbm : fr.l2;
    } else if (lat) {
        // Latency hidden by multi-buffering is the design point: no must-move.
        const double dlat = std::abs(factor - 1) * num(chip, "hbm.latency_ns") * num(chip, "clock_ghz");
        b = std::min(1.0, fr.serial_transfers * dlat / fr.T);
        if (grows) return {"+", 1 - b - kSlack, 1 + tol, false};
        return {"-", 1 - tol, 1 + b + kSlack, false};
    } else if (kind == "l2_size") {
        // At most every L2 hit turns into an HBM read (shrink) or every HBM
        // byte into a hit (grow) -- unless the footprint fits both sizes.
        const double hbm_bytes_per_cycle = num(chip, "hbm.bandwidth_gbps") / num(chip, "clock_ghz");
        const double extra = fr.l2_hit_bytes / hbm_bytes_per_cycle / fr.T;
        const double l2 = num(chip, "l2.size_mb") * 1048576.0;
        if (fr.footprint <= std::min(l2, l2 * factor)) return {grows ? "+" : "-", 1 - tol, 1 + tol, false};
        if (grows) return {"+", 1 - fr.hbm_all - kSlack, 1 + tol, false};
        return {"-", 1 - tol, 1 + extra + kSlack, extra >= kMustMove};
    } else if (kind == "cube_count" || kind == "vector_count") {
        // A run uses only as many cores as its kernels have tasks at once:
        // no effect can be right.
        const bool cube = kind == "cube_count";
        b = cube ? fr.cube_any : fr.vector_any;
        u = cube ? fr.cube : fr.vector;
        must_move = false;
    } else if (kind == "ub" || kind == "l1" || kind == "l0c") {
        // A buffer bounds tile sizes and buffering depth: at most the time its
        // core type is busy moves; a fixed stream's tiles do not change.
        b = kind == "ub" ? fr.vector_any : fr.cube_any;
        must_move = false;
    } else {  // clock, in ns: HBM and L2 busy time is a floor; compute pipes scale
        if (grows) return {"+", std::max({1 / f, fr.hbm, fr.l2}) - kSlack, 1 + tol, true};
        const double floor = fixed ? std::max(fr.cube_compute, fr.vector_compute) / f - kSlack : 0.0;
        return {"-", std::max(1 - tol, floor), 1 / f + kSlack, true};
    }
    if (grows)
        return {"+", std::max(1 / f, 1 - b * (1 - 1 / f)) - kSlack, 1 + tol, must_move && b * (1 - 1 / f) >= kMustMove};
    // Only a fixed stream conserves the work; a recompiled plan may do less.
    const double floor = fixed ? u / f - kSlack : 0.0;
    return {"-", std::max(1 - tol, floor), 1 + b * (1 / f - 1) + kSlack, must_move && b * (1 / f - 1) >= kMustMove};
}

std::string verdict(const Band& b, double r, double tol) {
    if ((b.sign == "+" && r > 1 + tol) || (b.sign == "-" && r < 1 - tol)) return "wrong sign";
    if (std::abs(r - 1) < kNoEffect && b.must_move) return "no effect";
    if (r < b.lo || r > b.hi) return "out of band";
    return "ok";
}

// The fields that name a response: its base combination, change and mode.
json key_fields(const Point& p) {
    json k = json::parse(p.values.dump());
    k.erase("applied");
    return k;
}

double chip_value(const json& stats, const std::string& path) { return num(stats, "config." + path); }

json roofline_row(const Study& s, const Point& p, const json& st, const json& sb) {
    json row = key_fields(p);
    const std::string kind = kinds().at(p.change);
    const std::string metric = kind == "clock" ? "total_ns" : s.expect.metric;
    row["rule"] = "roofline";
    row["metric"] = metric;
    if (st.is_null() || sb.is_null()) {
        row["verdict"] = "error";
        return row;
    }
    const double t0 = num(sb, metric, -1), t1 = num(st, metric, -1);
    const double v0 = chip_value(sb, p.change), v1 = chip_value(st, p.change);
    if (!(t0 > 0 && t1 > 0 && v0 > 0 && v1 > 0)) {  // a metric or value the runs lack: nothing to judge
        row["verdict"] = "error";
        return row;
    }
    const json chip = sb.at("config").at("chip");
    const double factor = v1 / v0;
    const Fractions fr = fractions(sb);
    const Band b = band(kind, factor, fr, chip, p.mode == Mode::fixed, s.expect.tolerance);
    const double r = t1 / t0;
    row.update({{"base", t0}, {"changed", t1}, {"factor", factor}, {"r", r},
                {"sign", b.sign}, {"lo", b.lo}, {"hi", b.hi}, {"verdict", verdict(b, r, s.expect.tolerance)}});
    row["fractions"] = {{"hbm", fr.hbm}, {"l2", fr.l2}, {"cube_any", fr.cube_any}, {"vector_any", fr.vector_any}};
    return row;
}

json monotone_row(const Study& s, const Point& from, const Point& to, const json& sf, const json& st) {
    json row = key_fields(to);
    row.erase("value");
    row["from"] = json::parse(from.values.at("value").dump());
    row["to"] = json::parse(to.values.at("value").dump());
    row["rule"] = "monotone";
    row["metric"] = s.expect.metric;
    const double t0 = sf.is_null() ? -1 : num(sf, s.expect.metric, -1), t1 = st.is_null() ? -1 : num(st, s.expect.metric, -1);
    if (!(t0 > 0 && t1 > 0)) {  // a run failed or lacks the metric: nothing to judge
        row["verdict"] = "error";
        return row;
    }
    const double r = t1 / t0;
    row.update({{"before", t0}, {"after", t1}, {"r", r},
                {"verdict", r > 1 + s.expect.tolerance ? "slower" : "ok"}});
    return row;
}

bool matches(const json& known, const json& row) {
    for (auto it = known.begin(); it != known.end(); ++it)
        if (!row.contains(it.key()) || row[it.key()] != it.value()) return false;
    return true;
}

std::string describe(const json& row) {
    json k = row;
    for (const char* f : {"rule", "metric", "base", "changed", "before", "after", "factor", "r", "sign", "lo", "hi",
                          "fractions", "stream"})
        k.erase(f);
    return k.dump();
}

}  // namespace

bool roofline_rule_known(const std::string& path) { return kinds().count(path) != 0; }

std::vector<std::string> roofline_rule_keys() {
    std::vector<std::string> out;
    for (const auto& [k, v] : kinds()) out.push_back(k);
    return out;
}

ResponseCheck judge_responses(const Study& s, const std::vector<Point>& points, const std::vector<json>& stats) {
    ResponseCheck out;
    for (std::size_t i = 0; i < points.size(); ++i) {
        const Point& p = points[i];
        if (p.is_base()) continue;
        if (s.expect.rule == "roofline") {
            out.rows.push_back(roofline_row(s, p, stats[i], stats[p.base]));
        } else if (i > 0 && points[i - 1].change == p.change && points[i - 1].base == p.base) {
            out.rows.push_back(monotone_row(s, points[i - 1], p, stats[i - 1], stats[i]));
        }
    }
    std::vector<bool> used(s.expect.known.size(), false);
    for (const auto& row : out.rows) {
        if (row["verdict"] == "ok") continue;
        ++out.misses;
        bool listed = false;
        for (std::size_t k = 0; k < s.expect.known.size(); ++k)
            if (matches(json::parse(s.expect.known[k].dump()), row)) listed = used[k] = true;
        if (!listed)
            out.problems.push_back(fmt::format("new miss: {}{}", describe(row),
                                               row.contains("r") ? fmt::format(" (r = {:.3f})", row["r"].get<double>()) : ""));
    }
    for (std::size_t k = 0; k < s.expect.known.size(); ++k)
        if (!used[k])
            out.problems.push_back("no longer a miss: " + s.expect.known[k].dump() +
                                   ": drop it from the study's \"expect\".\"known\"");
    return out;
}

}  // namespace npusim::study
