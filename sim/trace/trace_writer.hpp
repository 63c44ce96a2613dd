// Chrome Trace Event Format writer (JSON object form), loadable by Perfetto
// (docs/design.md §4.5). Streams events to the file as the simulation runs, so a
// trace never has to fit in memory. Times are picoseconds in; out they are
// whole nanoseconds (written in µs, docs/statistics.md "Trace"), so every
// viewer sees slices on one track nest or abut exactly.
#pragma once
#include <cstdint>
#include <iterator>
#include <memory>
#include <string>
#include <string_view>

#include <fmt/format.h>

#include "common/output_file.hpp"

namespace npusim {

class TraceWriter {
public:
    TraceWriter();  // disabled
    explicit TraceWriter(const std::string& path);
    ~TraceWriter();
    TraceWriter(const TraceWriter&) = delete;
    TraceWriter& operator=(const TraceWriter&) = delete;

    bool enabled() const { return out_ != nullptr; }

    void process(int pid, std::string_view name, int sort_index);
    // Names a thread (a track) and orders it within its process.
    void thread(int pid, int tid, std::string_view name, int sort_index);
    // `args` is a JSON object body without braces, e.g. "\"id\":\"t1\"".
    void complete(int pid, int tid, std::string_view name, std::string_view cat, std::uint64_t ts_ps,
                  std::uint64_t dur_ps, std::string_view args = {});
    // A slice already written (or about to be), as [start, end) in ps.
    struct SliceAt {
        int pid, tid;
        std::uint64_t start_ps, end_ps;
    };
    // A flow arrow from the end of one slice to the start of another; both
    // ends are placed inside their slice after rounding to whole ns.
    void flow(std::uint64_t id, const SliceAt& from, const SliceAt& to);
    void counter(int pid, std::string_view name, std::uint64_t ts_ps, double value);
    void instant(int pid, int tid, std::string_view name, std::uint64_t ts_ps, std::string_view args = {});

    // Writes the closing bracket and metadata and puts the file in place
    // (common/output_file.hpp: a full disk is InputError "FILE: reason"); idempotent.
    void close(std::string_view other_data_json = {});

    std::uint64_t events_written() const { return events_; }

private:
    void begin_event();
    template <typename... A>
    void put(fmt::format_string<A...> f, A&&... a) {
        fmt::memory_buffer b;
        fmt::format_to(std::back_inserter(b), f, std::forward<A>(a)...);
        write(std::string_view(b.data(), b.size()));
    }
    void write(std::string_view text);

    std::unique_ptr<OutputFile> out_;
    // A path ending in .gz: the JSON goes through gzip (zlib's deflate) on its
    // way to the file (Perfetto opens it as it is).
    class Gzip;
    std::unique_ptr<Gzip> gzip_;
    std::uint64_t events_ = 0;
};

// Escapes a string for use inside a JSON string literal.
std::string json_escape(std::string_view s);

}  // namespace npusim
