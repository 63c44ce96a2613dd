// Catch2 v2 command lines for one test case: what the test binary needs to
// re-run itself once per selected case (tests/one_process_per_case.cpp).
// Header-only so the tests can check it; nothing here runs a test.
#pragma once

#include <optional>
#include <set>
#include <string>
#include <vector>

namespace npusim::test {

// A test spec that selects one test case by its exact name, or nullopt where
// no spec can. Quoted, because inside "..." Catch's spec parser takes `[`,
// `]`, `~` and spaces literally; `\`, `"` and `,` still need a backslash. No
// spec selects exactly a name that starts or ends in `*` (always a wildcard)
// or starts with "exclude:" (always an exclusion). Names match ignoring case,
// so a caller that needs one match checks the spec against the registry.
inline std::optional<std::string> exact_test_spec(const std::string& name) {
    if (name.empty() || name.front() == '*' || name.back() == '*' || name.rfind("exclude:", 0) == 0) return std::nullopt;
    std::string spec = "\"";
    for (char c : name) {
        if (c == '\\' || c == '"' || c == ',') spec += '\\';
        spec += c;
    }
    return spec + "\"";
}

// The options of Catch2 v2's command line (2.13, catch_commandline.cpp) that
// take a value; the rest are flags. Its parser is not in the header, so the
// list is written out; a test compares it with `npusim_tests -h`.
inline const std::set<std::string>& catch_options_with_value() {
    static const std::set<std::string> names = {
        "-o", "--out", "-r", "--reporter", "-n", "--name", "-x", "--abortx", "-w", "--warn",
        "-d", "--durations", "-D", "--min-duration", "-f", "--input-file", "-c", "--section",
        "-v", "--verbosity", "--order", "--rng-seed", "--use-colour", "--wait-for-keypress",
        "--benchmark-samples", "--benchmark-resamples", "--benchmark-confidence-interval",
        "--benchmark-warmup-time"};
    return names;
}

// `args` (argv, program first) without what selects test cases (positional
// specs, -f FILE) and --wait-for-keypress, for a child to append one exact
// spec to; nullopt where a child would not run as `args` asked: -o (every
// child would write the same file) or an option this cannot split. Tokens
// split as Catch's parser splits them: "--opt=v", "-o:v" carry their value;
// "-sa" is -s -a, and only its last letter may take the next word.
inline std::optional<std::vector<std::string>> options_for_children(const std::vector<std::string>& args) {
    const auto& with_value = catch_options_with_value();
    const std::set<std::string> dropped = {"-f", "--input-file", "--wait-for-keypress"};
    const std::set<std::string> refused = {"-o", "--out"};
    if (args.empty()) return std::nullopt;
    std::vector<std::string> kept{args[0]};
    for (std::size_t i = 1; i < args.size(); ++i) {
        const std::string& a = args[i];
        if (a.empty() || a[0] != '-') continue;  // a test spec (Catch skips empty words)
        std::vector<std::string> opts;
        bool value_follows = false;
        const auto delimiter = a.find_first_of(" :=");
        if (delimiter != std::string::npos) {
            opts.push_back(a.substr(0, delimiter));
        } else if (a.size() > 2 && a[1] != '-') {
            for (std::size_t k = 1; k < a.size(); ++k) opts.push_back(std::string("-") + a[k]);
            for (std::size_t k = 0; k + 1 < opts.size(); ++k)
                if (with_value.count(opts[k])) return std::nullopt;  // Catch would reject it anyway
            value_follows = with_value.count(opts.back()) > 0;
        } else {
            opts.push_back(a);
            value_follows = with_value.count(a) > 0;
        }
        bool drop = false;
        for (const auto& o : opts) {
            if (refused.count(o)) return std::nullopt;
            if (dropped.count(o)) {
                if (opts.size() > 1) return std::nullopt;
                drop = true;
            }
        }
        if (!drop) kept.push_back(a);
        if (value_follows) {
            if (++i >= args.size()) return std::nullopt;  // Catch reports the missing value
            if (!drop) kept.push_back(args[i]);
        }
    }
    return kept;
}

}  // namespace npusim::test
