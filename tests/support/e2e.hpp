// Helpers for the end-to-end tests that run the npusim binary (and tools such
// as python3 tools/check_trace.py) the way a user would: a scratch directory
// per test case, running a command with stdout and stderr captured, and
// reading back the JSON the command wrote.
//
// Why one header: every test file that ran the binary used to carry its own
// copy of these helpers, and the copies drifted apart (some mapped a signal to
// an exit code and some left -1; some `write`s created parent directories and
// some did not). One copy judges every run the same way.
//
// Header-only, with inline functions, so that each test file can include it
// and the one definition stays legal across the translation units of
// npusim_tests. The names live in npusim::test; a test file says
// `using namespace npusim::test;`.
//
// There is deliberately no function called `npusim`: it would clash with the
// namespace npusim (which this header itself declares), so a bare call
// `npusim(tmp, args)` would be ambiguous. Use run_npusim.
#pragma once

#include <catch2/catch.hpp>

#include "support/build_paths.hpp"

#include <sys/wait.h>

#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <random>
#include <sstream>
#include <string>
#include <system_error>
#include <vector>

#include <nlohmann/json.hpp>

namespace npusim::test {

// A fresh directory per test case, removed with everything in it afterwards.
// Not copyable: a copy would remove the directory when it went away.
struct TempDir {
    std::filesystem::path dir;

    TempDir() {
        std::random_device rd;
        dir = std::filesystem::temp_directory_path() /
              ("npusim_test_" + std::to_string(rd()) + std::to_string(rd()));
        std::filesystem::create_directories(dir);
    }
    ~TempDir() {
        std::error_code ec;
        std::filesystem::remove_all(dir, ec);
    }
    TempDir(const TempDir&) = delete;
    TempDir& operator=(const TempDir&) = delete;

    // The path of `name` inside the directory (nothing is created).
    std::string path(const std::string& name) const { return (dir / name).string(); }

    // Writes `text` to `name` (which may hold subdirectories, created as
    // needed) and returns its path.
    std::string write(const std::string& name, const std::string& text) const {
        const std::filesystem::path p = dir / name;
        std::filesystem::create_directories(p.parent_path());
        std::ofstream(p, std::ios::binary) << text;
        return p.string();
    }
};

// `s` as one word for /bin/sh: single-quoted, embedded quotes escaped.
inline std::string quote(const std::string& s) {
    std::string out = "'";
    for (char c : s) {
        if (c == '\'') out += "'\\''";
        else out += c;
    }
    return out + "'";
}

// The whole content of `file`; empty if it cannot be read.
inline std::string slurp(const std::string& file) {
    std::ifstream in(file, std::ios::binary);
    std::stringstream ss;
    ss << in.rdbuf();
    return ss.str();
}

// How a command ended: its exit code (128 + N if killed by signal N, -1 if it
// could not be started), what it printed, and how long it took.
struct Result {
    int code = -1;
    std::string out, err;
    double seconds = 0;
};

// Runs `program args...` through /bin/sh with stdin from /dev/null and stdout
// and stderr captured into files of `tmp`. `program` is put into the command
// as given (quote it if it is a path); every argument is quoted.
inline Result run_program(const TempDir& tmp, const std::string& program, const std::vector<std::string>& args) {
    static int n = 0;  // distinct capture files for every run in a process
    const std::string out = tmp.path("stdout" + std::to_string(n)), err = tmp.path("stderr" + std::to_string(n));
    ++n;
    std::string cmd = program;
    for (const auto& a : args) cmd += " " + quote(a);
    cmd += " >" + quote(out) + " 2>" + quote(err) + " </dev/null";
    const auto start = std::chrono::steady_clock::now();
    const int status = std::system(cmd.c_str());
    Result r;
    r.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    if (status != -1 && WIFEXITED(status)) r.code = WEXITSTATUS(status);
    else if (status != -1 && WIFSIGNALED(status)) r.code = 128 + WTERMSIG(status);
    r.out = slurp(out);
    r.err = slurp(err);
    return r;
}

// Runs the npusim binary under test (NPUSIM_BIN, set by CMakeLists.txt).
inline Result run_npusim(const TempDir& tmp, const std::vector<std::string>& args) {
    return run_program(tmp, quote(NPUSIM_BIN), args);
}

// One JSON value per non-empty line (results.jsonl, responses.jsonl).
inline std::vector<nlohmann::json> read_jsonl(const std::string& file) {
    std::vector<nlohmann::json> rows;
    std::ifstream in(file, std::ios::binary);
    for (std::string line; std::getline(in, line);)
        if (!line.empty()) rows.push_back(nlohmann::json::parse(line));
    return rows;
}

// Parses a JSON file; fails the test if the file cannot be opened.
inline nlohmann::json read_json(const std::string& file) {
    std::ifstream in(file, std::ios::binary);
    REQUIRE(in);
    return nlohmann::json::parse(in);
}

}  // namespace npusim::test

// Reports what a command said when an expectation after it fails.
#define SHOW(r) INFO("exit " << (r).code << "\nstdout:\n" << (r).out << "\nstderr:\n" << (r).err)

namespace npusim::test {

// `npusim run --chip CHIP --workload WORKLOAD [--set S]... --stats F -q`,
// which must succeed; returns the statistics it wrote (a file per call).
inline nlohmann::json run_for_stats(const TempDir& tmp, const std::string& chip, const std::string& workload,
                                    const std::vector<std::string>& sets = {}) {
    static int count = 0;
    const std::string stats = tmp.path("stats" + std::to_string(count++) + ".json");
    std::vector<std::string> args = {"run", "--chip", chip, "--workload", workload};
    for (const auto& s : sets) args.insert(args.end(), {"--set", s});
    args.insert(args.end(), {"--stats", stats, "-q"});
    const Result r = run_npusim(tmp, args);
    SHOW(r);
    REQUIRE(r.code == 0);
    return read_json(stats);
}

}  // namespace npusim::test
