// Chrome Trace Event Format writer (JSON object form), loadable by Perfetto
// (docs/design.md §4.5). Streams events to the file as the simulation runs, so a
// trace never has to fit in memory. Times are picoseconds in; out they are
// whole nanoseconds (written in µs, docs/statistics.md "Trace"), so every
// viewer sees slices on one track nest or abut exactly.
#pragma once
#include <cstdint>
#include <iterator>
#include <map>
#include <memory>
#include <string>
#include <string_view>
#include <unordered_map>
#include <utility>

#include <fmt/format.h>

#include "common/output_file.hpp"
#include "trace/trace_filter.hpp"

namespace npusim {

class TraceWriter {
public:
    TraceWriter();  // disabled
    explicit TraceWriter(const std::string& path);
    ~TraceWriter();
    TraceWriter(const TraceWriter&) = delete;
    TraceWriter& operator=(const TraceWriter&) = delete;

    bool enabled() const { return out_ != nullptr; }
    // Keep only what `f` selects (trace/trace_filter.hpp); set before any event.
    void set_filter(TraceFilter f);

    void process(int pid, std::string_view name, int sort_index);
    // Names a thread (a track) and orders it within its process.
    void thread(int pid, int tid, std::string_view name, int sort_index);
    // `args` is a JSON object body without braces, e.g. "\"id\":\"t1\"";
    // `op`: the op a slice on a core's track belongs to, when its name is
    // not the op's (a kernel program's phase), for --trace-ops.
    void complete(int pid, int tid, std::string_view name, std::string_view cat, std::uint64_t ts_ps,
                  std::uint64_t dur_ps, std::string_view args = {}, std::string_view op = {});
    // Whether slices are kept by op (callers skip building op names if not).
    bool filters_ops() const { return filtering_ && !filter_.ops.empty(); }
    // A slice already written (or about to be), as [start, end) in ps, and
    // its op (for --trace-ops; empty: not an op's slice).
    struct SliceAt {
        int pid, tid;
        std::uint64_t start_ps, end_ps;
        std::string_view op = {};
    };
    // A flow arrow from the end of one slice to the start of another; both
    // ends are placed inside their slice after rounding to whole ns.
    void flow(std::uint64_t id, const SliceAt& from, const SliceAt& to, std::string_view name = "release",
              std::string_view cat = "event");
    void counter(int pid, std::string_view name, std::uint64_t ts_ps, double value);
    void instant(int pid, int tid, std::string_view name, std::uint64_t ts_ps, std::string_view args = {});

    // Writes the closing bracket and metadata and puts the file in place
    // (common/output_file.hpp: a full disk is InputError "FILE: reason"); idempotent.
    // A filter that kept no slice writes no file (selected_nothing()).
    void close(std::string_view other_data_json = {});

    std::uint64_t events_written() const { return events_; }
    bool selected_nothing() const { return selected_nothing_; }

private:
    void begin_event();
    template <typename... A>
    void put(fmt::format_string<A...> f, A&&... a) {
        fmt::memory_buffer b;
        fmt::format_to(std::back_inserter(b), f, std::forward<A>(a)...);
        write(std::string_view(b.data(), b.size()));
    }
    void write(std::string_view text);
    // Filtering: whether a track is kept, and whether it is a core's (whose
    // slices are ops' slices).
    struct Track {
        bool kept = true, core = false;
    };
    Track track(int pid, int tid) const;
    bool keeps(int pid, int tid, std::string_view op, std::uint64_t start_ps, std::uint64_t end_ps) const;

    std::unique_ptr<OutputFile> out_;
    // A path ending in .gz: the JSON goes through gzip (zlib's deflate) on its
    // way to the file (Perfetto opens it as it is).
    class Gzip;
    std::unique_ptr<Gzip> gzip_;
    std::uint64_t events_ = 0;
    TraceFilter filter_;
    bool filtering_ = false, selected_nothing_ = false;
    std::uint64_t slices_kept_ = 0;
    std::unordered_map<std::uint64_t, Track> tracks_;  // (pid << 32 | tid) of named threads
    // Each counter's last value before the window, written at its start.
    std::map<std::pair<int, std::string>, double> counter_before_;
};

// Escapes a string for use inside a JSON string literal.
std::string json_escape(std::string_view s);

}  // namespace npusim
