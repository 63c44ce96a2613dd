// The one JSON reader (sim/common/json_file.cpp) on its own: any bytes give
// a document or an InputError that names the file, on one line, and a
// syntax or duplicate-key error gives FILE:LINE:COL. A document read is
// within the depth limit and reads back the same from its own dump.
#include <cstdio>

#include <nlohmann/json.hpp>

#include "common/errors.hpp"
#include "common/json_file.hpp"
#include "fuzzing.hpp"

using namespace npusim;

NPUSIM_FUZZ_TARGET(json_file) {
    const std::string file = fuzz::write_scratch("doc.json", {reinterpret_cast<const char*>(data), size});
    JsonFileSpec spec;
    spec.object = false;
    try {
        const nlohmann::ordered_json doc = read_json_file<nlohmann::ordered_json>(file, spec);
        const std::string text = doc.dump();
        NPUSIM_FUZZ_CHECK(parse_json_text<nlohmann::ordered_json>(text, file, spec) == doc, text);
    } catch (const InputError& e) {
        const std::string msg = e.what();
        NPUSIM_FUZZ_CHECK(msg.compare(0, file.size(), file) == 0, "message does not start with the file: " + msg);
        NPUSIM_FUZZ_CHECK(msg.find('\n') == std::string::npos, "message of more than one line: " + msg);
        if (msg.find("invalid JSON") != std::string::npos || msg.find("duplicate key") != std::string::npos) {
            const std::string rest = msg.substr(file.size());
            std::size_t line = 0, col = 0;
            char c = 0;
            NPUSIM_FUZZ_CHECK(std::sscanf(rest.c_str(), ":%zu:%zu%c", &line, &col, &c) == 3 && c == ':' && line >= 1 &&
                                  col >= 1,
                              "no FILE:LINE:COL: " + msg);
        }
    }
    return 0;
}
