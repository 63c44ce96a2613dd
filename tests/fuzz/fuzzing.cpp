#include "fuzzing.hpp"

#include <unistd.h>

#include <filesystem>
#include <fstream>

namespace npusim::fuzz {

namespace fs = std::filesystem;

std::vector<TargetEntry>& targets() {
    static std::vector<TargetEntry> t;
    return t;
}

namespace {

struct Scratch {
    std::string dir;
    Scratch() {
        std::error_code ec;
        fs::path base = fs::is_directory("/dev/shm", ec) ? fs::path("/dev/shm") : fs::temp_directory_path();
        std::string tmpl = (base / "npusim_fuzz_XXXXXX").string();
        if (!mkdtemp(tmpl.data())) {
            tmpl = (fs::temp_directory_path() / "npusim_fuzz_XXXXXX").string();
            if (!mkdtemp(tmpl.data())) std::abort();
        }
        dir = tmpl;
    }
    ~Scratch() {
        std::error_code ec;
        fs::remove_all(dir, ec);
    }
};

}  // namespace

const std::string& scratch_dir() {
    static const Scratch s;
    return s.dir;
}

std::string write_scratch(const std::string& name, std::string_view text) {
    const std::string path = scratch_dir() + "/" + name;
    std::ofstream out(path, std::ios::binary | std::ios::trunc);
    out.write(text.data(), static_cast<std::streamsize>(text.size()));
    if (!out) std::abort();
    return path;
}

std::string source_file(const std::string& relative) { return std::string(NPUSIM_SOURCE_DIR) + "/" + relative; }

std::vector<std::string> split_parts(std::string_view data, std::size_t max_parts) {
    static constexpr std::string_view kSep = "\n----\n";
    std::vector<std::string> parts;
    while (parts.size() + 1 < max_parts) {
        const auto at = data.find(kSep);
        if (at == std::string_view::npos) break;
        parts.emplace_back(data.substr(0, at));
        data.remove_prefix(at + kSep.size());
    }
    parts.emplace_back(data);
    return parts;
}

}  // namespace npusim::fuzz
