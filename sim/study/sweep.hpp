// `npusim sweep`: runs the points of a study into a sweep folder
//
//   DIR/study.json       the resolved study (axes with units, metrics; read by tools/plot_sweep.py)
//   DIR/results.jsonl    one row per finished point (axis values, metrics, status, error)
//   DIR/results.csv      the same rows as a table: index, id, one column per axis and metric, status, error
//   DIR/sweep.log        when each point started and how it ended (every attempt)
//   DIR/points/<id>/     stats.json, log.txt and result.json of one point
//   DIR/slurm/           the array job of --backend slurm (script, task list, logs)
//   DIR/report.html      with --report
//
// Each point is one `npusim run` child process; a point that fails records
// its error and the others go on. --resume keeps the finished points.
#pragma once
#include <cstddef>
#include <functional>
#include <ostream>
#include <string>
#include <vector>

#include "study/point_run.hpp"
#include "study/points.hpp"
#include "study/results_store.hpp"
#include "study/study.hpp"

namespace npusim::study {

struct SweepOptions {
    std::string study_file;
    std::string out_dir;
    unsigned jobs = 0;           // parallel points; 0 = one per CPU
    bool jobs_given = false;     // -j on the command line (throttles a Slurm array too)
    bool resume = false;
    std::string backend = "local";  // "local" or "slurm"
    double point_timeout_s = 0;     // 0 = none
    bool report = false;            // write DIR/report.html
    bool tty = false;               // progress bar instead of lines
    std::string self;               // the npusim executable that runs the points
    // Slurm backend.
    std::vector<std::string> sbatch_args;  // extra "#SBATCH" options, e.g. "--partition=big"
    std::string slurm_template;            // "" = the built-in tools/slurm/sweep_array.sbatch.in
    std::size_t slurm_max_array = 1000;    // array tasks at most; each runs every N-th pending point
};

// Runs the sweep; returns the exit code (0 all points ok, 1 some failed,
// 130 interrupted). Bad input throws InputError (exit 2).
int run_sweep(const SweepOptions& opt, std::ostream& out);

// The body of one Slurm array task: runs its share of DIR/slurm/tasks.json
// and writes each point's DIR/points/<id>/result.json. Returns the exit code.
int run_slurm_array_task(const std::string& out_dir, std::size_t task, std::ostream& out);

// --- backends (local_backend.cpp, slurm_backend.cpp) ------------------------

struct PendingPoint {
    Point point;
    std::vector<std::string> argv;  // full command line: npusim run ...
    PointFiles files;
};

struct SweepSink {
    std::function<void(const PendingPoint&)> started;
    std::function<void(const PendingPoint&, const Row&)> finished;  // also writes nothing: the caller stores
    std::function<void()> tick;                                      // called while waiting
};

// Thrown by a backend when SIGINT/SIGTERM arrived; running points were stopped.
struct SweepInterrupted {};

void run_local_backend(const std::vector<PendingPoint>& pending, const SweepOptions& opt,
                       const std::vector<std::string>& metrics, SweepSink& sink);
void run_slurm_backend(const std::vector<PendingPoint>& pending, const SweepOptions& opt, const Study& study,
                       SweepSink& sink, std::ostream& out);

// Creates the point's folder and removes the files of an earlier attempt.
void prepare_point_folder(const PendingPoint& p);

// The sbatch script template compiled into the binary (tools/slurm/sweep_array.sbatch.in).
const char* builtin_slurm_template();

}  // namespace npusim::study
