// The busiest tracks of a trace, for the timeline of a run report. The
// trace writer puts one event per line, so the file is read line by line and
// only complete ("X") events and thread/process names are parsed.
#include <zlib.h>

#include <algorithm>
#include <cmath>
#include <map>
#include <string>
#include <utility>

#include "common/errors.hpp"
#include "report/html_report.hpp"
#include "stats/intervals.hpp"

namespace npusim::report {

using json = nlohmann::json;

namespace {

// Fewer, wider slices: neighbours closer than `gap` are joined.
std::vector<Slice> coarsen(const std::vector<Slice>& in, double gap) {
    std::vector<Slice> out;
    std::size_t joined = 0;
    for (const Slice& s : in) {
        if (!out.empty() && s.start_us - (out.back().start_us + out.back().dur_us) <= gap) {
            Slice& b = out.back();
            b.dur_us = std::max(b.dur_us, s.start_us + s.dur_us - b.start_us);
            ++joined;
            continue;
        }
        if (joined && !out.empty()) out.back().name += " +" + std::to_string(joined) + " more";
        joined = 0;
        out.push_back(s);
    }
    if (joined && !out.empty()) out.back().name += " +" + std::to_string(joined) + " more";
    return out;
}

}  // namespace

namespace {

// A track's kind of unit: its name before the first dot, digits dropped
// ("cube12.mte2" -> "cube"), within its process.
std::string unit_kind(const TrackActivity& t) {
    std::string k = t.process + "/";
    for (char c : t.name.substr(0, t.name.find('.')))
        if (c < '0' || c > '9') k += c;
    return k;
}

}  // namespace

namespace {

// The trace's lines, read through zlib: a gzip trace (--trace out.json.gz)
// and a plain one alike.
class TraceLines {
public:
    explicit TraceLines(const std::string& file) : file_(file), f_(gzopen(file.c_str(), "rb")) {
        if (!f_) throw InputError(file + ": cannot read trace for the report");
    }
    ~TraceLines() { gzclose(f_); }
    TraceLines(const TraceLines&) = delete;
    TraceLines& operator=(const TraceLines&) = delete;
    bool next(std::string& line) {
        line.clear();
        char buf[1 << 16];
        while (gzgets(f_, buf, sizeof buf)) {
            line += buf;
            if (!line.empty() && line.back() == '\n') {
                line.pop_back();
                return true;
            }
        }
        int err = Z_OK;
        gzerror(f_, &err);
        if (err != Z_OK && err != Z_STREAM_END) throw InputError(file_ + ": the trace is damaged (truncated gzip?); the report needs it whole");
        return !line.empty();
    }

private:
    std::string file_;
    gzFile f_;
};

std::vector<TrackActivity> select_tracks(const std::string& trace_file, std::size_t count, std::size_t max_slices,
                                         bool by_kind) {
    TraceLines in(trace_file);
    std::map<std::pair<int, int>, TrackActivity> tracks;
    std::map<int, std::string> processes;
    std::string line;
    while (in.next(line)) {
        const bool is_x = line.find("\"ph\":\"X\"") != std::string::npos;
        const bool is_name = !is_x && (line.find("\"thread_name\"") != std::string::npos ||
                                       line.find("\"process_name\"") != std::string::npos);
        if (!is_x && !is_name) continue;
        while (!line.empty() && (line.back() == ',' || line.back() == '\r' || line.back() == ' ')) line.pop_back();
        const auto brace = line.find('{');
        if (brace == std::string::npos) continue;
        const json e = json::parse(line.substr(brace), nullptr, false);
        if (e.is_discarded() || !e.is_object()) continue;
        const int pid = e.value("pid", 0), tid = e.value("tid", 0);
        if (is_name) {
            const std::string n = e.contains("args") ? e["args"].value("name", std::string()) : std::string();
            if (e.value("name", std::string()) == "process_name") processes[pid] = n;
            else tracks[{pid, tid}].name = n;
            continue;
        }
        Slice s;
        s.start_us = e.value("ts", 0.0);
        s.dur_us = e.value("dur", 0.0);
        s.name = e.value("name", std::string());
        tracks[{pid, tid}].slices.push_back(std::move(s));
    }

    std::vector<TrackActivity> all;
    for (auto& [key, t] : tracks) {
        if (t.slices.empty()) continue;
        if (t.name.empty()) t.name = "track " + std::to_string(key.second);
        t.process = processes[key.first];
        std::sort(t.slices.begin(), t.slices.end(),
                  [](const Slice& a, const Slice& b) { return a.start_us < b.start_us; });
        std::vector<Interval> iv;
        for (const auto& s : t.slices) {
            const auto a = static_cast<std::uint64_t>(std::llround(s.start_us * 1e6));  // µs -> ps
            iv.emplace_back(a, a + static_cast<std::uint64_t>(std::llround(s.dur_us * 1e6)));
        }
        t.busy_us = static_cast<double>(total_length(merge_intervals(std::move(iv)))) / 1e6;
        all.push_back(std::move(t));
    }
    std::stable_sort(all.begin(), all.end(),
                     [](const TrackActivity& a, const TrackActivity& b) { return a.busy_us > b.busy_us; });
    if (by_kind) {
        // Round robin over the kinds, in the order of their busiest track.
        std::vector<std::string> kinds;
        std::map<std::string, std::vector<TrackActivity*>> of_kind;
        std::vector<TrackActivity> picked;
        for (auto& t : all) {
            if (t.name == "critical path") {
                picked.push_back(std::move(t));
                continue;
            }
            const std::string k = unit_kind(t);
            if (!of_kind.count(k)) kinds.push_back(k);
            of_kind[k].push_back(&t);
        }
        for (std::size_t round = 0; picked.size() < count; ++round) {
            bool any = false;
            for (const auto& k : kinds)
                if (round < of_kind[k].size() && picked.size() < count) {
                    picked.push_back(std::move(*of_kind[k][round]));
                    any = true;
                }
            if (!any) break;
        }
        // Shown kind by kind, in the order of each kind's busiest track.
        std::map<std::string, std::size_t> rank;
        for (std::size_t i = 0; i < kinds.size(); ++i) rank[kinds[i]] = i;
        std::stable_sort(picked.begin(), picked.end(), [&](const TrackActivity& a, const TrackActivity& b) {
            const bool ca = a.name == "critical path", cb = b.name == "critical path";
            if (ca || cb) return ca && !cb;
            return rank[unit_kind(a)] < rank[unit_kind(b)];
        });
        all = std::move(picked);
    }
    if (all.size() > count) all.resize(count);
    for (auto& t : all) {
        if (t.slices.size() <= max_slices) continue;
        const double span = t.slices.back().start_us + t.slices.back().dur_us - t.slices.front().start_us;
        double gap = span / static_cast<double>(max_slices * 4);
        std::vector<Slice> c = coarsen(t.slices, gap);
        while (c.size() > max_slices) {
            gap *= 2;
            c = coarsen(t.slices, gap);
        }
        t.slices = std::move(c);
    }
    return all;
}

}  // namespace

std::vector<TrackActivity> busiest_tracks(const std::string& trace_file, std::size_t count, std::size_t max_slices) {
    return select_tracks(trace_file, count, max_slices, false);
}

std::vector<TrackActivity> report_tracks(const std::string& trace_file, std::size_t count) {
    return select_tracks(trace_file, count, 2500, true);
}


}  // namespace npusim::report
