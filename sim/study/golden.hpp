// Goldens for cycle-count regression (`npusim check`, docs/design.md §4.1): a golden
// names one run (chip, workload, overrides) and the metrics it must give.
//
//   {"chip": "../../configs/chips/ax300.json", "workload": "../convbnrelu_tile.jsonl",
//    "set": {},
//    "metrics": {"total_cycles": {"expected": 88148, "tolerance": 0},
//                "overlap.cube_vector": {"expected": 0.88, "tolerance": 1e-9}}}
//
// Paths are relative to the golden file. A metric passes when
// |actual - expected| <= max(tolerance, rel_tolerance * |expected|); both
// default to 0, so cycle counts are exact unless a tolerance is stated.
// "metrics" may also be a list of names: `--update` fills in the values.
#pragma once
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "study/json_file.hpp"

namespace npusim::study {

struct GoldenMetric {
    std::string path;  // dotted path into the statistics JSON
    bool has_expected = false;
    ojson expected;
    double tolerance = 0;      // absolute
    double rel_tolerance = 0;  // fraction of |expected|
};

struct Golden {
    std::string file;  // as found
    std::string name;  // file name without .json
    std::string chip, workload;            // as written
    std::string chip_path, workload_path;  // resolved
    ojson set = ojson::object();
    std::vector<GoldenMetric> metrics;
    ojson doc;  // the file as read, rewritten by update

    std::vector<std::string> set_args() const;
};

// A golden file, or every *.json of a folder (sorted by name). Throws
// InputError when the path has none.
std::vector<std::string> golden_files(const std::string& file_or_dir);

// Reads and checks one golden (keys with did-you-mean, types). Throws InputError.
Golden load_golden(const std::string& file);

struct Comparison {
    std::string metric;
    ojson expected, actual;  // null when missing
    double delta = 0;        // actual - expected (numbers)
    double allowed = 0;      // the tolerance that applied
    bool numeric = false;
    bool pass = false;
    std::string problem;     // why it cannot be compared ("" normally)
    bool unknown = false;    // the statistics have no such metric: the golden is broken
};

// The "version" metric always passes: a golden checks the model's numbers,
// not which build produced them.
Comparison compare_metric(const GoldenMetric& m, const nlohmann::json& stats);

// Sets every metric's expected value to what `stats` holds and rewrites the
// file (tolerances kept; a list of names becomes the object form with
// tolerance 0 for whole numbers and 1e-9 otherwise).
void update_golden(const Golden& g, const nlohmann::json& stats);

}  // namespace npusim::study
