#include "study/points.hpp"

#include <algorithm>
#include <cstdint>
#include <map>

#include <fmt/format.h>

#include "common/errors.hpp"

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

std::vector<std::string> Point::set_args(const Study& s) const {
    std::vector<std::string> out = s.base_set_args();
    for (auto it = values.begin(); it != values.end(); ++it) out.push_back(set_arg(it.key(), it.value()));
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

std::vector<Point> expand_points(const Study& s) {
    std::vector<Point> points;
    if (s.axes.empty()) return points;
    // Count before allocating: a grid multiplies (16 values on 8 axes are 4e9 points).
    constexpr std::size_t kMaxPoints = 100000;
    const bool zip = s.combine == Combine::zip;
    std::size_t count = zip ? s.axes.front().values.size() : 1;
    std::string sizes;
    for (const auto& a : s.axes) {
        sizes += (sizes.empty() ? "" : " x ") + std::to_string(a.values.size());
        if (!zip) count = a.values.size() > kMaxPoints / count ? kMaxPoints + 1 : count * a.values.size();
    }
    if (count > kMaxPoints)
        throw InputError(fmt::format("{}: \"axes\": {} values (combine \"{}\") make more than {} points; split the study",
                                     s.file, sizes, zip ? "zip" : "grid", kMaxPoints));
    if (s.combine == Combine::zip) {
        for (std::size_t i = 0; i < s.axes.front().values.size(); ++i) {
            Point p;
            for (const auto& a : s.axes) p.values[a.path] = a.values[i];
            points.push_back(std::move(p));
        }
    } else {
        std::vector<std::size_t> pos(s.axes.size(), 0);
        for (;;) {
            Point p;
            for (std::size_t a = 0; a < s.axes.size(); ++a) p.values[s.axes[a].path] = s.axes[a].values[pos[a]];
            points.push_back(std::move(p));
            // Odometer: the last axis turns fastest; done when the first wraps.
            bool done = true;
            for (std::size_t a = s.axes.size(); a-- > 0;) {
                if (++pos[a] < s.axes[a].values.size()) {
                    done = false;
                    break;
                }
                pos[a] = 0;
            }
            if (done) break;
        }
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
