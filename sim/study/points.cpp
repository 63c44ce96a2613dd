#include "study/points.hpp"

#include <algorithm>
#include <cstdint>
#include <map>
#include <optional>

#include <fmt/format.h>

#include "common/errors.hpp"
#include "config/run_config.hpp"
#include "config/schema.hpp"

#include <nlohmann/json.hpp>
#include <cmath>

namespace npusim::study {

std::string point_id(const ojson& values) {
    // Canonical text: keys sorted (nlohmann::json sorts), numbers in
    // nlohmann's shortest round-trip form.
    const std::string text = nlohmann::json::parse(values.dump()).dump();
    std::uint64_t h = 14695981039346656037ull;  // FNV-1a 64
    for (unsigned char c : text) {
        h ^= c;
        h *= 1099511628211ull;
    }
    return fmt::format("p{:012x}", h & 0xffffffffffffull);
}

std::vector<std::string> Point::compile_set_args(const Study& s) const {
    std::vector<std::string> out = base_run_sets(s, s.chips[chip], s.workloads[workload]);
    for (const auto& a : s.axes) out.push_back(set_arg(a.path, values.at(a.path)));
    return out;
}

std::vector<std::string> Point::set_args(const Study& s) const {
    std::vector<std::string> out = compile_set_args(s);
    if (mode == Mode::fixed)
        out.erase(std::remove_if(out.begin(), out.end(), [](const std::string& a) { return a.rfind("chip.", 0) != 0; }),
                  out.end());
    if (!change.empty()) out.push_back(set_arg(change, applied));
    return out;
}

std::string Point::label() const {
    // Each axis by the shortest suffix of its path, of at least two segments,
    // that no other axis ends with: cube.count and vector.count, never a
    // bare count (tools/plot_sweep.py labels the same way).
    auto tail = [](const std::string& path, int segments) {
        std::size_t at = path.size();
        for (int i = 0; i < segments; ++i) {
            if (at == 0) return path;
            const auto dot = path.rfind('.', at - 1);
            if (dot == std::string::npos) return path;
            at = dot;
        }
        return path.substr(at + 1);
    };
    auto ends_with = [](const std::string& path, const std::string& suffix) {
        return path == suffix ||
               (path.size() > suffix.size() && path.compare(path.size() - suffix.size(), suffix.size(), suffix) == 0 &&
                path[path.size() - suffix.size() - 1] == '.');
    };
    std::string out;
    for (auto it = values.begin(); it != values.end(); ++it) {
        if (it.key() == "applied" || it.key() == "stream" || (it.key() == "value" && it->is_null())) continue;
        if (it.key() == "change" && it->get<std::string>().empty()) {
            out += (out.empty() ? "" : " ") + std::string("base");
            continue;
        }
        if (it.key() == "chip" || it.key() == "workload" || it.key() == "mode" || it.key() == "change") {
            std::string text = it->get<std::string>();
            if (it.key() == "mode" && values.value("stream", std::string()) == "unpinned") text += "(unpinned)";
            if (it.key() == "change") text = tail(text, 2);
            out += (out.empty() ? "" : " ") + text + (it.key() == "change" ? "=" : "");
            continue;
        }
        if (it.key() == "value") {
            out += it->is_object() ? "x" + (*it)["scale"].dump() : it->dump();
            continue;
        }
        std::string name;
        for (int k = 2;; ++k) {
            name = tail(it.key(), k);
            bool unique = true;
            for (auto o = values.begin(); o != values.end(); ++o)
                if (o.key() != it.key() && ends_with(o.key(), name)) unique = false;
            if (unique || name == it.key()) break;
        }
        out += (out.empty() ? "" : " ") + name + "=" + (it->is_string() ? it->get<std::string>() : it->dump());
    }
    return out;
}

namespace {

// The axes' combinations ("grid": first axis slowest; "zip"), counted
// before anything is allocated (16 values on 8 axes are 4e9 points).
std::vector<ojson> axis_combinations(const Study& s, std::size_t per_combination) {
    std::vector<ojson> out;
    if (s.axes.empty()) return {ojson::object()};
    constexpr std::size_t kMaxPoints = 100000;
    const bool zip = s.combine == Combine::zip;
    std::size_t count = (zip ? s.axes.front().values.size() : 1) * per_combination;
    std::string sizes;
    for (const auto& a : s.axes) {
        sizes += (sizes.empty() ? "" : " x ") + std::to_string(a.values.size());
        if (!zip) count = a.values.size() > kMaxPoints / count ? kMaxPoints + 1 : count * a.values.size();
    }
    if (count > kMaxPoints)
        throw InputError(fmt::format("{}: \"axes\": {} values (combine \"{}\") make more than {} points; split the study",
                                     s.file, sizes, zip ? "zip" : "grid", kMaxPoints));
    if (zip) {
        for (std::size_t i = 0; i < s.axes.front().values.size(); ++i) {
            ojson v = ojson::object();
            for (const auto& a : s.axes) v[a.path] = a.values[i];
            out.push_back(std::move(v));
        }
        return out;
    }
    std::vector<std::size_t> pos(s.axes.size(), 0);
    for (;;) {
        ojson v = ojson::object();
        for (std::size_t a = 0; a < s.axes.size(); ++a) v[s.axes[a].path] = s.axes[a].values[pos[a]];
        out.push_back(std::move(v));
        // Odometer: the last axis turns fastest; done when the first wraps.
        bool done = true;
        for (std::size_t a = s.axes.size(); a-- > 0;) {
            if (++pos[a] < s.axes[a].values.size()) {
                done = false;
                break;
            }
            pos[a] = 0;
        }
        if (done) return out;
    }
}

// A change value as set: {"scale": F} is F times the base run's value
// (rounded, and at least 1, for an integer key).
// A base combination's resolved configuration, loaded once and only if a
// scaled change needs it.
class BaseDocument {
public:
    BaseDocument(const Study& s, const Point& base) : s_(s), base_(base) {}
    const nlohmann::json& get(const std::string& path, double f) {
        if (!loaded_) {
            try {
                loaded_.emplace(RunConfig::load(s_.chips[base_.chip].path, s_.workloads[base_.workload].path,
                                                base_.compile_set_args(s_)));
            } catch (const InputError& e) {
                throw InputError(fmt::format("{}: \"changes\".\"{}\": {{\"scale\": {}}} needs the base run ({}), "
                                             "which does not load: {}", s_.file, path, f, base_.label(), e.what()));
            }
        }
        return loaded_->document();
    }

private:
    const Study& s_;
    const Point& base_;
    std::optional<RunConfig> loaded_;
};

ojson applied_value(const Study& s, const Change& c, const ojson& written, BaseDocument& base) {
    if (!written.is_object()) return written;
    const double f = written["scale"].get<double>();
    const nlohmann::json* node = &base.get(c.path, f);
    for (const auto& seg : split_key_path(c.path)) {
        if (!node->is_object() || !node->contains(seg) || (*node)[seg].is_null())
            throw InputError(fmt::format("{}: \"changes\".\"{}\": {{\"scale\": {}}} needs the base run's value, and "
                                         "it has none", s.file, c.path, f));
        node = &(*node)[seg];
    }
    if (!node->is_number())
        throw InputError(fmt::format("{}: \"changes\".\"{}\": {{\"scale\": ...}} scales a number; the base run's "
                                     "value is {}", s.file, c.path, node->dump()));
    const double base_value = node->get<double>(), v = base_value * f;
    // A count scaled down stays a count (at least 1, unless it was 0: "none"
    // or "all" for some keys); a real keeps six significant digits.
    if (c.integer) return std::max<std::int64_t>(base_value >= 1 ? 1 : 0, std::llround(v));
    return std::stod(fmt::format("{:.6g}", v));
}

bool core_count(const std::string& path) {
    return path.rfind("chip.cores.", 0) == 0 && path.size() > 6 && path.compare(path.size() - 6, 6, ".count") == 0;
}

// The base run and the change runs of one combination in one mode.
void add_mode_points(const Study& s, const Point& key, Mode mode, std::vector<Point>& out) {
    const bool fixed = mode == Mode::fixed;
    const std::vector<bool> pins = fixed ? std::vector<bool>{false, true} : std::vector<bool>{false};
    for (bool unpinned : pins) {
        bool any = !fixed;
        for (const auto& c : s.changes) any = any || core_count(c.path) == unpinned;
        if (!any) continue;
        Point base = key;
        base.mode = mode;
        base.unpinned = unpinned;
        base.values["change"] = "";
        base.values["value"] = nullptr;
        base.values["applied"] = nullptr;
        base.values["mode"] = fixed ? "fixed" : "recompiled";
        if (fixed) base.values["stream"] = unpinned ? "unpinned" : "pinned";
        base.base = out.size();
        out.push_back(base);
        BaseDocument document(s, base);
        for (const auto& c : s.changes) {
            if (fixed && core_count(c.path) != unpinned) continue;
            for (const auto& v : c.values) {
                Point p = base;
                p.change = c.path;
                p.applied = applied_value(s, c, v, document);
                p.values["change"] = c.path;
                p.values["value"] = v;
                p.values["applied"] = p.applied;
                out.push_back(std::move(p));
            }
        }
    }
}

}  // namespace

std::vector<Point> expand_points(const Study& s) {
    std::vector<Point> points;
    const bool named = s.chips.size() > 1 || s.workloads.size() > 1 || !s.chips.front().name.empty() ||
                       !s.workloads.front().name.empty();
    std::size_t per = s.chips.size() * s.workloads.size();
    if (!s.changes.empty()) {
        std::size_t changes = 2;
        for (const auto& c : s.changes) changes += c.values.size();
        per *= changes * s.modes.size();
    }
    if (s.axes.empty() && !named && s.changes.empty()) return points;
    const std::vector<ojson> combos = axis_combinations(s, per);
    std::size_t key = 0;
    for (std::size_t c = 0; c < s.chips.size(); ++c)
        for (std::size_t w = 0; w < s.workloads.size(); ++w)
            for (const auto& combo : combos) {
                Point p;
                p.chip = c;
                p.workload = w;
                p.base_key = key++;
                if (named) {
                    p.values["chip"] = s.chips[c].name.empty() ? s.chips[c].file : s.chips[c].name;
                    p.values["workload"] = s.workloads[w].name.empty() ? s.workloads[w].file : s.workloads[w].name;
                }
                for (auto it = combo.begin(); it != combo.end(); ++it) p.values[it.key()] = it.value();
                if (s.changes.empty()) {
                    p.base = points.size();
                    points.push_back(std::move(p));
                    continue;
                }
                for (Mode m : s.modes) add_mode_points(s, p, m, points);
            }
    std::map<std::string, std::size_t> seen;
    for (std::size_t i = 0; i < points.size(); ++i) {
        points[i].index = i;
        points[i].id = point_id(points[i].values);
        const auto [it, fresh] = seen.emplace(points[i].id, i);
        if (!fresh)
            throw InputError(fmt::format("{}: points {} and {} are the same ({}); every point must differ", s.file,
                                         it->second, i, points[i].label()));
    }
    return points;
}

}  // namespace npusim::study
