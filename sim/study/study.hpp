// A what-if study (docs/design.md §4.1 `npusim sweep`): one base run (chip file,
// workload file, fixed --set values) and axes that change it by dotted path.
//
//   {"chip": "../chips/a2.json", "workload": "../../models/resnet50.json",
//    "set": {"workload.batch": 1},
//    "axes": {"chip.buffers.ub_kb": [128, 192, 256], "chip.hbm.bandwidth_gbps": [800, 1600, 3200]},
//    "combine": "grid", "metrics": ["total_cycles", "units.cube.utilization"]}
//
// Paths are relative to the study file. Axes keep the order they are written
// in: with "grid" the first axis varies slowest.
#pragma once
#include <string>
#include <vector>

#include "study/json_file.hpp"

namespace npusim::study {

struct Axis {
    std::string path;          // "chip.hbm.bandwidth_gbps"
    std::vector<ojson> values;
    std::string unit;          // from the configuration schema ("GB/s"), "" if none
};

enum class Combine { grid, zip };

struct Study {
    std::string file;               // as given on the command line
    std::string name;               // "name" or the file name without .json
    std::string notes;
    std::string chip, workload;     // as written in the study file
    std::string chip_path, workload_path;  // resolved: absolute paths
    ojson set = ojson::object();    // path -> value, applied before the axes
    std::vector<Axis> axes;
    Combine combine = Combine::grid;
    std::vector<std::string> metrics;  // dotted paths into the statistics JSON

    // "--set" arguments (PATH=VALUE) of the fixed part.
    std::vector<std::string> base_set_args() const;
    // A digest of what the points run (chip, workload, "set", axis paths,
    // metrics), written to study.json for tools.
    std::string fingerprint() const;
    // The resolved study as JSON (written to DIR/study.json for tools).
    ojson to_json(std::size_t point_count) const;
};

// Reads and checks a study file: keys (did-you-mean for typos), types, the
// base run (loaded with the configuration loader), axis paths against the
// configuration schema. Axis *values* are not checked here: a bad value
// fails its own point only. Throws InputError (exit 2).
Study load_study(const std::string& file);

// PATH=VALUE for --set: strings as written, everything else as JSON.
std::string set_arg(const std::string& path, const ojson& value);

}  // namespace npusim::study
