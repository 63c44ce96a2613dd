// The JSON files of studies and goldens: key order kept (axes and table rows
// appear as written); read with common/json_file.hpp (errors FILE:LINE:COL).
#pragma once
#include <string>

#include <nlohmann/json.hpp>

#include "common/json_file.hpp"

namespace npusim::study {

using ojson = nlohmann::ordered_json;

// read_json_file<ojson> with `what` naming the file kind in messages; the
// top level must be an object.
ojson read_json_object_file(const std::string& file, const std::string& what);

// Writes `text` to `file` through a temporary file and a rename, so a reader
// (or a killed writer) never sees half a file. Throws InputError on failure.
void write_file_atomically(const std::string& file, const std::string& text);

// The whole file as text ("" when it cannot be read).
std::string read_text_file(const std::string& file);

// "FILE: MSG" as an InputError (exit 2).
[[noreturn]] void fail_in(const std::string& file, const std::string& msg);

}  // namespace npusim::study
