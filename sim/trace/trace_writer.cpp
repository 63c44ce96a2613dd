#include "trace/trace_writer.hpp"

#include <fmt/format.h>

#include "common/errors.hpp"
#include "common/output_file.hpp"

namespace npusim {

namespace {
// Chrome traces count in microseconds; six decimals keep picoseconds.
std::string us(std::uint64_t ps) { return fmt::format("{}.{:06}", ps / 1000000, ps % 1000000); }
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

TraceWriter::TraceWriter(const std::string& path) : out_(std::make_unique<OutputFile>(path)) {
    out_->write("{\"displayTimeUnit\":\"ns\",\"traceEvents\":[\n");
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
    if (events_++ > 0) out_->write(",\n");
}

void TraceWriter::process(int pid, std::string_view name, int sort_index) {
    if (!out_) return;
    begin_event();
    put(R"({{"ph":"M","pid":{},"tid":0,"name":"process_name","args":{{"name":"{}"}}}})", pid, json_escape(name));
    begin_event();
    put(R"({{"ph":"M","pid":{},"tid":0,"name":"process_sort_index","args":{{"sort_index":{}}}}})", pid, sort_index);
}

void TraceWriter::thread(int pid, int tid, std::string_view name, int sort_index) {
    if (!out_) return;
    begin_event();
    put(R"({{"ph":"M","pid":{},"tid":{},"name":"thread_name","args":{{"name":"{}"}}}})", pid, tid, json_escape(name));
    begin_event();
    put(R"({{"ph":"M","pid":{},"tid":{},"name":"thread_sort_index","args":{{"sort_index":{}}}}})", pid, tid, sort_index);
}

void TraceWriter::complete(int pid, int tid, std::string_view name, std::string_view cat, std::uint64_t ts_ps,
                           std::uint64_t dur_ps, std::string_view args) {
    if (!out_) return;
    begin_event();
    put(R"({{"ph":"X","pid":{},"tid":{},"name":"{}","cat":"{}","ts":{},"dur":{},"args":{{{}}}}})", pid, tid,
               json_escape(name), cat, us(ts_ps), us(dur_ps), args);
}

void TraceWriter::flow(std::uint64_t id, int pid_from, int tid_from, std::uint64_t ts_from_ps, int pid_to, int tid_to,
                       std::uint64_t ts_to_ps) {
    if (!out_) return;
    begin_event();
    put(R"({{"ph":"s","id":{},"pid":{},"tid":{},"name":"release","cat":"event","ts":{}}})", id, pid_from,
               tid_from, us(ts_from_ps));
    begin_event();
    put(R"({{"ph":"f","bp":"e","id":{},"pid":{},"tid":{},"name":"release","cat":"event","ts":{}}})", id,
               pid_to, tid_to, us(ts_to_ps));
}

void TraceWriter::counter(int pid, std::string_view name, std::uint64_t ts_ps, double value) {
    if (!out_) return;
    begin_event();
    put(R"({{"ph":"C","pid":{},"tid":0,"name":"{}","ts":{},"args":{{"value":{}}}}})", pid, json_escape(name),
               us(ts_ps), value);
}

void TraceWriter::instant(int pid, int tid, std::string_view name, std::uint64_t ts_ps, std::string_view args) {
    if (!out_) return;
    begin_event();
    put(R"({{"ph":"i","s":"t","pid":{},"tid":{},"name":"{}","ts":{},"args":{{{}}}}})", pid, tid,
               json_escape(name), us(ts_ps), args);
}

void TraceWriter::close(std::string_view other_data_json) {
    if (!out_) return;
    const std::unique_ptr<OutputFile> f = std::move(out_);
    f->write("\n]");
    if (!other_data_json.empty()) f->write(fmt::format(",\"otherData\":{}", other_data_json));
    f->write("}\n");
    f->commit();
}

}  // namespace npusim
