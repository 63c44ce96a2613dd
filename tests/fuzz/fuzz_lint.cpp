// npusim lint's analysis (sim/tasks/lint.cpp) on any stream that parses:
// the analysis and both reports must not crash, hang or disagree with
// themselves (the JSON report is valid JSON).
#include <sstream>

#include <nlohmann/json.hpp>

#include "common/errors.hpp"
#include "fuzzing.hpp"
#include "tasks/lint.hpp"
#include "tasks/stream_reader.hpp"

using namespace npusim;

NPUSIM_FUZZ_TARGET(lint) {
    std::istringstream in(std::string(reinterpret_cast<const char*>(data), size));
    TaskStream ts;
    try {
        ts = parse_task_stream(in, "stream.jsonl");
    } catch (const InputError&) {
        return 0;
    }
    try {
        const LintReport r = lint_task_stream(ts);
        (void)lint_report_text(ts, r);
        const std::string j = lint_report_json(ts, r);
        NPUSIM_FUZZ_CHECK(nlohmann::json::accept(j), j);
    } catch (const InputError&) {
    }
    return 0;
}
