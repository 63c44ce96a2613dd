// SystemC tests of the die's WakeScheduler: the order actions run in, that
// SystemC time equals the model's, and how many kernel activations it takes.
// One sc_start per TEST_CASE (ctest runs each case in its own process).
#include <catch2/catch.hpp>

#include <cstdint>
#include <vector>

#include <systemc>

#include "engine/wake_scheduler.hpp"

using namespace npusim;

namespace {

struct Record {
    std::uint64_t now_ps;     // what modules see
    std::uint64_t kernel_ps;  // SystemC's own clock
    std::uint64_t action;
};

// Records every action; action 10 also posts 11 for now and 12 for 50 ps on.
struct Recorder : Wakeable {
    WakeScheduler& sched;
    std::vector<Record> seen;
    explicit Recorder(WakeScheduler& s) : sched(s) {}
    void wake(std::uint64_t action) override {
        seen.push_back({now_ps(), sc_core::sc_time_stamp().value(), action});
        if (action == 10) {
            sched.at(now_ps(), *this, 11);
            sched.at(now_ps() + 50, *this, 12);
        }
    }
};

// A SystemC process outside the scheduler that posts at 10 ps. A method,
// not a thread: a finished SC_THREAD's stack trips LeakSanitizer at exit.
struct LatePoster : sc_core::sc_module {
    WakeScheduler& sched;
    Recorder& rec;
    sc_core::sc_event ev;
    SC_HAS_PROCESS(LatePoster);
    LatePoster(sc_core::sc_module_name n, WakeScheduler& s, Recorder& r) : sc_core::sc_module(n), sched(s), rec(r) {
        SC_METHOD(run);
        sensitive << ev;
        dont_initialize();
        ev.notify(sc_core::sc_time::from_value(10));
    }
    void run() { sched.at(now_ps(), rec, 7); }
};

}  // namespace

TEST_CASE("wake scheduler: actions run at their time, same-time ones in post order, on SystemC's clock", "[scheduler]") {
    WakeScheduler sched("sched");
    Recorder rec(sched);
    sched.at(300, rec, 1);
    sched.at(100, rec, 2);
    sched.at(300, rec, 3);
    sched.at(200, rec, 4);
    sched.at(300, rec, 5);
    sc_core::sc_start();
    REQUIRE(rec.seen.size() == 5);
    const std::vector<std::uint64_t> order = {2, 4, 1, 3, 5};
    const std::vector<std::uint64_t> times = {100, 200, 300, 300, 300};
    for (std::size_t i = 0; i < 5; ++i) {
        CHECK(rec.seen[i].action == order[i]);
        CHECK(rec.seen[i].now_ps == times[i]);
        CHECK(rec.seen[i].kernel_ps == times[i]);
    }
    // Outside a run, now_ps() is SystemC's time again.
    CHECK(now_ps() == sc_core::sc_time_stamp().value());
}

TEST_CASE("wake scheduler: one activation per due time, and a post for now runs in the same one", "[scheduler]") {
    WakeScheduler sched("sched");
    Recorder rec(sched);
    sched.at(0, rec, 10);   // posts 11 at 0 and 12 at 50
    sched.at(50, rec, 20);  // same time as 12, posted earlier
    const std::uint64_t activations0 = sim_activations_total();
    sc_core::sc_start();
    REQUIRE(rec.seen.size() == 4);
    CHECK(rec.seen[0].action == 10);
    CHECK(rec.seen[1].action == 11);
    CHECK(rec.seen[1].now_ps == 0);
    CHECK(rec.seen[2].action == 20);
    CHECK(rec.seen[3].action == 12);
    CHECK(rec.seen[3].now_ps == 50);
    CHECK(sim_activations_total() - activations0 == 2);  // t = 0 and t = 50
}

TEST_CASE("wake scheduler: a post from another process preempts a later armed wake", "[scheduler]") {
    WakeScheduler sched("sched");
    Recorder rec(sched);
    LatePoster poster("poster", sched, rec);
    sched.at(1000, rec, 1);
    sc_core::sc_start();
    REQUIRE(rec.seen.size() == 2);
    CHECK(rec.seen[0].action == 7);
    CHECK(rec.seen[0].kernel_ps == 10);
    CHECK(rec.seen[1].action == 1);
    CHECK(rec.seen[1].kernel_ps == 1000);
}
