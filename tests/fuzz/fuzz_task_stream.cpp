// Task streams (docs/design.md §4.3): parse_task_stream on arbitrary text.
// Invariant: a stream that parses, written with write_task_stream, parses
// again to a stream that writes the very same text (nothing is lost or
// changed on the way, so `compile --emit-tasks` + `run` equals compiling on
// the fly).
#include <sstream>

#include "common/errors.hpp"
#include "fuzzing.hpp"
#include "tasks/stream_reader.hpp"

using namespace npusim;

NPUSIM_FUZZ_TARGET(task_stream) {
    std::istringstream in(std::string(reinterpret_cast<const char*>(data), size));
    TaskStream ts;
    try {
        ts = parse_task_stream(in, "stream.jsonl");
    } catch (const InputError& e) {
        const std::string msg = e.what();
        NPUSIM_FUZZ_CHECK(msg.rfind("stream.jsonl", 0) == 0, "message does not start with the file: " + msg);
        return 0;
    }
    std::stringstream first;
    write_task_stream(ts, first);
    const std::string text = first.str();
    std::istringstream back(text);
    TaskStream again;
    try {
        again = parse_task_stream(back, "written.jsonl");
    } catch (const InputError& e) {
        fuzz::invariant_failed("a written stream reads back", std::string(e.what()) + "\n" + text);
    }
    std::stringstream second;
    write_task_stream(again, second);
    NPUSIM_FUZZ_CHECK(second.str() == text, "first:\n" + text + "again:\n" + second.str());
    NPUSIM_FUZZ_CHECK(again.tasks.size() == ts.tasks.size(), text);
    return 0;
}
