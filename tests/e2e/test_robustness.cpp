// Limits that hold (docs/robustness.md): the compiler's sync pass in memory
// linear in tasks, memory estimated before it is needed, outputs written
// atomically with the OS reason on failure, one sweep per folder.
#include <catch2/catch.hpp>

#include <fcntl.h>
#include <signal.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <filesystem>
#include <random>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include <fmt/format.h>

#include "compiler/sync_pass.hpp"
#include "tasks/stream_reader.hpp"
#include "support/e2e.hpp"

// AddressSanitizer reserves terabytes of address space at start (so
// `ulimit -v` stops it before main) and adds its own quarantine to the peak.
#if defined(__SANITIZE_ADDRESS__)
#define NPUSIM_TEST_ASAN 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define NPUSIM_TEST_ASAN 1
#endif
#endif

using Catch::Matchers::Contains;
namespace fs = std::filesystem;
using namespace npusim;
using namespace npusim::test;

namespace {

const std::string kSrc = NPUSIM_SOURCE_DIR;
const std::string kA2 = kSrc + "/configs/chips/a2.json";
const std::string kAx300 = kSrc + "/configs/chips/ax300.json";
const std::string kConv = kSrc + "/models/convbnrelu.json";
const std::string kConvTile = kSrc + "/traces/convbnrelu_tile.jsonl";

// The reduction the compiler used before (ancestor bitsets, tasks^2/8
// bytes): the reference the linear one must match edge for edge.
std::vector<std::vector<int>> bitset_reduction(std::vector<std::vector<int>> preds) {
    const std::size_t n = preds.size(), words = (n + 63) / 64;
    std::vector<std::uint64_t> anc(n * words, 0);
    for (std::size_t t = 0; t < n; ++t) {
        std::uint64_t* a = &anc[t * words];
        auto& p = preds[t];
        for (int q : p)
            for (std::size_t w = 0; w < words; ++w) a[w] |= anc[static_cast<std::size_t>(q) * words + w];
        p.erase(std::remove_if(p.begin(), p.end(), [&](int q) { return a[static_cast<std::size_t>(q) / 64] >> (q % 64) & 1; }),
                p.end());
        for (int q : p) a[static_cast<std::size_t>(q) / 64] |= 1ULL << (q % 64);
    }
    return preds;
}

// A graph like the issue's: x [rows, 2097152] fp16 into one ReLU, about 16
// element-wise tasks per row on A2.
std::string relu_graph(const TempDir& tmp, long rows) {
    return tmp.write(fmt::format("relu_{}.json", rows),
                     fmt::format(R"({{"kind": "graph", "name": "relu",
 "tensors": {{"x": {{"shape": [{0}, 2097152], "dtype": "fp16", "input": true}}, "y": {{"shape": [{0}, 2097152]}}}},
 "nodes": [{{"name": "relu", "op": "ReLU", "inputs": ["x"], "outputs": ["y"]}}], "outputs": ["y"]}})",
                                 rows));
}

// `sh -c SCRIPT` with the npusim binary as $NPUSIM: for ulimit and env.
Result run_shell(const TempDir& tmp, const std::string& script) {
    return run_program(tmp, "NPUSIM=" + quote(NPUSIM_BIN) + " sh -c", {script});
}

std::size_t lines_of_count(const std::string& file) {
    const std::string text = slurp(file);
    return static_cast<std::size_t>(std::count(text.begin(), text.end(), '\n'));
}

std::vector<std::string> stray_temporaries(const std::string& dir) {
    std::vector<std::string> out;
    std::error_code ec;
    for (const auto& e : fs::recursive_directory_iterator(dir, ec))
        if (e.path().filename().string().find(".tmp.") != std::string::npos) out.push_back(e.path().string());
    return out;
}

}  // namespace

TEST_CASE("sync: the linear reduction keeps exactly the edges of the bitset reduction", "[compiler][sync][limits]") {
    std::mt19937 rng(18);
    for (int round = 0; round < 60; ++round) {
        // Layered graphs (what kernels of tiles make), with skip edges
        // (residuals) and some random far edges; sizes up to 600 tasks.
        const int layers = 1 + static_cast<int>(rng() % 12), width = 1 + static_cast<int>(rng() % 50);
        const int n = layers * width;
        std::vector<std::vector<int>> preds(static_cast<std::size_t>(n));
        std::size_t edges = 0;
        for (int t = width; t < n; ++t) {
            const int layer = t / width;
            for (int q = (layer - 1) * width; q < layer * width; ++q)
                if (rng() % 4 == 0) preds[static_cast<std::size_t>(t)].push_back(q);
            if (layer >= 3 && rng() % 3 == 0) preds[static_cast<std::size_t>(t)].push_back((layer - 3) * width + static_cast<int>(rng() % width));
            if (rng() % 5 == 0) preds[static_cast<std::size_t>(t)].push_back(static_cast<int>(rng() % static_cast<unsigned>(t)));
            auto& p = preds[static_cast<std::size_t>(t)];
            std::sort(p.begin(), p.end());
            p.erase(std::unique(p.begin(), p.end()), p.end());
            edges += p.size();
        }
        const auto expected = bitset_reduction(preds);
        std::size_t kept = 0;
        for (const auto& p : expected) kept += p.size();
        auto got = preds;
        const std::size_t removed = compiler::transitive_reduction(got);
        INFO("round " << round << ": " << n << " tasks, " << edges << " edges");
        REQUIRE(got == expected);
        CHECK(removed == edges - kept);
        // Grouped (as the sync pass groups tasks by kernel): any grouping
        // gives the same result; by layer, and at random.
        for (const bool by_layer : {true, false}) {
            std::vector<int> group(static_cast<std::size_t>(n));
            for (int t = 0; t < n; ++t) group[static_cast<std::size_t>(t)] = by_layer ? t / width : static_cast<int>(rng() % 7);
            auto grouped = preds;
            CHECK(compiler::transitive_reduction(grouped, &group) == edges - kept);
            REQUIRE(grouped == expected);
        }
    }
}

TEST_CASE("compile: 100 000 tasks in linear memory (the bitset reduction needed 1.25 GB)", "[compiler][limits][e2e]") {
    TempDir tmp;
    const std::string graph = relu_graph(tmp, 6250);
    const pid_t pid = ::fork();
    REQUIRE(pid >= 0);
    if (pid == 0) {
        const int fd = ::open(tmp.path("compile.log").c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
        ::dup2(fd, 1);
        ::dup2(fd, 2);
        ::execl(NPUSIM_BIN, NPUSIM_BIN, "compile", "--chip", kA2.c_str(), "--workload", graph.c_str(), "--emit-tasks",
                "/dev/null", (char*)nullptr);
        ::_exit(127);
    }
    int status = 0;
    rusage ru{};
    ::wait4(pid, &status, 0, &ru);
    const std::string said = slurp(tmp.path("compile.log"));
    INFO(said);
    REQUIRE(WIFEXITED(status));
    REQUIRE(WEXITSTATUS(status) == 0);
    CHECK_THAT(said, Contains("-> 100000 tasks"));
    // About 1.1 KB per task measured (docs/robustness.md); 400 MB leaves room
    // (1 GB with AddressSanitizer's quarantine), the bitsets took 1.27 GB.
#ifdef NPUSIM_TEST_ASAN
    CHECK(ru.ru_maxrss < 1000 * 1024);
#else
    CHECK(ru.ru_maxrss < 400 * 1024);
#endif
}

TEST_CASE("memory: a compile, a stream or a bench too large for the machine is refused before it allocates",
          "[limits][memory][e2e]") {
    TempDir tmp;
    const std::string graph = relu_graph(tmp, 6250);
    const Result c = run_shell(tmp, "NPUSIM_MEMORY_AVAILABLE=50M \"$NPUSIM\" compile --chip " + quote(kA2) + " --workload " +
                                        quote(graph) + " --emit-tasks " + quote(tmp.path("x.jsonl")));
    SHOW(c);
    CHECK(c.code == 2);
    CHECK_THAT(c.err, Contains("compiling its 100000 tasks needs about 140 MB of memory") &&
                          Contains("52 MB available (NPUSIM_MEMORY_AVAILABLE)") && Contains("--set workload.batch="));
    CHECK_FALSE(fs::exists(tmp.path("x.jsonl")));

    const Result s = run_shell(tmp, "NPUSIM_MEMORY_AVAILABLE=10K \"$NPUSIM\" run --chip " + quote(kAx300) + " --workload " +
                                        quote(kConvTile) + " -q");
    SHOW(s);
    CHECK(s.code == 2);
    CHECK_THAT(s.err, Contains("convbnrelu_tile.jsonl: 64 lines of tasks needs about 41 KB") && Contains("shorter"));

    const Result b = run_shell(tmp, "NPUSIM_MEMORY_AVAILABLE=100M \"$NPUSIM\" bench --chip " + quote(kA2) + " --tasks 1000000");
    SHOW(b);
    CHECK(b.code == 2);
    CHECK_THAT(b.err, Contains("1000000 tasks needs about 640 MB") && Contains("smaller --tasks"));
}

TEST_CASE("memory: a run on several ranks counts its dies and the DataBlocks landing over the mesh before it starts",
          "[slow][limits][memory][e2e][system]") {
    TempDir tmp;
    const std::string super = kSrc + "/configs/chips/a3-supernode.json";
    // A 2 GiB ring allreduce on 8 ranks peaks at 1.77 GB, nearly all of it the
    // functional memory's pages of landed blocks; its 16136 tasks alone are 10 MB.
    const Result a = run_shell(tmp, "NPUSIM_MEMORY_AVAILABLE=300M \"$NPUSIM\" run --chip " + quote(super) + " --workload " +
                                        quote(kSrc + "/models/collective_allreduce.json") +
                                        " --set chip.interconnect.ranks=8 --set workload.bytes=2147483648 -q");
    SHOW(a);
    CHECK(a.code == 2);
    CHECK_THAT(a.err, Contains("simulating 16136 tasks on 8 ranks with 932176 pages of DataBlocks landing over the mesh "
                               "needs about 1.8 GB of memory") &&
                          Contains("fewer ranks (--set chip.interconnect.ranks=N)"));
    // 288 dies of 24 AIC + 48 AIV each cost more than their 1 MiB allreduce's tasks.
    const Result d = run_shell(tmp, "NPUSIM_MEMORY_AVAILABLE=500M \"$NPUSIM\" run --chip " + quote(super) + " --workload " +
                                        quote(kSrc + "/models/collective_allreduce.json") + " --set workload.bytes=1048576 -q");
    SHOW(d);
    CHECK(d.code == 2);
    CHECK_THAT(d.err, Contains("on 288 ranks") && Contains("needs about 935 MB"));
    // Fits: the same allreduce at 8 ranks runs.
    const Result ok = run_shell(tmp, "NPUSIM_MEMORY_AVAILABLE=300M \"$NPUSIM\" run --chip " + quote(super) + " --workload " +
                                         quote(kSrc + "/models/collective_allreduce.json") +
                                         " --set chip.interconnect.ranks=8 --set workload.bytes=1048576 -q");
    SHOW(ok);
    CHECK(ok.code == 0);
    // 288 dies running one compiled decode program hold its stream once and
    // their own per-task state each: 4 layers peak at 0.93-0.97 GB (3.1 GB if every
    // rank were counted a stream of its own).
    const Result llm = run_shell(tmp, "NPUSIM_MEMORY_AVAILABLE=100M \"$NPUSIM\" run --chip " + quote(super) +
                                          " --workload " + quote(kSrc + "/models/llm/deepseek_v3.json") +
                                          " --set workload.layers=4 -q");
    SHOW(llm);
    CHECK(llm.code == 2);
    CHECK_THAT(llm.err, Contains("simulating 3567168 tasks on 288 ranks") && Contains("needs about 1.0 GB"));
}

// The emitted stream holds every rank's copy of the program the ranks share
// (16 ranks x 3270 tasks): refused before the copies are made.
TEST_CASE("memory: compile --emit-tasks on several ranks counts every rank's copy before writing",
          "[limits][memory][e2e]") {
    TempDir tmp;
    const std::string super = kSrc + "/configs/chips/a3-supernode.json";
    const Result emit = run_shell(tmp, "NPUSIM_MEMORY_AVAILABLE=50M \"$NPUSIM\" compile -q --chip " + quote(super) +
                                           " --workload " + quote(kSrc + "/models/llm/deepseek_v3.json") +
                                           " --set workload.layers=1 --set chip.interconnect.ranks=16 --emit-tasks " +
                                           quote(tmp.path("d.jsonl")));
    SHOW(emit);
    CHECK(emit.code == 2);
    CHECK_THAT(emit.err, Contains("writing the stream of 16 ranks (52320 tasks) needs about 105 MB") &&
                             Contains("--set workload.layers=N"));
    CHECK_FALSE(fs::exists(tmp.path("d.jsonl")));
}

// A 64 MiB allreduce on 288 ranks writes a task stream of tens of GB: it is
// refused while the stream is being written, before it fills the machine
// (the check on the finished stream would come too late).
TEST_CASE("memory: a collective too large for the machine is refused while its stream is written", "[limits][memory][e2e]") {
    TempDir tmp;
    const Result r = run_shell(tmp, "ulimit -v 2000000; NPUSIM_MEMORY_AVAILABLE=100M \"$NPUSIM\" run --chip " +
                                        quote(kSrc + "/configs/chips/a3-supernode.json") + " --workload " +
                                        quote(kSrc + "/models/collective_allreduce.json") + " -q");
    SHOW(r);
    CHECK(r.code == 2);
    CHECK_THAT(r.err, Contains("models/collective_allreduce.json: allreduce of 67108864 B on 288 ranks: its task stream") &&
                          Contains("but this machine has 105 MB available") && Contains("fewer bytes"));
}

#ifndef NPUSIM_TEST_ASAN  // see NPUSIM_TEST_ASAN above
TEST_CASE("memory: running out anyway is one line naming the phase, exit 2", "[limits][memory][e2e]") {
    TempDir tmp;
    const std::string graph = relu_graph(tmp, 6250);  // ~140 MB to compile
    const Result r = run_shell(tmp, "ulimit -v 90000; \"$NPUSIM\" compile --chip " + quote(kA2) + " --workload " +
                                        quote(graph) + " --emit-tasks /dev/null -q");
    SHOW(r);
    CHECK(r.code == 2);
    CHECK_THAT(r.err, Contains("npusim: error: out of memory while compiling " + graph));
    CHECK_THAT(r.err, !Contains("internal error"));
}
#endif

TEST_CASE("outputs: a full device or a file size limit is exit 2 with the OS reason, no partial file, no temporary",
          "[limits][outputs][e2e]") {
    TempDir tmp;
    // /dev/full: every write fails with ENOSPC, as on a full disk.
    const Result full = run_npusim(tmp, {"run", "--chip", kAx300, "--workload", kConvTile, "--stats", "/dev/full", "-q"});
    SHOW(full);
    CHECK(full.code == 2);
    CHECK_THAT(full.err, Contains("/dev/full: No space left on device"));
    const Result emit = run_npusim(tmp, {"compile", "--chip", kAx300, "--workload", kConv, "--emit-tasks", "/dev/full", "-q"});
    SHOW(emit);
    CHECK(emit.code == 2);
    CHECK_THAT(emit.err, Contains("/dev/full: No space left on device"));
    const Result junit = run_npusim(tmp, {"check", kSrc + "/traces/golden/convbnrelu_op_ax300.json", "--junit", "/dev/full"});
    SHOW(junit);
    CHECK(junit.code == 2);
    CHECK_THAT(junit.err, Contains("/dev/full: No space left on device"));
    const Result graph = run_npusim(tmp, {"import", kSrc + "/models/onnx/residual_block.onnx", "--out", "/dev/full", "-q"});
    SHOW(graph);
    CHECK(graph.code == 2);
    CHECK_THAT(graph.err, Contains("/dev/full: No space left on device"));

    // A 1 KiB file size limit (ulimit -f) makes every larger write fail
    // with EFBIG, root or not: each output is refused and leaves nothing.
    const std::string out = tmp.path("out");
    fs::create_directories(out);
    tmp.write("out/stats.json", "previous result\n");
    const auto limited = [&](const std::string& args) {
        return run_shell(tmp, "ulimit -f 1; \"$NPUSIM\" " + args);
    };
    const Result stats = limited("run --chip " + quote(kAx300) + " --workload " + quote(kConvTile) + " --stats " +
                                 quote(out + "/stats.json") + " -q");
    SHOW(stats);
    CHECK(stats.code == 2);
    CHECK_THAT(stats.err, Contains(out + "/stats.json: File too large"));
    CHECK(slurp(out + "/stats.json") == "previous result\n");  // the old file stands, whole
    const Result trace = limited("run --chip " + quote(kAx300) + " --workload " + quote(kConvTile) + " --trace " +
                                 quote(out + "/trace.json") + " -q");
    SHOW(trace);
    CHECK(trace.code == 2);
    CHECK_THAT(trace.err, Contains(out + "/trace.json: File too large"));
    CHECK_FALSE(fs::exists(out + "/trace.json"));
    const Result tasks = limited("compile --chip " + quote(kA2) + " --workload " + quote(kConv) + " --emit-tasks " +
                                 quote(out + "/tasks.jsonl") + " -q");
    SHOW(tasks);
    CHECK(tasks.code == 2);
    CHECK_THAT(tasks.err, Contains(out + "/tasks.jsonl: File too large"));
    CHECK_FALSE(fs::exists(out + "/tasks.jsonl"));
    const Result report = limited("run --chip " + quote(kAx300) + " --workload " + quote(kConvTile) + " --report " +
                                  quote(out + "/report.html") + " -q");
    SHOW(report);
    CHECK(report.code == 2);
    // (the report's timeline goes through a temporary trace first, which is
    // larger than the page and so meets the limit first)
    CHECK_THAT(report.err, Contains(": File too large"));
    CHECK_FALSE(fs::exists(out + "/report.html"));
    CHECK(stray_temporaries(out).empty());

    // Without the limit the same commands write whole files.
    const Result ok = run_npusim(tmp, {"run", "--chip", kAx300, "--workload", kConvTile, "--stats", out + "/stats.json", "-q"});
    SHOW(ok);
    REQUIRE(ok.code == 0);
    CHECK(read_json(out + "/stats.json").contains("total_cycles"));
    CHECK(stray_temporaries(out).empty());
}

TEST_CASE("sweep: a live sweep owns its folder, a second one is refused naming it, a stale lock is taken over",
          "[slow][sweep][limits][e2e]") {
    TempDir tmp;
    const std::string study = tmp.write("s.json", fmt::format(R"({{"chip": "{}", "workload": "{}",
 "axes": {{"chip.hbm.bandwidth_gbps": [400, 800, 1600, 3200], "chip.l2.bandwidth_gbps": [2500, 5000]}}}})",
                                                              kA2, kSrc + "/models/resnet50.json"));
    const std::string out = tmp.path("out");
    const pid_t pid = ::fork();
    REQUIRE(pid >= 0);
    if (pid == 0) {
        const int fd = ::open(tmp.path("first.log").c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
        ::dup2(fd, 1);
        ::dup2(fd, 2);
        ::execl(NPUSIM_BIN, NPUSIM_BIN, "sweep", study.c_str(), "--out", out.c_str(), "-j", "1", (char*)nullptr);
        ::_exit(127);
    }
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(60);
    while (std::chrono::steady_clock::now() < deadline && slurp(out + "/sweep.lock").find("pid=") == std::string::npos)
        std::this_thread::sleep_for(std::chrono::milliseconds(5));
    REQUIRE_THAT(slurp(out + "/sweep.lock"), Contains(fmt::format("pid={} ", pid)));
    for (const bool resume : {true, false}) {
        std::vector<std::string> args = {"sweep", study, "--out", out, "-j", "1"};
        if (resume) args.push_back("--resume");
        const Result second = run_npusim(tmp, args);
        SHOW(second);
        CHECK(second.code == 2);
        CHECK_THAT(second.err, Contains(out + ": the folder is in use by another sweep (pid " + std::to_string(pid) + " on host"));
    }
    int status = 0;
    ::waitpid(pid, &status, 0);
    INFO(slurp(tmp.path("first.log")));
    REQUIRE(WIFEXITED(status));
    CHECK(WEXITSTATUS(status) == 0);  // the first sweep was not disturbed
    CHECK(lines_of_count(out + "/results.jsonl") == 8);
    CHECK_FALSE(fs::exists(out + "/sweep.lock"));  // released on exit

    // A lock left by a sweep killed with -9 (its flock died with it).
    tmp.write("out/sweep.lock", "pid=999999999 host=elsewhere\n");
    const Result resumed = run_npusim(tmp, {"sweep", study, "--out", out, "--resume"});
    SHOW(resumed);
    CHECK(resumed.code == 0);
    CHECK_THAT(resumed.out, Contains("took over a stale lock of pid 999999999 on host elsewhere"));
    CHECK_FALSE(fs::exists(out + "/sweep.lock"));
}

TEST_CASE("stream: task lines written directly are byte for byte what nlohmann's dump() writes", "[tasks][limits]") {
    // Every task of two compiled models (all kernels, waits, signals,
    // regions, priorities), plus ids that need escaping.
    TempDir tmp;
    for (const auto& [chip, model] : {std::pair{kA2, kSrc + "/models/bert_layer.json"}, std::pair{kAx300, kConv}}) {
        const std::string out = tmp.path("s.jsonl");
        const Result r = run_npusim(tmp, {"compile", "--chip", chip, "--workload", model, "--emit-tasks", out, "-q"});
        SHOW(r);
        REQUIRE(r.code == 0);
        std::istringstream in(slurp(out));
        std::string line;
        std::size_t n = 0;
        while (std::getline(in, line)) {
            CHECK(nlohmann::json::parse(line).dump() == line);
            ++n;
        }
        CHECK(n > 20);
    }
    TaskStream ts;
    ts.streams = {"vec\"0"};
    ts.events = {EventDecl{"e\\1", 1, 0}, EventDecl{"caf\xc3\xa9\n", 2, 0}};
    Task t;
    t.id = "t\t1";
    t.kernel = Kernel::scalar;
    t.core_type = CoreType::scalar;
    t.params.cycles = 7;
    t.wait = {0};
    t.signal = {1};
    t.priority = -3;
    t.core = 2;
    t.op = ts.intern("op\x01");
    std::string line = task_line(ts, t);
    REQUIRE(line.back() == '\n');
    line.pop_back();
    CHECK(nlohmann::json::parse(line).dump() == line);
    t.kernel = Kernel::vector;
    t.core_type = CoreType::vector;
    t.params.cycles_per_repeat = 0.1;
    t.params.dtype = DType::int8;
    t.reads = {Region{Space::hbm, 512, 1024}};
    line = task_line(ts, t);
    line.pop_back();
    CHECK(nlohmann::json::parse(line).dump() == line);
    CHECK_THAT(line, Contains(R"("cycles_per_repeat":0.1)"));
}

// A run stopped by SIGTERM or SIGHUP (or SIGINT, where not ignored) while it
// writes --trace and --stats: the temporaries beside the targets go with it.
TEST_CASE("outputs: a run ended by a signal leaves no temporary beside its outputs", "[slow][limits][outputs][e2e]") {
    for (const int sig : {SIGTERM, SIGHUP, SIGINT}) {
        CAPTURE(sig);
        TempDir tmp;
        const std::string out = tmp.path("out");
        fs::create_directories(out);
        const std::string trace = out + "/trace.json", stats = out + "/stats.json";
        const pid_t pid = ::fork();
        REQUIRE(pid >= 0);
        if (pid == 0) {
            ::signal(SIGINT, SIG_DFL);  // as in a terminal (a background job would ignore it)
            const int fd = ::open(tmp.path("run.log").c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
            ::dup2(fd, 1);
            ::dup2(fd, 2);
            ::execl(NPUSIM_BIN, NPUSIM_BIN, "run", "--chip", (kSrc + "/configs/chips/a3-supernode.json").c_str(), "--workload",
                    (kSrc + "/models/llm/deepseek_v3.json").c_str(), "--set", "chip.interconnect.ranks=16", "--set",
                    "workload.layers=8", "--set", "workload.routing.redundant_experts=0", "--trace", trace.c_str(), "--stats",
                    stats.c_str(), "-q", (char*)nullptr);
            ::_exit(127);
        }
        // Until the trace is being written (the run is simulating).
        const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(60);
        while (std::chrono::steady_clock::now() < deadline && stray_temporaries(out).empty())
            std::this_thread::sleep_for(std::chrono::milliseconds(5));
        REQUIRE_FALSE(stray_temporaries(out).empty());
        ::kill(pid, sig);
        int status = 0;
        ::waitpid(pid, &status, 0);
        INFO(slurp(tmp.path("run.log")));
        REQUIRE(WIFSIGNALED(status));
        CHECK(WTERMSIG(status) == sig);  // it still dies of the signal
        CHECK(stray_temporaries(out).empty());
        CHECK_FALSE(fs::exists(trace));
    }
}
