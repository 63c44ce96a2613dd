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
//
// Response studies (docs/studies.md "Responses") add to that:
//   "chip"/"workload" as an object NAME: FILE or NAME: {"file", "set"}: an
//     axis of whole files (before the other axes, chip slowest);
//   "changes": {PATH: [values...]}: each value applied alone to every base
//     point (the axes' points); {"scale": F} is F times the base's value;
//   "modes": ["fixed", "recompiled"]: fixed runs the stream compiled once for
//     the base point on the changed chip; recompiled plans for the changed chip;
//   "expect": how each change must move a metric against its base (rules in
//     study/responses.hpp), with the misses the study records as known.
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

// One chip or workload file of the study: the base run's, or one value of
// the chip / workload axis ("name": its key in the study file).
struct RunFile {
    std::string name;           // "" for a plain string entry
    std::string file;           // as written
    std::string path;           // resolved: absolute
    ojson set = ojson::object();  // its own overrides (an entry's "set")
};

// One key changed alone against every base point (one-at-a-time).
struct Change {
    std::string path;           // "chip.hbm.bandwidth_gbps"
    std::vector<ojson> values;  // as written: numbers, or {"scale": F}
    std::string unit;
    bool integer = false;       // the schema's type: scaled values round
};

// The modes a change runs in (default: recompiled only).
enum class Mode { recompiled, fixed };

// "expect": each change's response, checked when the points are done.
struct Expect {
    std::string rule;           // "roofline" or "monotone" ("" = none)
    std::string metric = "total_cycles";
    double tolerance = 0.01;    // a grown resource may be this much slower
    ojson known = ojson::array();  // the misses the study records (rows of responses.jsonl's key fields)
};

struct Study {
    std::string file;               // as given on the command line
    std::string name;               // "name" or the file name without .json
    std::string notes;
    std::string chip, workload;     // as written in the study file (the first entry's file)
    std::string chip_path, workload_path;  // resolved: absolute paths (the first entry's)
    std::vector<RunFile> chips, workloads;  // one entry each unless given as NAME: FILE objects
    ojson set = ojson::object();    // path -> value, applied before the axes
    std::vector<Axis> axes;
    Combine combine = Combine::grid;
    std::vector<std::string> metrics;  // dotted paths into the statistics JSON
    std::vector<Change> changes;
    std::vector<Mode> modes = {Mode::recompiled};
    Expect expect;

    bool has_fixed() const;

    // "--set" arguments (PATH=VALUE) of the fixed part.
    std::vector<std::string> base_set_args() const;
    // A digest of what the points run (chip, workload, "set", axis paths,
    // metrics), written to study.json for tools.
    std::string fingerprint() const;
    // The files, changes, modes and expectations of a response study (empty
    // for a plain one): part of study.json and of the fingerprint.
    ojson responses_json() const;
    // The resolved study as JSON (written to DIR/study.json for tools).
    ojson to_json(std::size_t point_count) const;
};

// Reads and checks a study file: keys (did-you-mean for typos), types, the
// base run (loaded with the configuration loader), axis paths against the
// configuration schema. Axis *values* are not checked here: a bad value
// fails its own point only. Throws InputError (exit 2).
Study load_study(const std::string& file);

// The --set arguments of a base run: the study's "set", then the chip's and
// the workload's own entries.
std::vector<std::string> base_run_sets(const Study& s, const RunFile& chip, const RunFile& workload);

// PATH=VALUE for --set: strings as written, everything else as JSON.
std::string set_arg(const std::string& path, const ojson& value);

}  // namespace npusim::study
