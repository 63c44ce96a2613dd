#include "study/json_file.hpp"

#include <unistd.h>

#include <filesystem>
#include <fstream>

#include "common/errors.hpp"

namespace npusim::study {

namespace fs = std::filesystem;

ojson read_json_object_file(const std::string& file, const std::string& what) {
    JsonFileSpec spec;
    spec.what = what;
    return read_json_file<ojson>(file, spec);
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
