// The one configuration document of a run: {"chip": {...}, "workload": {...}}
// (docs/design.md §4.2). Built from a chip file (with "extends"), a workload file and
// --set overrides, validated against the schema, echoed into the stats.
#pragma once
#include <memory>
#include <string>
#include <vector>

#include <nlohmann/json_fwd.hpp>

#include "chip/chip_params.hpp"
#include "config/workload_kind.hpp"
#include "config/workload_params.hpp"

namespace npusim {

class RunConfig {
public:
    // Throws InputError (exit 2) with file, JSON position or key path, what
    // was expected, and did-you-mean for unknown keys.
    static RunConfig load(const std::string& chip_file, const std::string& workload_file,
                          const std::vector<std::string>& set_overrides);

    const ChipParams& chip() const;
    const WorkloadParams& workload() const;  // the workload section, typed
    const nlohmann::json& document() const;  // resolved, defaults filled in
    std::string dump() const;                // document() as pretty JSON text

    // What the workload is (config/workload_kind.hpp); none without one.
    WorkloadKind kind() const;
    // Its name ("tasks", "graph", "moe"; "" for none), for messages and the
    // schema's per-kind keys.
    std::string workload_kind() const;
    // Path of the workload file as the user gave it.
    std::string workload_file() const;
    // Values that load but are far outside what real chips have (the
    // schema's plausible ranges), one line each naming the input, key, unit
    // and range. The run goes on; the command line prints them on stderr.
    const std::vector<std::string>& warnings() const;
    // The input that last set `key_path` (a file, or "--set PATH=VALUE"),
    // for errors found after loading (a deployment check naming a key).
    std::string source_of(const std::string& key_path) const;

private:
    struct Impl;
    std::shared_ptr<const Impl> impl_;
};

}  // namespace npusim
