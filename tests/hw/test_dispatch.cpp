// Dispatch (docs/design.md, Timing model: dispatch): the scalar core feeds
// each Cube/Vector core's own task queue, paying dispatch_cycles per task
// serially, while the cores run; every task pays task_start_cycles on its
// core. So finer tiles cost more than coarse ones of the same bytes, the
// start cost key moves that, a queue hides dispatch behind a busy core, and a
// die with more cores than one scalar core can feed is dispatch-bound.
//
// Expectations are derived from the parameters (counts x cycles); no
// observed cycle count is hard-coded.
#include <catch2/catch.hpp>

#include <sstream>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "support/e2e.hpp"

using namespace npusim;
using namespace npusim::test;
using json = nlohmann::json;

namespace {

const std::string kSrc = NPUSIM_SOURCE_DIR;
const std::string kA2 = kSrc + "/configs/chips/a2.json";

// A vector op on data resident in UB (V pipe only), optionally pinned.
json ub_vector(const std::string& id, const std::string& stream, std::uint64_t bytes, int core = -1) {
    json j{{"id", id},       {"core_type", "vector"}, {"kernel", "vector"}, {"stream", stream},
           {"wait", json::array()}, {"signal", json::array()},
           {"params", {{"bytes", bytes}, {"cycles_per_repeat", 1}, {"src", "ub"}, {"dst", "ub"}}}};
    if (core >= 0) j["core"] = core;
    return j;
}

// `tasks` UB vector tasks of `bytes` each, spread over `streams` streams.
std::string stream_of(int tasks, std::uint64_t bytes, int streams, bool pin = false) {
    std::string s;
    for (int i = 0; i < tasks; ++i)
        s += ub_vector("v" + std::to_string(i), "s" + std::to_string(i % streams), bytes, pin ? i % streams : -1).dump() + "\n";
    return s;
}

// Each run in its own process (SystemC cannot restart in one).
double total_cycles(const std::string& stream_text, const std::vector<std::string>& sets) {
    static int count = 0;
    TempDir tmp;
    const std::string stream = tmp.write("s" + std::to_string(count++) + ".jsonl", stream_text);
    return run_for_stats(tmp, kA2, stream, sets).at("total_cycles").get<double>();
}

}  // namespace

TEST_CASE("dispatch: many tiny tasks cost more than a few large ones of the same bytes, by the start cost per task",
          "[dispatch]") {
    // 48 vector cores; 2400 tasks of 2 KB vs 48 of 100 KB (50 tasks per core
    // vs one). 48 scalar cores so dispatch (32 cycles / 48 a task) stays below a
    // tiny task's time on its core and the start cost shows.
    const int cores = 48, fine = 2400, coarse = 48;
    const std::uint64_t bytes = 2048;
    const std::string fine_s = stream_of(fine, bytes, cores), coarse_s = stream_of(coarse, bytes * 50, cores);
    const std::vector<std::string> base = {"chip.cores.scalar.count=48"};
    auto with_start = [&](int start) {
        auto v = base;
        v.push_back("chip.cores.vector.task_start_cycles=" + std::to_string(start));
        return v;
    };
    const double fine64 = total_cycles(fine_s, with_start(64)), coarse64 = total_cycles(coarse_s, with_start(64));
    const double fine320 = total_cycles(fine_s, with_start(320)), coarse320 = total_cycles(coarse_s, with_start(320));
    INFO("fine " << fine64 << " -> " << fine320 << ", coarse " << coarse64 << " -> " << coarse320);
    CHECK(fine64 > coarse64);
    // Raising the start cost by 256 cycles adds about 50 x 256 per core to
    // the fine stream and about 256 to the coarse one.
    const double per_core = static_cast<double>(fine) / cores;
    CHECK(fine320 - fine64 == Approx(per_core * 256).epsilon(0.25));
    CHECK(coarse320 - coarse64 == Approx(256).margin(64));
}

TEST_CASE("dispatch: a core's task queue hides dispatch behind the task it runs", "[dispatch]") {
    // One pinned stream of 200 tasks on one core, each longer than dispatch:
    // with a queue the scalar core dispatches the next task while the core
    // runs, so dispatch is paid once; without one, once per task.
    const int tasks = 200;
    const std::string s = stream_of(tasks, 64 * 1024, 1, true);
    const double queued = total_cycles(s, {"chip.cores.scalar.queue_depth=2"});
    const double unqueued = total_cycles(s, {"chip.cores.scalar.queue_depth=0"});
    INFO("queue depth 2: " << queued << ", 0: " << unqueued);
    const double dispatch = 32;  // a2's dispatch_cycles
    CHECK(unqueued - queued == Approx((tasks - 1) * dispatch).epsilon(0.05));
}

TEST_CASE("dispatch: one scalar core cannot feed 48 vector cores tiny tasks, and more scalar cores can", "[dispatch]") {
    // 4800 tasks of 2 KB: on its core each takes start + 8 repeats, well under
    // 48 x 32 cycles, so one scalar core (32 cycles a task) sets the pace.
    const int tasks = 4800;
    const std::string s = stream_of(tasks, 2048, 48);
    const double one = total_cycles(s, {"chip.cores.scalar.count=1"});
    const double two = total_cycles(s, {"chip.cores.scalar.count=2"});
    INFO("1 scalar core: " << one << ", 2: " << two);
    CHECK(one == Approx(tasks * 32.0).epsilon(0.05));
    CHECK(two == Approx(one / 2).epsilon(0.1));
    // Dispatch cost itself moves it the same way.
    const double cheap = total_cycles(s, {"chip.cores.scalar.dispatch_cycles=16"});
    CHECK(cheap == Approx(one / 2).epsilon(0.1));
}

TEST_CASE("dispatch: an unpinned task waits for the first core to go idle, not behind a busy one", "[dispatch]") {
    // Two vector cores, three unpinned streams: a long task A and two short
    // ones B, C (a tenth of A each). A and B start at once; C is ready too.
    // Bound early to a queue it would wait behind A (A + C); taken by the
    // first idle core it runs after B on B's core, inside A's time.
    const std::uint64_t big = 160 * 1024, small = 16 * 1024;  // resident in UB (192 KB)
    const std::string abc = ub_vector("a", "sa", big).dump() + "\n" + ub_vector("b", "sb", small).dump() + "\n" +
                            ub_vector("c", "sc", small).dump() + "\n";
    const std::string a_alone = ub_vector("a", "sa", big).dump() + "\n";
    const std::vector<std::string> two = {"chip.cores.vector.count=2"};
    const double both = total_cycles(abc, two), alone = total_cycles(a_alone, two);
    INFO("A, B and C: " << both << " cycles; A alone: " << alone);
    CHECK(both < alone * 1.02);
    // The queue depth changes nothing for unpinned tasks.
    auto deep = two;
    deep.push_back("chip.cores.scalar.queue_depth=4");
    CHECK(total_cycles(abc, deep) == both);
}
