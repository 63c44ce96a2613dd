// npusim_fuzz_replay TARGET PATH...: runs the fuzz target TARGET once on each
// file (or each file of each folder) given, as libFuzzer would, without
// libFuzzer. ctest runs it over tests/fuzz/corpus/TARGET and
// tests/fuzz/regressions/TARGET in every build, so the sanitizer build checks
// every input that ever crashed. `--list` prints the target names.
#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <sstream>
#include <string>
#include <vector>

#include "fuzzing.hpp"

namespace fs = std::filesystem;

extern "C" int sc_main(int, char*[]) { return 0; }  // libsystemc wants the symbol

int main(int argc, char** argv) {
    auto& all = npusim::fuzz::targets();
    std::sort(all.begin(), all.end(), [](const auto& a, const auto& b) { return std::string(a.name) < b.name; });
    if (argc >= 2 && std::string(argv[1]) == "--list") {
        for (const auto& t : all) std::cout << t.name << "\n";
        return 0;
    }
    if (argc < 2) {
        std::cerr << "usage: npusim_fuzz_replay TARGET FILE_OR_DIR... | --list\n";
        return 2;
    }
    const std::string name = argv[1];
    const auto it = std::find_if(all.begin(), all.end(), [&](const auto& t) { return name == t.name; });
    if (it == all.end()) {
        std::cerr << "npusim_fuzz_replay: unknown target '" << name << "'\n";
        return 2;
    }
    std::vector<fs::path> files;
    for (int i = 2; i < argc; ++i) {
        const fs::path p = argv[i];
        std::error_code ec;
        if (fs::is_directory(p, ec)) {
            for (const auto& e : fs::directory_iterator(p))
                if (e.is_regular_file() && e.path().filename().string()[0] != '.') files.push_back(e.path());
        } else if (fs::exists(p, ec)) {
            files.push_back(p);
        }
    }
    std::sort(files.begin(), files.end());
    for (const auto& f : files) {
        std::ifstream in(f, std::ios::binary);
        std::stringstream ss;
        ss << in.rdbuf();
        const std::string data = ss.str();
        std::cerr << "replay " << name << ": " << f.string() << " (" << data.size() << " bytes)\n";
        it->fn(reinterpret_cast<const std::uint8_t*>(data.data()), data.size());
    }
    std::cout << "replayed " << files.size() << " inputs on " << name << ", all clean\n";
    return 0;
}
