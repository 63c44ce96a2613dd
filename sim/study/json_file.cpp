#include "study/json_file.hpp"

#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <sstream>

#include "common/errors.hpp"
#include "common/input_limits.hpp"

namespace npusim::study {

namespace fs = std::filesystem;

namespace {

// nlohmann's message without its "[json.exception.parse_error.101] parse
// error at line 1, column 2: " prefix.
std::string short_reason(std::string what) {
    const auto colon = what.find(": ");
    if (what.rfind("[json.exception", 0) == 0 && colon != std::string::npos) what = what.substr(colon + 2);
    return what;
}

}  // namespace

std::string json_kind(const ojson& v) {
    switch (v.type()) {
        case ojson::value_t::null: return "null";
        case ojson::value_t::boolean: return "a boolean";
        case ojson::value_t::string: return "a string";
        case ojson::value_t::array: return "a list";
        case ojson::value_t::object: return "an object";
        case ojson::value_t::number_integer:
        case ojson::value_t::number_unsigned:
        case ojson::value_t::number_float: return "a number";
        default: return "a value";
    }
}

ojson read_json_object_file(const std::string& file, const std::string& what) {
    std::error_code ec;
    if (fs::is_directory(file, ec)) throw InputError(file + ": cannot open " + what + " (it is a directory)");
    std::ifstream in(file, std::ios::binary);
    if (!in) throw InputError(file + ": cannot open " + what);
    std::string text;  // bounded, so that /dev/zero cannot fill the memory
    if (!read_bounded(in, text, std::size_t(64) << 20))
        throw InputError(file + ": larger than 64 MiB, which no " + what + " is");
    if (text.find_first_not_of(" \t\r\n") == std::string::npos)
        throw InputError(file + ": empty " + what + " (expected a JSON object)");
    if (const auto deep = json_too_deep_at(text); deep != std::string::npos)
        throw InputError(file + ":" + line_col(text, deep) + ": invalid JSON: nested deeper than " +
                         std::to_string(kMaxJsonDepth) + " levels");
    ojson doc;
    try {
        doc = ojson::parse(text, reject_duplicate_keys<ojson>());
    } catch (const DuplicateJsonKey& e) {
        throw InputError(file + ": duplicate key '" + e.key + "' " + (e.path.empty() ? "at the top level" : "in " + e.path) +
                         " (each key may appear once)");
    } catch (const ojson::parse_error& e) {
        std::size_t off = e.byte == 0 ? 0 : e.byte - 1;
        if (off > text.size()) off = text.size();
        throw InputError(file + ":" + line_col(text, off) + ": invalid JSON: " + short_reason(e.what()));
    } catch (const ojson::exception& e) {
        throw InputError(file + ": invalid JSON: " + short_reason(e.what()));
    }
    if (!doc.is_object())
        throw InputError(file + ": expected a JSON object at the top level of the " + what + ", got " + json_kind(doc));
    return doc;
}

void write_file_atomically(const std::string& file, const std::string& text) {
    const fs::path target(file);
    const fs::path tmp = target.string() + ".tmp." + std::to_string(::getpid());
    {
        std::ofstream out(tmp, std::ios::binary | std::ios::trunc);
        if (!out) throw InputError(file + ": cannot write (cannot create " + tmp.string() + ")");
        out << text;
        out.flush();
        if (!out) throw InputError(file + ": cannot write");
    }
    std::error_code ec;
    fs::rename(tmp, target, ec);
    if (ec) {
        fs::remove(tmp, ec);
        throw InputError(file + ": cannot write (rename failed)");
    }
}

}  // namespace npusim::study
