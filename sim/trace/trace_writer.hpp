// Chrome Trace Event Format writer (JSON object form), loadable by Perfetto
// (docs/design.md §4.5). Streams events to the file as the simulation runs, so a
// trace never has to fit in memory. Times are picoseconds in, µs out.
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
    TraceWriter() = default;  // disabled
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
    // A flow arrow from inside one slice to the slice that encloses ts_to.
    void flow(std::uint64_t id, int pid_from, int tid_from, std::uint64_t ts_from_ps, int pid_to, int tid_to,
              std::uint64_t ts_to_ps);
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
        out_->write(std::string_view(b.data(), b.size()));
    }

    std::unique_ptr<OutputFile> out_;
    std::uint64_t events_ = 0;
};

// Escapes a string for use inside a JSON string literal.
std::string json_escape(std::string_view s);

}  // namespace npusim
