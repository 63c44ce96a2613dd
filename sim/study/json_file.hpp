// Reading the small JSON files of studies and goldens: key order kept (axes
// and table rows appear as written), errors name the file and LINE:COL.
#pragma once
#include <string>

#include <nlohmann/json.hpp>

namespace npusim::study {

using ojson = nlohmann::ordered_json;

// Throws InputError "FILE:LINE:COL: invalid JSON: ..." or "FILE: cannot open ...".
// The top level must be an object (`what` names the file kind in messages).
ojson read_json_object_file(const std::string& file, const std::string& what);

// Writes `text` to `file` through a temporary file and a rename, so a reader
// (or a killed writer) never sees half a file. Throws InputError on failure.
void write_file_atomically(const std::string& file, const std::string& text);

// "a number", "a string", "an object", ... for error messages.
std::string json_kind(const ojson& v);

}  // namespace npusim::study
