// `npusim bench`: replays a large synthetic stream and prints tasks/s,
// events/s and peak memory, next to the event rate of a plain SystemC
// notify loop measured in the same process (so the ratio is meaningful on a
// noisy shared machine). Both rates are taken over the CPU time the process
// got, so time the machine gave to other processes counts for neither; the
// wall-clock figures are printed beside them. With --sizes it reruns itself
// per size to show how memory grows with stream length. With --compile it
// times the compiler instead (bench_compile below).
#include <fcntl.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>
#include <time.h>

#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <iostream>
#include <sstream>
#include <vector>

#include <boost/program_options.hpp>
#include <fmt/format.h>
#include <nlohmann/json.hpp>
#include <systemc>

#include "cli/commands.hpp"
#include "cli/parse_options.hpp"
#include "common/errors.hpp"
#include "common/memory_budget.hpp"
#include "common/output_file.hpp"
#include "common/phase.hpp"
#include "config/run_config.hpp"
#include "engine/wake_scheduler.hpp"
#include "hw/die.hpp"
#include "study/child_process.hpp"
#include "system/run_progress.hpp"
#include "tasks/synthetic_stream.hpp"

namespace npusim::cli {

namespace po = boost::program_options;

namespace {

// The reference: one method re-notifying its own event, nothing else.
struct PlainLoop : sc_core::sc_module {
    sc_core::sc_event ev;
    std::uint64_t left = 0, count = 0;
    std::uint64_t period_ps = 1000;
    SC_HAS_PROCESS(PlainLoop);
    explicit PlainLoop(sc_core::sc_module_name n) : sc_core::sc_module(n) {
        SC_METHOD(step);
        sensitive << ev;
        dont_initialize();
    }
    void step() {
        ++count;
        if (--left > 0) ev.notify(sc_core::sc_time::from_value(period_ps));
    }
};

double seconds_since(std::chrono::steady_clock::time_point t0) {
    return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
}

// CPU time of this process so far (all its threads; SystemC runs in one).
double cpu_seconds() {
    timespec ts{};
    clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
    return static_cast<double>(ts.tv_sec) + static_cast<double>(ts.tv_nsec) * 1e-9;
}

// A span of work timed both ways.
struct Span {
    double wall = 0, cpu = 0;
};

template <typename F>
Span timed(F&& work) {
    const auto w0 = std::chrono::steady_clock::now();
    const double c0 = cpu_seconds();
    work();
    // Never zero: a tiny --tasks run still divides by it.
    return Span{std::max(seconds_since(w0), 1e-9), std::max(cpu_seconds() - c0, 1e-9)};
}

long peak_rss_kb() {
    rusage ru{};
    getrusage(RUSAGE_SELF, &ru);
    return ru.ru_maxrss;
}

struct BenchRow {
    double tasks = 0, secs = 0, tps = 0, eps = 0, rss_kb = 0, ratio = 0, wall_secs = 0, wall_ratio = 0;
};

void print_row(const std::string& label, const BenchRow& r) {
    std::cout << fmt::format("{:>10} {:>10.2f} {:>12.0f} {:>12.0f} {:>10.1f} {:>11.0f} {:>6.1f}% {:>9.1f}%\n", label, r.secs, r.tps,
                             r.eps, r.rss_kb / 1024.0, r.rss_kb * 1024.0 / r.tasks, r.ratio * 100.0, r.wall_ratio * 100.0);
}

// Each size `runs` times, each run in its own process (SystemC cannot
// restart); with several runs, a median row per size, since one run on a
// shared machine can be off by 10-20%.
int bench_sizes(const std::string& self, const std::string& chip, const std::string& sizes, int runs) {
    std::cout << fmt::format("{:>10} {:>10} {:>12} {:>12} {:>10} {:>11} {:>7} {:>10}\n", "tasks", "CPU s", "tasks/s", "events/s",
                             "peak MB", "B per task", "ratio", "wall ratio");
    std::stringstream ss(sizes);
    std::string item;
    while (std::getline(ss, item, ',')) {
        std::vector<BenchRow> rows;
        for (int run = 0; run < runs; ++run) {
            const std::string cmd = fmt::format("'{}' bench --chip '{}' --tasks {} --machine", self, chip, item);
            FILE* p = popen(cmd.c_str(), "r");
            if (!p) throw InputError("cannot start " + cmd);
            char buf[512];
            std::string line;
            while (std::fgets(buf, sizeof buf, p)) line += buf;
            if (pclose(p) != 0) throw InputError("benchmark child failed: " + cmd);
            BenchRow r;
            if (std::sscanf(line.c_str(),
                            "tasks=%lf sim_s=%lf tasks_per_s=%lf events_per_s=%lf peak_kb=%lf ratio=%lf sim_wall_s=%lf ratio_wall=%lf",
                            &r.tasks, &r.secs, &r.tps, &r.eps, &r.rss_kb, &r.ratio, &r.wall_secs, &r.wall_ratio) != 8)
                throw InputError("benchmark child printed no figures: " + cmd);
            print_row(fmt::format("{:.0f}", r.tasks), r);
            rows.push_back(r);
        }
        if (runs > 1) {
            auto median = [&](double BenchRow::*field) {
                std::vector<double> v;
                for (const auto& r : rows) v.push_back(r.*field);
                std::sort(v.begin(), v.end());
                return v.size() % 2 ? v[v.size() / 2] : (v[v.size() / 2 - 1] + v[v.size() / 2]) / 2.0;
            };
            BenchRow m;
            m.tasks = rows.front().tasks;
            for (double BenchRow::*f : {&BenchRow::secs, &BenchRow::tps, &BenchRow::eps, &BenchRow::rss_kb, &BenchRow::ratio,
                                        &BenchRow::wall_secs, &BenchRow::wall_ratio})
                m.*f = median(f);
            print_row("median", m);
        }
    }
    return 0;
}

// One child `npusim ...` with its output in `log`, measured from wait4(2):
// exit code, wall and CPU seconds, peak memory and what it printed.
struct ChildRun {
    int code = -1;
    double wall = 0, cpu = 0, peak_mb = 0;
    std::string output;
};

// Runs argv with its output in `log`. With `echo` set, its progress lines go
// on to stderr after that prefix while it runs, polled ten times a second (a
// whole LLM step runs for tens of minutes).
ChildRun run_measured(const std::vector<std::string>& argv, const std::string& log, const std::string& echo = {}) {
    const auto t0 = std::chrono::steady_clock::now();
    const pid_t pid = study::spawn_process(argv, log);
    int status = 0;
    rusage ru{};
    std::streamoff seen = 0;
    for (;;) {
        const pid_t got = ::wait4(pid, &status, echo.empty() ? 0 : WNOHANG, &ru);
        if (got == pid || (got < 0 && errno != EINTR)) break;
        if (got == 0) {
            study::forward_progress_lines(log, seen, echo, std::cerr);
            study::nap_ms(100);
        }
    }
    if (!echo.empty()) study::forward_progress_lines(log, seen, echo, std::cerr);
    ChildRun r;
    r.wall = seconds_since(t0);
    r.cpu = static_cast<double>(ru.ru_utime.tv_sec + ru.ru_stime.tv_sec) +
            static_cast<double>(ru.ru_utime.tv_usec + ru.ru_stime.tv_usec) * 1e-6;
    r.peak_mb = static_cast<double>(ru.ru_maxrss) / 1024.0;
    r.code = study::exit_code_of(status);
    std::ifstream in(log);
    r.output.assign(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
    return r;
}

// `bench --compile`: per size, a graph like the one a huge model makes
// (input x [N, 2097152] fp16 into one ReLU: element-wise slices, about 16 per
// row on A2-class chips) compiled by a child `npusim compile` whose wall
// time, CPU time and peak memory are taken from wait4(2).
int bench_compile(const std::string& self, const std::string& chip, const std::string& sizes) {
    namespace fs = std::filesystem;
    const fs::path dir = fs::temp_directory_path() / fmt::format("npusim-bench-compile-{}", ::getpid());
    fs::create_directories(dir);
    std::cout << fmt::format("{:>10} {:>8} {:>9} {:>9} {:>10} {:>11}\n", "tasks", "N", "wall s", "CPU s", "peak MB", "B per task");
    std::stringstream ss(sizes);
    std::string item;
    int rc = 0;
    while (std::getline(ss, item, ',')) {
        std::uint64_t target = 0;
        try {
            target = std::stoull(item);
        } catch (const std::exception&) {
            throw InputError("--sizes: expected comma-separated task counts, got '" + item + "'");
        }
        // Just under the count (the compiler refuses more than 4000000 tasks).
        const std::uint64_t n = std::max<std::uint64_t>(1, target * 9995 / 160000);
        const std::string graph = (dir / fmt::format("relu_{}.json", n)).string();
        write_output_file(graph, fmt::format(R"({{"kind": "graph", "name": "bench_relu_{0}",
 "tensors": {{"x": {{"shape": [{0}, 2097152], "dtype": "fp16", "input": true}}, "y": {{"shape": [{0}, 2097152]}}}},
 "nodes": [{{"name": "relu", "op": "ReLU", "inputs": ["x"], "outputs": ["y"]}}],
 "outputs": ["y"]}}
)", n));
        const ChildRun run = run_measured({self, "compile", "--chip", chip, "--workload", graph, "--emit-tasks", "/dev/null"},
                                          (dir / "compile.log").string());
        const std::string& said = run.output;
        double tasks = 0;
        const auto at = said.find("kernels -> ");
        if (at != std::string::npos) tasks = std::atof(said.c_str() + at + 11);
        if (run.code != 0 || tasks <= 0) {
            std::cout << fmt::format("{:>10} {:>8} compile failed: {}", target, n, said.substr(0, said.find('\n') + 1));
            rc = 1;
            continue;
        }
        std::cout << fmt::format("{:>10.0f} {:>8} {:>9.2f} {:>9.2f} {:>10.1f} {:>11.0f}\n", tasks, n, run.wall, run.cpu,
                                 run.peak_mb, run.peak_mb * 1024.0 * 1024.0 / tasks);
        std::cout.flush();
    }
    std::error_code ec;
    fs::remove_all(dir, ec);
    return rc;
}

// What a child `npusim run` said: the simulated time and the events it processed.
struct RunFigures {
    double us = 0, events = 0;
    bool ok = false;
};

RunFigures parse_run(const ChildRun& run) {
    RunFigures f;
    const std::string& said = run.output;
    const auto total = said.find(" cycles  (");
    const auto ev = said.find(" simulation events");
    if (run.code != 0 || total == std::string::npos) return f;
    f.us = std::atof(said.c_str() + total + 10);
    if (ev != std::string::npos) {
        auto b = said.rfind(' ', ev - 1);
        f.events = std::atof(said.c_str() + (b == std::string::npos ? 0 : b + 1));
    }
    f.ok = true;
    return f;
}

// The die's own event rate on a synthetic stream, in a child of its own.
double die_events_per_s(const std::string& self, const std::string& chip, const std::filesystem::path& dir) {
    const ChildRun run = run_measured({self, "bench", "--chip", chip, "--tasks", "200000", "--machine"}, (dir / "die.log").string());
    const auto at = run.output.find("events_per_s=");
    return run.code == 0 && at != std::string::npos ? std::atof(run.output.c_str() + at + 13) : 0.0;
}

// `bench --moe`: the MoE Dispatch and the MoE layer at the calibration size
// (the chip file's ranks, batch 128), baseline and optimized, each in a
// child `npusim run` whose wall time, CPU time and peak memory come from
// wait4(2), with the supernode path's events per CPU second beside the
// die's own (a synthetic stream); budgets as issue-level targets: the
// Dispatch <= 3 s, the layer <= 6 s wall, each <= 2 GB.
int bench_moe(const std::string& self, const std::string& chip, const std::string& workload, double wall_budget) {
    namespace fs = std::filesystem;
    const fs::path dir = fs::temp_directory_path() / fmt::format("npusim-bench-moe-{}", ::getpid());
    fs::create_directories(dir);
    constexpr double kRssBudgetMb = 2048.0;
    std::cout << fmt::format("npusim bench --moe: {} on {}\n", workload, chip);
    std::cout << fmt::format("{:>10} {:>12} {:>9} {:>9} {:>10} {:>12} {:>13}  {}\n", "variant", "simulated us", "wall s", "CPU s",
                             "peak MB", "events", "events/CPU s", fmt::format("budget ({:.0f} s wall, {:.0f} MB)", wall_budget, kRssBudgetMb));
    int rc = 0;
    for (const char* variant : {"baseline", "optimized"}) {
        const std::string set = std::string("workload.variant=") + variant;
        const ChildRun run = run_measured({self, "run", "--chip", chip, "--workload", workload, "--set", set}, (dir / "run.log").string());
        const RunFigures f = parse_run(run);
        if (!f.ok) {
            std::cout << fmt::format("{:>10} run failed: {}", variant, run.output.substr(0, run.output.find('\n') + 1));
            rc = 1;
            continue;
        }
        const bool ok = run.wall <= wall_budget && run.peak_mb <= kRssBudgetMb;
        std::cout << fmt::format("{:>10} {:>12.3f} {:>9.2f} {:>9.2f} {:>10.1f} {:>12.0f} {:>13.0f}  {}\n", variant, f.us, run.wall,
                                 run.cpu, run.peak_mb, f.events, f.events / std::max(run.cpu, 1e-9),
                                 ok ? "within" : (run.peak_mb > kRssBudgetMb ? "OVER (memory)" : "OVER (wall; compare CPU s on a busy machine)"));
        std::cout.flush();
    }
    std::cout << fmt::format("  the die alone: {:.0f} events/CPU s (a synthetic stream, npusim bench --machine)\n",
                             die_events_per_s(self, chip, dir));
    std::error_code ec;
    fs::remove_all(dir, ec);
    return rc;
}

// `bench --bytes`: simulated bytes per CPU second for a large GEMM graph
// (models/matmul_2048.json, compiled and simulated by one child `npusim
// run`, its emitted stream's size from `npusim compile`) and a contiguous
// copy (traces/copy_48core.jsonl, 384 MB on 48 vector cores). The bytes are
// what the cores move through GM (L2 hits and misses, writes); the budget
// for the GEMM is <= 0.1 s and a stream of <= 1 MB. With `runs` > 1 each
// case runs that many times and the wall and CPU times are their medians
// (a 0.1 s run on a busy machine varies by a fifth).
int bench_bytes(const std::string& self, const std::string& chip, int runs) {
    namespace fs = std::filesystem;
    const fs::path dir = fs::temp_directory_path() / fmt::format("npusim-bench-bytes-{}", ::getpid());
    fs::create_directories(dir);
    std::cout << fmt::format("npusim bench --bytes on {}{}\n", chip,
                             runs > 1 ? fmt::format(" (median wall and CPU time of {} runs each)", runs) : "");
    std::cout << fmt::format("{:<28} {:>12} {:>8} {:>8} {:>10} {:>14} {:>11}\n", "workload", "simulated us", "wall s", "CPU s",
                             "GM MB", "GM bytes/CPU s", "stream KB");
    struct Case {
        const char* name;
        std::string file;
        double budget_s;  // 0: none
    };
    int rc = 0;
    for (const Case& c : {Case{"2048^3 fp16 MatMul graph", "models/matmul_2048.json", 0.1},
                          Case{"384 MB contiguous copy", "traces/copy_48core.jsonl", 0}}) {
        const std::string stats = (dir / "stats.json").string();
        std::vector<ChildRun> all;
        for (int i = 0; i < runs && (all.empty() || all.back().code == 0); ++i)
            all.push_back(run_measured({self, "run", "--chip", chip, "--workload", c.file, "--stats", stats, "-q"},
                                       (dir / "run.log").string()));
        ChildRun run = all.back();
        const auto median = [&](double ChildRun::*field) {
            std::vector<double> v;
            for (const ChildRun& r : all) v.push_back(r.*field);
            std::sort(v.begin(), v.end());
            return v[v.size() / 2];
        };
        run.wall = median(&ChildRun::wall);
        run.cpu = median(&ChildRun::cpu);
        if (run.code != 0) {
            std::cout << fmt::format("{:<28} run failed: {}", c.name, run.output.substr(0, run.output.find('\n') + 1));
            rc = 1;
            continue;
        }
        const nlohmann::json j = nlohmann::json::parse(std::ifstream(stats));
        const nlohmann::json& l2 = j["memory"]["l2"];
        const double gm = l2["hit_bytes"].get<double>() + l2["miss_bytes"].get<double>() + l2["write_bytes"].get<double>();
        std::string stream = "-";
        if (c.file.size() > 5 && c.file.compare(c.file.size() - 5, 5, ".json") == 0) {  // a graph: its emitted stream
            const std::string out = (dir / "stream.jsonl").string();
            const ChildRun comp = run_measured({self, "compile", "--chip", chip, "--workload", c.file, "--emit-tasks", out, "-q"},
                                               (dir / "compile.log").string());
            std::error_code ec;
            const auto size = fs::file_size(out, ec);
            stream = comp.code == 0 && !ec ? fmt::format("{:.1f}", static_cast<double>(size) / 1024.0) : "failed";
        }
        std::cout << fmt::format("{:<28} {:>12.3f} {:>8.3f} {:>8.3f} {:>10.1f} {:>14.0f} {:>11}{}\n", c.name,
                                 j["total_ns"].get<double>() / 1000.0, run.wall, run.cpu, gm / 1e6, gm / std::max(run.cpu, 1e-9),
                                 stream,
                                 c.budget_s > 0 ? fmt::format("  budget {} s, 1024 KB: {}", c.budget_s,
                                                              run.wall <= c.budget_s ? "within" : "OVER")
                                                : std::string());
        std::cout.flush();
    }
    std::error_code ec;
    fs::remove_all(dir, ec);
    return rc;
}

// `bench --llm`: one DeepSeek-V3 decode step (the run file's defaults: 61
// layers on the chip's 288 dies) and one prefill step (32 dies), each a
// child `npusim run`; `layers` > 0 runs that many layers of each instead.
// Budget: <= 10 min wall and <= 16 GB each.
int bench_llm(const std::string& self, const std::string& chip, int layers) {
    namespace fs = std::filesystem;
    const fs::path dir = fs::temp_directory_path() / fmt::format("npusim-bench-llm-{}", ::getpid());
    fs::create_directories(dir);
    constexpr double kWallBudget = 600, kRssBudgetMb = 16384;
    std::cout << fmt::format("npusim bench --llm on {}{}\n", chip, layers > 0 ? fmt::format(" ({} layers)", layers) : std::string());
    std::cout << fmt::format("{:>8} {:>6} {:>13} {:>9} {:>9} {:>10} {:>12} {:>13}  {}\n", "phase", "dies", "step us", "wall s", "CPU s",
                             "peak MB", "events", "events/CPU s", "budget (600 s wall, 16384 MB)");
    // A step's child run prints a progress line a minute (on a terminal, or
    // as NPUSIM_PROGRESS_SECONDS says); they are passed on with its phase.
    const bool echo = RunProgress::interval_from_environment() >= 0 || ::isatty(STDERR_FILENO) != 0;
    if (echo && RunProgress::interval_from_environment() < 0) ::setenv("NPUSIM_PROGRESS_SECONDS", "60", 1);
    int rc = 0;
    struct Case {
        const char* name;
        std::string file;
        std::vector<std::string> sets;
    };
    const std::vector<Case> cases = {
        {"decode", "models/llm/deepseek_v3.json", {}},
        {"prefill", "models/llm/deepseek_v3_prefill.json", {"chip.interconnect.ranks=32"}},
    };
    for (const Case& c : cases) {
        std::vector<std::string> argv = {self, "run", "--chip", chip, "--workload", c.file};
        std::vector<std::string> sets = c.sets;
        if (layers > 0) sets.push_back(fmt::format("workload.layers={}", layers));
        for (const auto& s : sets) argv.insert(argv.end(), {"--set", s});
        const ChildRun run = run_measured(argv, (dir / "run.log").string(), echo ? fmt::format("  {}: ", c.name) : "");
        const RunFigures f = parse_run(run);
        if (!f.ok) {
            std::cout << fmt::format("{:>8} run failed: {}", c.name, run.output.substr(0, run.output.find('\n') + 1));
            rc = 1;
            continue;
        }
        const auto dies = run.output.find(" ranks (");
        const auto sys = run.output.rfind("system ", dies);
        const std::string n = dies != std::string::npos && sys != std::string::npos ? run.output.substr(sys + 7, dies - sys - 7) : "?";
        const bool ok = run.wall <= kWallBudget && run.peak_mb <= kRssBudgetMb;
        std::cout << fmt::format("{:>8} {:>6} {:>13.3f} {:>9.2f} {:>9.2f} {:>10.1f} {:>12.0f} {:>13.0f}  {}\n", c.name,
                                 n.substr(n.find_first_not_of(' ')), f.us, run.wall, run.cpu, run.peak_mb, f.events,
                                 f.events / std::max(run.cpu, 1e-9), ok ? "within" : "OVER");
        // Where the time goes: the run's own llm line and shares.
        for (const char* key : {"  llm ", "  op time", "  events "}) {
            const auto at = run.output.find(key);
            if (at != std::string::npos) std::cout << "    " << run.output.substr(at + 2, run.output.find('\n', at) - at - 1);
        }
        std::cout.flush();
    }
    // What sets the budget: the supernode path's event rate against the die's own.
    std::cout << fmt::format("  the die alone: {:.0f} events/CPU s (a synthetic stream, npusim bench --machine)\n",
                             die_events_per_s(self, chip, dir));
    std::error_code ec;
    fs::remove_all(dir, ec);
    return rc;
}

}  // namespace

int bench_command(const Args& args, const std::string& self_path) {
    std::string chip_file = "configs/chips/a2.json", sizes;
    std::uint64_t tasks = 1000000;
    bool machine = false, compile = false, moe = false, llm = false, bytes = false;
    int llm_layers = 0;
    int runs = 1;
    po::options_description opts("npusim bench options");
    opts.add_options()
        ("help,h", "show this help")
        ("chip", po::value(&chip_file), "chip file (default configs/chips/a2.json)")
        ("tasks", po::value(&tasks), "synthetic stream length (default 1000000)")
        ("sizes", po::value(&sizes), "comma-separated lengths, each run in its own process")
        ("runs", po::value(&runs), "run each length (with --bytes: each case) this many times (own processes) and print the median (default 1)")
        ("machine", po::bool_switch(&machine), "one line of key=value figures")
        ("compile", po::bool_switch(&compile), "compiler time and peak memory instead, per --sizes (default 10000,100000,1000000)")
        ("moe", po::bool_switch(&moe), "the MoE Dispatch and the MoE layer at 288 ranks x 128 tokens instead (both variants; --chip default configs/chips/a3-supernode.json)")
        ("llm", po::bool_switch(&llm), "one DeepSeek-V3 decode step (288 dies) and one prefill step (32 dies) instead (--chip default configs/chips/a3-supernode.json)")
        ("layers", po::value(&llm_layers), "with --llm: run this many layers of each step (default: all 61)")
        ("bytes", po::bool_switch(&bytes), "simulated GM bytes per CPU second of a 2048^3 MatMul graph (compile and simulate, and its stream's size) and of a 384 MB contiguous copy instead");
    if (!parse_options(args, opts)) return 0;
    if (runs < 1 || runs > 100) throw InputError("--runs: expected 1 .. 100");
    const std::string super_chip = chip_file == "configs/chips/a2.json" ? "configs/chips/a3-supernode.json" : chip_file;
    if (moe) {
        const int rc = bench_moe(self_path, super_chip, "models/moe_dispatch.json", 3.0);
        return std::max(rc, bench_moe(self_path, super_chip, "models/moe_layer.json", 6.0));
    }
    if (llm_layers < 0 || llm_layers > 1000) throw InputError("--layers: expected 0 .. 1000");
    if (llm) return bench_llm(self_path, super_chip, llm_layers);
    if (bytes) return bench_bytes(self_path, chip_file, runs);
    if (compile) return bench_compile(self_path, chip_file, sizes.empty() ? "10000,100000,1000000" : sizes);
    if (!sizes.empty() || runs > 1) return bench_sizes(self_path, chip_file, sizes.empty() ? std::to_string(tasks) : sizes, runs);
    if (tasks == 0 || tasks > 50'000'000) throw InputError("--tasks: expected 1 .. 50000000");

    // Any existing workload file satisfies the loader; the stream is synthetic.
    const RunConfig cfg = RunConfig::load(chip_file, "<synthetic>.jsonl", {});
    const ChipParams& chip = cfg.chip();
    const auto t_build = std::chrono::steady_clock::now();
    check_memory_budget(fmt::format("npusim bench: a synthetic stream of {} tasks", tasks), tasks * kStreamBytesPerTask,
                        "use a smaller --tasks N");
    Phase phase(fmt::format("building a synthetic stream of {} tasks", tasks));
    const TaskStream stream = synthetic_stream(tasks, chip);
    const double build_s = seconds_since(t_build);

    Die die("die0", chip, stream, nullptr, false);
    PlainLoop loop("plain_loop");

    const std::uint64_t actions0 = sim_events_total();
    const std::uint64_t activations0 = sim_activations_total();
    const Span sim = timed([&] { die.run(); });
    const std::uint64_t actions = sim_events_total() - actions0;
    const std::uint64_t activations = sim_activations_total() - activations0;
    const long rss_kb = peak_rss_kb();

    // Same process, same kernel, right after: the plain loop's rate.
    loop.left = std::max<std::uint64_t>(actions, 1000000);
    loop.ev.notify(sc_core::SC_ZERO_TIME);
    const Span plain = timed([] { sc_core::sc_start(); });
    const double sim_s = sim.cpu, loop_s = plain.cpu;
    const double our_rate = static_cast<double>(actions) / sim_s;
    const double loop_rate = static_cast<double>(loop.count) / loop_s;
    const double wall_ratio = (static_cast<double>(actions) / sim.wall) / (static_cast<double>(loop.count) / plain.wall);

    if (machine) {
        std::cout << fmt::format(
            "tasks={} sim_s={:.4f} tasks_per_s={:.0f} events_per_s={:.0f} peak_kb={} ratio={:.4f} sim_wall_s={:.4f} "
            "ratio_wall={:.4f}\n",
            tasks, sim_s, static_cast<double>(tasks) / sim_s, our_rate, rss_kb, our_rate / loop_rate, sim.wall, wall_ratio);
        return 0;
    }
    std::cout << fmt::format("npusim bench: {} synthetic tasks on {} ({} cube + {} vector)\n", tasks, chip.name,
                             chip.cube.count, chip.vector.count);
    std::cout << fmt::format("  stream build    {:.2f} s\n", build_s);
    std::cout << fmt::format("  simulation      {:.2f} s CPU ({:.2f} s wall), {} simulated cycles\n", sim_s, sim.wall,
                             static_cast<std::uint64_t>(static_cast<double>(die.end_ps()) / chip.ps_per_cycle()));
    std::cout << fmt::format("  tasks/s         {:.0f}\n", static_cast<double>(tasks) / sim_s);
    std::cout << fmt::format("  events/s        {:.0f}  ({} events in {} SystemC process activations)\n", our_rate, actions,
                             activations);
    const std::string tunables = std::getenv("GLIBC_TUNABLES") ? std::getenv("GLIBC_TUNABLES") : "";
    std::cout << fmt::format("  huge pages      {}\n", tunables.find("glibc.malloc.hugetlb=1") != std::string::npos
                                                       ? "on (GLIBC_TUNABLES=" + tunables + ")"
                                                       : std::string("off"));
    std::cout << fmt::format("  plain SystemC   {:.0f} notifications/s ({} in {:.2f} s CPU, {:.2f} s wall)\n", loop_rate,
                             loop.count, loop_s, plain.wall);
    std::cout << fmt::format("  ratio           {:.0f}% of the plain loop's event rate ({:.0f}% by wall clock)\n",
                             100.0 * our_rate / loop_rate, 100.0 * wall_ratio);
    std::cout << fmt::format("  peak memory     {:.1f} MB ({:.0f} B per task)\n", rss_kb / 1024.0,
                             rss_kb * 1024.0 / static_cast<double>(tasks));
    return 0;
}

}  // namespace npusim::cli
