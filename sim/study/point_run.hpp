// One point of a sweep (or one golden of a check): the `npusim run` command
// that computes it, its files in the sweep folder, and the result row built
// from its statistics JSON.
#pragma once
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "study/points.hpp"
#include "study/results_store.hpp"

namespace npusim::study {

// DIR/points/<id>/{stats.json, log.txt, result.json}.
struct PointFiles {
    std::string dir, stats, log, result;
};
PointFiles point_files(const std::string& out_dir, const std::string& id);

// `npusim run` arguments (after the program) computing statistics into `stats_file`.
std::vector<std::string> run_arguments(const std::string& chip, const std::string& workload,
                                       const std::vector<std::string>& set_args, const std::string& stats_file);

// The row of a point whose run exited with `exit_code`: metrics read from
// the statistics file when it succeeded, the error from its log otherwise.
Row make_row(const Point& p, const std::vector<std::string>& metrics, int exit_code, double elapsed_s,
             const PointFiles& files);

// The value at dotted `path` in a statistics document. On failure returns
// false and says why in `error` (with a did-you-mean among the statistics keys).
bool lookup_metric(const nlohmann::json& stats, const std::string& path, nlohmann::json& value, std::string& error);

// A metric under a group whose keys depend on what the run did (the kinds
// and resources its critical path went through, the host stages that ran):
// checked when a point finishes, not before (npusim run --elaborate-only
// has no such keys).
bool outcome_dependent_metric(const std::string& path);

// The error a failed `npusim run` printed (its "npusim: error: ..." message),
// or a description of how it ended.
std::string error_from_log(const std::string& log_file, int exit_code);

// Reads a statistics file; throws InputError when it is missing or not JSON.
nlohmann::json read_stats(const std::string& file);

}  // namespace npusim::study
