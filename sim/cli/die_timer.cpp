#include "cli/die_timer.hpp"

#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "common/errors.hpp"
#include "compiler/plan_search.hpp"
#include "study/child_process.hpp"

namespace npusim::cli {

namespace {
namespace fs = std::filesystem;

// One directory per process for the chip and the candidates, removed at exit.
struct Scratch {
    fs::path dir;
    Scratch() : dir(fs::temp_directory_path() / fmt::format("npusim-plan-on-die-{}", ::getpid())) {
        fs::create_directories(dir);
    }
    ~Scratch() {
        std::error_code ec;
        fs::remove_all(dir, ec);
    }
};

double run_on_die(const std::string& self, const fs::path& dir, const std::string& chip, const std::string& text,
                  int n) {
    const std::string stream = (dir / fmt::format("plan{}.jsonl", n)).string();
    const std::string stats = (dir / fmt::format("plan{}.stats.json", n)).string();
    std::ofstream(stream) << text;
    const std::string log = (dir / fmt::format("plan{}.log", n)).string();
    const int rc = study::run_process({self, "run", "-q", "--chip", chip, "--workload", stream, "--stats", stats}, log);
    if (rc != 0) {
        std::ifstream in(log);
        std::string first;
        std::getline(in, first);
        throw InputError(
            fmt::format("NPUSIM_PLAN_ON_DIE: a candidate plan did not run on the die model (exit {}): {}", rc, first));
    }
    return nlohmann::json::parse(std::ifstream(stats)).at("total_cycles").get<double>();
}
}  // namespace

void use_die_timer_if_asked(const nlohmann::json& chip) {
    const char* on = std::getenv("NPUSIM_PLAN_ON_DIE");
    if (!on || std::string(on) != "1") return;
    static Scratch scratch;
    const std::string chip_file = (scratch.dir / "chip.json").string();
    std::ofstream(chip_file) << chip.dump();
    const std::string self = study::self_executable();
    compiler::set_die_timer([self, chip_file](const std::vector<std::string>& streams) {
        static int n = 0;
        std::vector<double> cycles;
        for (const std::string& text : streams) cycles.push_back(run_on_die(self, scratch.dir, chip_file, text, n++));
        return cycles;
    });
}

}  // namespace npusim::cli
