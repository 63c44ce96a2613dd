#include "trace/trace_writer.hpp"

#include <zlib.h>

#include <cmath>
#include <filesystem>
#include <stdexcept>

#include <fmt/format.h>

#include "common/errors.hpp"
#include "common/output_file.hpp"

namespace npusim {

namespace {

// Whole nanoseconds, rounded half up. Start and end of a slice are rounded
// on their own, so neighbours that share a boundary in picoseconds still
// share it in nanoseconds, and nesting survives the rounding.
std::uint64_t to_ns(std::uint64_t ps) { return (ps + 500) / 1000; }

// Chrome traces count in microseconds. A whole nanosecond n is written as
// the multiple of 2^-30 µs nearest n/1000: Perfetto's llround(ts * 1000)
// gives back exactly n, and viewers that add ts + dur or subtract a track's
// first ts in floating point (speedscope) compute exactly, since every value
// lies on one binary grid (exact up to 2^23 µs, 8.4 s of simulated time).
constexpr int kGridBits = 30;

double grid_us(std::uint64_t ns) {
    const unsigned __int128 scaled = (static_cast<unsigned __int128>(ns) << kGridBits) + 500;
    return std::ldexp(static_cast<double>(scaled / 1000), -kGridBits);
}

// The shortest decimal that reads back as the same double.
std::string us_at(std::uint64_t ns) { return fmt::format("{}", grid_us(ns)); }
std::string us(std::uint64_t ps) { return us_at(to_ns(ps)); }

// The duration that, added to the start in floating point, lands exactly on
// the end; both are on the grid, so the difference is exact.
std::string us_between(std::uint64_t start_ns, std::uint64_t end_ns) {
    return fmt::format("{}", grid_us(end_ns) - grid_us(start_ns));
}

// A point inside [start, end) in whole ns, off the boundary where the slice
// is long enough: an arrow drawn from or to it binds to that slice and not
// to a neighbour that starts or ends on the same nanosecond.
// Both slices are at least 1 ns long (shorter ones are not written).
std::uint64_t inside_from(std::uint64_t end_ps) { return to_ns(end_ps) - 1; }
std::uint64_t inside_to(std::uint64_t start_ps, std::uint64_t end_ps) {
    const std::uint64_t s = to_ns(start_ps), e = to_ns(end_ps);
    return e > s + 1 ? s + 1 : s;
}

}  // namespace

std::string json_escape(std::string_view s) {
    std::string out;
    out.reserve(s.size());
    for (char c : s) {
        switch (c) {
            case '"': out += "\\\""; break;
            case '\\': out += "\\\\"; break;
            case '\n': out += "\\n"; break;
            case '\t': out += "\\t"; break;
            default:
                if (static_cast<unsigned char>(c) < 0x20) out += fmt::format("\\u{:04x}", c);
                else out += c;
        }
    }
    return out;
}

class TraceWriter::Gzip {
public:
    explicit Gzip(OutputFile& out) : out_(out) {
        // windowBits 15 + 16: a gzip header and trailer around the deflate stream.
        if (deflateInit2(&z_, 6, Z_DEFLATED, 15 + 16, 8, Z_DEFAULT_STRATEGY) != Z_OK)
            throw std::runtime_error("zlib: deflateInit2 failed");
    }
    ~Gzip() { deflateEnd(&z_); }
    void write(std::string_view text, bool finish = false) {
        z_.next_in = reinterpret_cast<Bytef*>(const_cast<char*>(text.data()));
        z_.avail_in = static_cast<uInt>(text.size());
        int rc = Z_OK;
        do {
            z_.next_out = reinterpret_cast<Bytef*>(buf_);
            z_.avail_out = sizeof buf_;
            rc = deflate(&z_, finish ? Z_FINISH : Z_NO_FLUSH);
            if (rc == Z_STREAM_ERROR) throw std::runtime_error("zlib: deflate failed on the trace");
            out_.write(std::string_view(buf_, sizeof buf_ - z_.avail_out));
        } while (z_.avail_out == 0 || (finish && rc != Z_STREAM_END));
    }

private:
    OutputFile& out_;
    z_stream z_{};
    char buf_[1 << 16];
};

TraceWriter::TraceWriter() = default;

TraceWriter::TraceWriter(const std::string& path) : out_(std::make_unique<OutputFile>(path)) {
    if (path.size() > 3 && path.compare(path.size() - 3, 3, ".gz") == 0) gzip_ = std::make_unique<Gzip>(*out_);
    write("{\"displayTimeUnit\":\"ns\",\"traceEvents\":[\n");
}

void TraceWriter::write(std::string_view text) {
    if (gzip_) gzip_->write(text);
    else out_->write(text);
}

// An exception on its way out (a deadlock) still leaves a loadable trace of
// what ran; a failure to write it then is dropped, not thrown from here.
TraceWriter::~TraceWriter() {
    try {
        close();
    } catch (const std::exception&) {
    }
}

void TraceWriter::begin_event() {
    if (events_++ > 0) write(",\n");
}

void TraceWriter::process(int pid, std::string_view name, int sort_index) {
    if (!out_) return;
    begin_event();
    put(R"({{"ph":"M","pid":{},"tid":0,"name":"process_name","args":{{"name":"{}"}}}})", pid, json_escape(name));
    begin_event();
    put(R"({{"ph":"M","pid":{},"tid":0,"name":"process_sort_index","args":{{"sort_index":{}}}}})", pid, sort_index);
}

void TraceWriter::set_filter(TraceFilter f) {
    filter_ = std::move(f);
    filtering_ = filter_.active();
}

namespace {
std::uint64_t track_key(int pid, int tid) {
    return static_cast<std::uint64_t>(static_cast<std::uint32_t>(pid)) << 32 | static_cast<std::uint32_t>(tid);
}
}  // namespace

TraceWriter::Track TraceWriter::track(int pid, int tid) const {
    const auto it = tracks_.find(track_key(pid, tid));
    return it == tracks_.end() ? Track{} : it->second;
}

bool TraceWriter::keeps(int pid, int tid, std::string_view op, std::uint64_t start_ps, std::uint64_t end_ps) const {
    if (!filtering_) return true;
    const Track t = track(pid, tid);
    return t.kept && (!t.core || op.empty() || filter_.keeps_op(op)) && filter_.in_window(start_ps, end_ps);
}

void TraceWriter::thread(int pid, int tid, std::string_view name, int sort_index) {
    if (!out_) return;
    if (filtering_) {
        Track t;
        const std::string core = TraceFilter::core_of_track(name);
        t.core = !core.empty();
        t.kept = !t.core || filter_.keeps_core(core);
        tracks_[track_key(pid, tid)] = t;
        if (!t.kept) return;
    }
    begin_event();
    put(R"({{"ph":"M","pid":{},"tid":{},"name":"thread_name","args":{{"name":"{}"}}}})", pid, tid, json_escape(name));
    begin_event();
    put(R"({{"ph":"M","pid":{},"tid":{},"name":"thread_sort_index","args":{{"sort_index":{}}}}})", pid, tid, sort_index);
}

void TraceWriter::complete(int pid, int tid, std::string_view name, std::string_view cat, std::uint64_t ts_ps,
                           std::uint64_t dur_ps, std::string_view args, std::string_view op) {
    if (!out_) return;
    const std::uint64_t start = to_ns(ts_ps), end = to_ns(ts_ps + dur_ps);
    // Shorter than the trace's resolution: its time is in the statistics.
    // (A zero-length slice beside a namesake also trips speedscope's
    // matching of ends.)
    if (end == start) return;
    if (filtering_) {
        const Track t = track(pid, tid);
        if (!keeps(pid, tid, t.core ? (op.empty() ? name : op) : std::string_view(), ts_ps, ts_ps + dur_ps)) return;
        // Selected: with an op or core filter, a slice on a core's track.
        if (t.core || (filter_.ops.empty() && filter_.cores.empty())) ++slices_kept_;
    }
    begin_event();
    put(R"({{"ph":"X","pid":{},"tid":{},"name":"{}","cat":"{}","ts":{},"dur":{},"args":{{{}}}}})", pid, tid,
               json_escape(name), cat, us_at(start), us_between(start, end), args);
}

void TraceWriter::flow(std::uint64_t id, const SliceAt& from, const SliceAt& to, std::string_view name,
                       std::string_view cat) {
    if (!out_) return;
    if (to_ns(from.start_ps) == to_ns(from.end_ps) || to_ns(to.start_ps) == to_ns(to.end_ps)) return;  // not written
    if (!keeps(from.pid, from.tid, from.op, from.start_ps, from.end_ps) || !keeps(to.pid, to.tid, to.op, to.start_ps, to.end_ps))
        return;
    begin_event();
    put(R"({{"ph":"s","id":{},"pid":{},"tid":{},"name":"{}","cat":"{}","ts":{}}})", id, from.pid, from.tid, name, cat,
        us_at(inside_from(from.end_ps)));
    begin_event();
    put(R"({{"ph":"f","bp":"e","id":{},"pid":{},"tid":{},"name":"{}","cat":"{}","ts":{}}})", id, to.pid, to.tid, name,
        cat, us_at(inside_to(to.start_ps, to.end_ps)));
}

void TraceWriter::counter(int pid, std::string_view name, std::uint64_t ts_ps, double value) {
    if (!out_) return;
    if (filtering_ && !filter_.cores.empty()) {  // a core's own counter ("cube3 L1 in use (KB)") goes with its tracks
        const std::string core = TraceFilter::core_of_track(name.substr(0, name.find(' ')));
        if (!core.empty() && !filter_.keeps_core(core)) return;
    }
    if (filtering_ && ts_ps < filter_.from_ps) {
        counter_before_[{pid, std::string(name)}] = value;  // counters are written in time order
        return;
    }
    if (filtering_ && ts_ps > filter_.to_ps) return;
    begin_event();
    put(R"({{"ph":"C","pid":{},"tid":0,"name":"{}","ts":{},"args":{{"value":{}}}}})", pid, json_escape(name),
               us(ts_ps), value);
}

void TraceWriter::instant(int pid, int tid, std::string_view name, std::uint64_t ts_ps, std::string_view args) {
    if (!out_) return;
    if (!keeps(pid, tid, {}, ts_ps, ts_ps)) return;
    begin_event();
    put(R"({{"ph":"i","s":"t","pid":{},"tid":{},"name":"{}","ts":{},"args":{{{}}}}})", pid, tid,
               json_escape(name), us(ts_ps), args);
}

void TraceWriter::close(std::string_view other_data_json) {
    if (!out_) return;
    if (filtering_) {
        for (const auto& [key, value] : counter_before_) {
            begin_event();
            put(R"({{"ph":"C","pid":{},"tid":0,"name":"{}","ts":{},"args":{{"value":{}}}}})", key.first,
                json_escape(key.second), us(filter_.from_ps), value);
        }
        counter_before_.clear();
        if (slices_kept_ == 0) {
            // Nothing to show: no file, and none left from an earlier run
            // that a viewer would take for this one.
            selected_nothing_ = true;
            gzip_.reset();
            const std::unique_ptr<OutputFile> f = std::move(out_);
            f->discard();
            std::error_code ec;
            if (std::filesystem::is_regular_file(f->path(), ec)) std::filesystem::remove(f->path(), ec);
            return;
        }
    }
    std::string tail = "\n]";
    if (!other_data_json.empty()) tail += fmt::format(",\"otherData\":{}", other_data_json);
    tail += "}\n";
    if (gzip_) gzip_->write(tail, true);
    else out_->write(tail);
    gzip_.reset();
    const std::unique_ptr<OutputFile> f = std::move(out_);
    f->commit();
}

}  // namespace npusim
