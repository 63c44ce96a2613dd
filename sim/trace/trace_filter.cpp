#include "trace/trace_filter.hpp"

#include <fnmatch.h>

#include <algorithm>
#include <cctype>
#include <cmath>

#include <fmt/format.h>

#include "common/did_you_mean.hpp"
#include "common/errors.hpp"

namespace npusim {

namespace {

std::uint64_t parse_us(const std::string& text, const std::string& whole) {
    std::size_t used = 0;
    double us = -1;
    try {
        us = std::stod(text, &used);
    } catch (const std::exception&) {
        used = 0;
    }
    if (used != text.size() || !(us >= 0) || !std::isfinite(us) || us > 1e12)
        throw InputError(fmt::format("--trace-window {}: '{}' is not a time in microseconds (expected T0:T1, e.g. 10:25.5)",
                                     whole, text));
    return static_cast<std::uint64_t>(std::llround(us * 1e6));
}

}  // namespace

bool TraceFilter::active() const { return from_ps > 0 || to_ps != std::numeric_limits<std::uint64_t>::max() || !ops.empty() || !cores.empty(); }

bool TraceFilter::in_window(std::uint64_t start_ps, std::uint64_t end_ps) const { return end_ps >= from_ps && start_ps <= to_ps; }

bool TraceFilter::keeps_op(std::string_view op) const {
    if (ops.empty()) return true;
    const std::string name(op);
    return std::any_of(ops.begin(), ops.end(), [&](const std::string& g) { return ::fnmatch(g.c_str(), name.c_str(), 0) == 0; });
}

std::string TraceFilter::core_of_track(std::string_view track) {
    const std::string_view core = track.substr(0, track.find('.'));
    for (const std::string_view kind : {"cube", "vector"})
        if (core.size() > kind.size() && core.substr(0, kind.size()) == kind &&
            std::all_of(core.begin() + static_cast<std::ptrdiff_t>(kind.size()), core.end(),
                        [](char c) { return std::isdigit(static_cast<unsigned char>(c)) != 0; }))
            return std::string(core);
    return "";
}

bool TraceFilter::keeps_core(std::string_view core) const {
    return cores.empty() || std::find(cores.begin(), cores.end(), core) != cores.end();
}

std::string TraceFilter::options() const {
    std::vector<std::string> o;
    if (from_ps > 0 || to_ps != std::numeric_limits<std::uint64_t>::max()) o.push_back("--trace-window");
    if (!ops.empty()) o.push_back("--trace-ops");
    if (!cores.empty()) o.push_back("--trace-cores");
    return fmt::format("{}", fmt::join(o, ", "));
}

void parse_trace_window(const std::string& text, TraceFilter& f) {
    const auto colon = text.find(':');
    if (colon == std::string::npos)
        throw InputError(fmt::format("--trace-window {}: expected T0:T1 in microseconds of simulated time, e.g. 10:25.5", text));
    const std::string a = text.substr(0, colon), b = text.substr(colon + 1);
    if (!a.empty()) f.from_ps = parse_us(a, text);
    if (!b.empty()) f.to_ps = parse_us(b, text);
    if (f.to_ps <= f.from_ps) throw InputError(fmt::format("--trace-window {}: the window ends before it starts", text));
}

std::vector<std::string> parse_trace_list(const std::string& text, const std::string& option) {
    std::vector<std::string> items;
    std::size_t start = 0;
    for (;;) {
        const auto comma = text.find(',', start);
        const std::string item = text.substr(start, comma == std::string::npos ? std::string::npos : comma - start);
        if (item.empty()) throw InputError(fmt::format("{} '{}': an empty item (expected a comma-separated list)", option, text));
        items.push_back(item);
        if (comma == std::string::npos) break;
        start = comma + 1;
    }
    return items;
}

void check_trace_cores(const std::vector<std::string>& cores, int cubes, int vectors) {
    std::vector<std::string> all;
    for (int i = 0; i < cubes; ++i) all.push_back(fmt::format("cube{}", i));
    for (int i = 0; i < vectors; ++i) all.push_back(fmt::format("vector{}", i));
    for (const auto& c : cores)
        if (std::find(all.begin(), all.end(), c) == all.end())
            throw InputError(fmt::format("--trace-cores: '{}' is not a core of this chip{}; it has cube0..cube{} and "
                                         "vector0..vector{}",
                                         c, did_you_mean(c, all), cubes - 1, vectors - 1));
}

}  // namespace npusim
