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

// Runs every candidate at once (a die run is single-threaded) and waits for
// them all; their cycles in the same order.
std::vector<double> run_on_die(const std::string& self, const fs::path& dir, const std::string& chip,
                               const std::vector<std::string>& texts, int& n) {
    struct Child {
        pid_t pid;
        std::string stats, log;
    };
    std::vector<Child> children;
    for (const std::string& text : texts) {
        const int i = n++;
        const std::string stream = (dir / fmt::format("plan{}.jsonl", i)).string();
        std::ofstream(stream) << text;
        Child c{0, (dir / fmt::format("plan{}.stats.json", i)).string(), (dir / fmt::format("plan{}.log", i)).string()};
        c.pid =
            study::spawn_process({self, "run", "-q", "--chip", chip, "--workload", stream, "--stats", c.stats}, c.log);
        children.push_back(std::move(c));
    }
    std::vector<double> cycles;
    std::string failed;
    for (const Child& c : children) {
        const int rc = study::wait_process(c.pid);
        if (rc != 0 && failed.empty()) {
            std::ifstream in(c.log);
            std::string first;
            std::getline(in, first);
            failed = fmt::format("exit {}: {}", rc, first);
        }
        cycles.push_back(rc == 0 ? nlohmann::json::parse(std::ifstream(c.stats)).at("total_cycles").get<double>() : 0);
    }
    if (!failed.empty())
        throw InputError("NPUSIM_PLAN_ON_DIE: a candidate plan did not run on the die model (" + failed + ")");
    return cycles;
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
        return run_on_die(self, scratch.dir, chip_file, streams, n);
    });
}

}  // namespace npusim::cli
