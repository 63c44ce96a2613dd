// Shared helpers of the fuzz targets (tests/fuzz/fuzz_*.cpp).
//
// Each target is one file that defines its entry point with
// NPUSIM_FUZZ_TARGET(name). Built with -DNPUSIM_FUZZ=ON (clang) each file is
// its own libFuzzer binary `fuzz_<name>`; in every normal and sanitizer build
// all targets are linked into `npusim_fuzz_replay`, which ctest runs over the
// seed corpus and the regression inputs (tests/fuzz/{corpus,regressions}/<name>/),
// so a fixed crash stays fixed without clang.
//
// The contract a target checks: bad input is an npusim::InputError (what the
// CLI turns into exit 2). Any other exception escapes and is reported as a
// crash; so are sanitizer reports, leaks, timeouts and huge allocations.
#pragma once
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <string_view>
#include <vector>

namespace npusim::fuzz {

using TargetFn = int (*)(const std::uint8_t*, std::size_t);

// Registry of targets for the replay driver.
struct TargetEntry {
    const char* name;
    TargetFn fn;
};
std::vector<TargetEntry>& targets();
inline bool register_target(const char* name, TargetFn fn) {
    targets().push_back({name, fn});
    return true;
}

// A per-process scratch folder for targets whose inputs are files (chip files,
// workload files, studies, goldens); on tmpfs when the machine has one.
const std::string& scratch_dir();
// Writes `text` to scratch_dir()/name and returns the path.
std::string write_scratch(const std::string& name, std::string_view text);
// Path of a file of the source tree (bundled chips, streams, models).
std::string source_file(const std::string& relative);

// Splits fuzz data into parts at a separator line ("\n----\n"), so one input
// can carry several files or arguments; at most `max_parts`.
std::vector<std::string> split_parts(std::string_view data, std::size_t max_parts);

// An invariant the input broke: a silently wrong result, not bad input.
[[noreturn]] inline void invariant_failed(const char* what, const std::string& detail) {
    std::fprintf(stderr, "npusim fuzz: invariant violated: %s\n%s\n", what, detail.c_str());
    std::abort();
}

}  // namespace npusim::fuzz

#define NPUSIM_FUZZ_CHECK(cond, detail)                                   \
    do {                                                                  \
        if (!(cond)) ::npusim::fuzz::invariant_failed(#cond, (detail));   \
    } while (0)

#ifdef NPUSIM_FUZZ_REPLAY
#define NPUSIM_FUZZ_TARGET(name)                                                                        \
    static int npusim_fuzz_##name(const std::uint8_t* data, std::size_t size);                          \
    static const bool npusim_fuzz_registered_##name =                                                   \
        ::npusim::fuzz::register_target(#name, npusim_fuzz_##name);                                     \
    static int npusim_fuzz_##name(const std::uint8_t* data, std::size_t size)
#else
#define NPUSIM_FUZZ_TARGET(name) \
    extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size)
#endif
