#include "stats/stats_schema.hpp"

#include <map>
#include <stdexcept>
#include <unordered_map>

#include <nlohmann/json.hpp>

#include "common/errors.hpp"

namespace npusim {
namespace {

constexpr char kAny = '\x01';  // a `<name>` in a compiled pattern: one or more characters

// One segment of a pattern: its alternatives (`{a,b}`), each a glob.
using Segment = std::vector<std::string>;

std::vector<std::string> split_dots(const std::string& s) {
    std::vector<std::string> out(1);
    for (char c : s)
        if (c == '.') out.emplace_back();
        else out.back() += c;
    return out;
}

Segment compile_segment(const std::string& seg) {
    std::string glob;
    for (std::size_t i = 0; i < seg.size(); ++i)
        if (seg[i] == '<') {
            i = seg.find('>', i);
            glob += kAny;
        } else {
            glob += seg[i];
        }
    const std::size_t open = glob.find('{');
    if (open == std::string::npos) return {glob};
    const std::size_t close = glob.find('}', open);
    Segment alts;
    const std::string head = glob.substr(0, open), tail = glob.substr(close + 1);
    std::string alt;
    for (std::size_t i = open + 1; i <= close; ++i)
        if (glob[i] == ',' || i == close) {
            alts.push_back(head + alt + tail);
            alt.clear();
        } else {
            alt += glob[i];
        }
    return alts;
}

bool glob_match(const char* g, const char* s) {
    if (*g == 0) return *s == 0;
    if (*g == kAny) {
        if (*s == 0) return false;
        for (const char* t = s + 1;; ++t) {
            if (glob_match(g + 1, t)) return true;
            if (*t == 0) return false;
        }
    }
    return *g == *s && glob_match(g + 1, s + 1);
}

bool segment_match(const Segment& seg, const std::string& s) {
    for (const std::string& alt : seg)
        if (glob_match(alt.c_str(), s.c_str())) return true;
    return false;
}

struct Compiled {
    const StatSpec* spec;
    std::vector<Segment> segments;
    int wildcards = 0;  // segments with a placeholder: fewer is more specific
};

struct Index {
    std::vector<Compiled> rows;
    std::multimap<std::string, std::size_t> by_first;  // first segment's literal alternatives -> row
};

const Index& index() {
    static const Index ix = [] {
        Index i;
        for (const StatSpec& s : stat_keys()) {
            Compiled c{&s, {}};
            for (const std::string& seg : split_dots(s.pattern)) {
                c.segments.push_back(compile_segment(seg));
                for (const std::string& alt : c.segments.back())
                    if (alt.find(kAny) != std::string::npos) {
                        ++c.wildcards;
                        break;
                    }
            }
            for (const std::string& alt : c.segments.front()) {
                if (alt.find(kAny) != std::string::npos) throw std::logic_error("stats schema: " + s.pattern + ": first segment must be a name");
                i.by_first.emplace(alt, i.rows.size());
            }
            i.rows.push_back(std::move(c));
        }
        return i;
    }();
    return ix;
}

// The most specific row that matches (`units.hbm.utilization` before
// `units.<pipe>.utilization`); among equally specific ones, the first.
const StatSpec* match(const std::string& key, bool writers_only) {
    const std::vector<std::string> segs = split_dots(key);
    const Index& ix = index();
    auto [lo, hi] = ix.by_first.equal_range(segs.front());
    const Compiled* best = nullptr;
    for (auto it = lo; it != hi; ++it) {
        const Compiled& c = ix.rows[it->second];
        if (c.segments.size() != segs.size() || (writers_only && c.spec->source != StatSource::key)) continue;
        if (best && (c.wildcards > best->wildcards || (c.wildcards == best->wildcards && c.spec > best->spec))) continue;
        bool ok = true;
        for (std::size_t i = 1; i < segs.size() && ok; ++i) ok = segment_match(c.segments[i], segs[i]);
        if (ok) best = &c;
    }
    return best ? best->spec : nullptr;
}

// Could some name beginning with `p` match `glob`?
bool could_begin(const std::string& glob, const std::string& p) {
    const std::size_t any = glob.find(kAny);
    if (any == std::string::npos) return glob.compare(0, p.size(), p) == 0;
    const std::string lit = glob.substr(0, any);
    return lit.compare(0, p.size(), p) == 0 || p.compare(0, lit.size(), lit) == 0;
}

}  // namespace

const std::vector<StatSection>& stat_sections() {
    static const std::vector<StatSection> s = {
        {"run", "Run"},
        {"units.core", "Per unit type: cores"},
        {"units.pipe", "Per unit type: pipes"},
        {"units.memory", "Per unit type: memory tiers"},
        {"cores", "Per core"},
        {"overlap", "Cube/Vector overlap"},
        {"memory", "Traffic per tier"},
        {"tasks", "Tasks and events"},
        {"host", "The host runtime"},
        {"critical_path", "The critical path"},
        {"binds", "What binds, by attribution"},
        {"what_would_help", "What binds, by re-running"},
        {"ops", "Per op"},
        {"ranks", "Runs on several ranks"},
        {"mesh", "The mesh and the functional memory"},
        {"compile", "A compiled graph"},
        {"collective", "A collective"},
        {"llm", "An LLM serving step"},
    };
    return s;
}

const StatSpec* find_stat(const std::string& key) { return match(key, false); }

const StatSpec& stat_spec(const std::string& key) {
    thread_local std::unordered_map<std::string, const StatSpec*> seen;
    auto it = seen.find(key);
    if (it != seen.end()) return *it->second;
    const StatSpec* s = match(key, true);
    if (!s)
        throw std::logic_error("stats key '" + key +
                               "' is not in the statistics schema: add a row to sim/stats/stats_keys*.cpp");
    seen.emplace(key, s);
    return *s;
}

const char* to_string(StatKind k) {
    switch (k) {
        case StatKind::count: return "count";
        case StatKind::cycles: return "cycles";
        case StatKind::ps: return "ps";
        case StatKind::ns: return "ns";
        case StatKind::bytes: return "bytes";
        case StatKind::fraction: return "fraction";
        case StatKind::ratio: return "ratio";
        case StatKind::rate: return "rate";
        case StatKind::number: return "number";
        case StatKind::index: return "index";
        case StatKind::flag: return "flag";
        case StatKind::text: return "text";
        case StatKind::list: return "list";
        case StatKind::object: return "object";
    }
    return "?";
}

const char* to_string(RankMerge m) {
    switch (m) {
        case RankMerge::sum: return "sum";
        case RankMerge::max: return "max";
        case RankMerge::mean: return "mean";
        case RankMerge::last_rank: return "last rank";
        case RankMerge::whole: return "whole";
    }
    return "?";
}

bool stat_pattern_under(const std::string& pattern, const std::string& prefix) {
    const std::vector<std::string> p = split_dots(prefix), segs = split_dots(pattern);
    if (p.size() > segs.size()) return false;
    for (std::size_t i = 0; i < p.size(); ++i) {
        const Segment seg = compile_segment(segs[i]);
        bool ok = false;
        for (const std::string& alt : seg)
            ok = ok || (i + 1 < p.size() ? glob_match(alt.c_str(), p[i].c_str()) : could_begin(alt, p[i]));
        if (!ok) return false;
    }
    return true;
}

}  // namespace npusim
