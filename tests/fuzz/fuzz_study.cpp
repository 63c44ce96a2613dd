// Study files (`npusim sweep`, sim/study/study.cpp): load_study, which also
// loads the base run, then the expansion into points. Beside the study in the
// scratch folder lie chip.json (ax300), stream.jsonl and graph.json
// (convbnrelu), so seeds can name a valid base run.
#include <fstream>
#include <set>
#include <sstream>

#include "common/errors.hpp"
#include "fuzzing.hpp"
#include "study/points.hpp"
#include "study/study.hpp"

using namespace npusim;

namespace {
void copy_beside(const std::string& from, const std::string& name) {
    std::ifstream in(fuzz::source_file(from), std::ios::binary);
    std::stringstream ss;
    ss << in.rdbuf();
    fuzz::write_scratch(name, ss.str());
}
}  // namespace

NPUSIM_FUZZ_TARGET(study) {
    static const bool ready = [] {
        copy_beside("configs/chips/ax300.json", "chip.json");
        copy_beside("traces/convbnrelu_tile.jsonl", "stream.jsonl");
        copy_beside("models/convbnrelu.json", "graph.json");
        return true;
    }();
    (void)ready;
    const std::string file = fuzz::write_scratch("study.json", {reinterpret_cast<const char*>(data), size});
    try {
        const study::Study s = study::load_study(file);
        const auto points = study::expand_points(s);
        std::set<std::string> ids;
        for (const auto& p : points) {
            NPUSIM_FUZZ_CHECK(ids.insert(p.id).second, "two points share the id " + p.id);
            (void)p.set_args(s);
            (void)p.label();
        }
        (void)s.to_json(points.size()).dump();
    } catch (const InputError& e) {
        const std::string msg = e.what();
        NPUSIM_FUZZ_CHECK(msg.find("study.json") != std::string::npos, "message does not name the study: " + msg);
    }
    return 0;
}
