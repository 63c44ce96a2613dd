// What `npusim check` found for each golden, and the two machine-readable
// forms CI takes as they are: JUnit XML (one testcase per golden, one
// failure per metric out of tolerance, an error for a broken golden) and
// JSON (docs/studies.md "Goldens").
#pragma once
#include <string>
#include <vector>

#include "study/golden.hpp"

namespace npusim::cli {

struct GoldenOutcome {
    enum class Status { pass, fail, error };  // error: the golden itself is broken (exit 2)
    std::string name, file, run;              // run: "WORKLOAD on CHIP[, set ...]"
    Status status = Status::pass;
    std::string message;                      // why a run failed or the golden is broken ("" otherwise)
    std::vector<study::Comparison> metrics;
};

const char* to_string(GoldenOutcome::Status s);

// `sets` are the --set overrides applied to every run.
void write_check_junit(const std::string& file, const std::vector<GoldenOutcome>& outcomes,
                       const std::vector<std::string>& sets);
void write_check_json(const std::string& file, const std::string& target, const std::vector<GoldenOutcome>& outcomes,
                      const std::vector<std::string>& sets);

}  // namespace npusim::cli
