#include "study/json_file.hpp"

#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <sstream>

#include "common/errors.hpp"
#include "common/output_file.hpp"

namespace npusim::study {

namespace fs = std::filesystem;

ojson read_json_object_file(const std::string& file, const std::string& what) {
    JsonFileSpec spec;
    spec.what = what;
    return read_json_file<ojson>(file, spec);
}

void write_file_atomically(const std::string& file, const std::string& text) { write_output_file(file, text); }

std::string read_text_file(const std::string& file) {
    std::ifstream in(file, std::ios::binary);
    std::ostringstream ss;
    ss << in.rdbuf();
    return ss.str();
}

void fail_in(const std::string& file, const std::string& msg) { throw InputError(file + ": " + msg); }

}  // namespace npusim::study
