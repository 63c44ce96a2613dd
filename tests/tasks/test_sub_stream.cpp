// A part of a task stream on its own: what the rest would signal is given.
#include <catch2/catch.hpp>

#include <sstream>
#include <stdexcept>

#include "tasks/stream_reader.hpp"
#include "tasks/sub_stream.hpp"

using namespace npusim;

namespace {

// a signals e1 and e2; c signals e2; b waits for e1 and for e2 (count 2).
TaskStream three_tasks() {
    std::istringstream in(R"({"event": "e2", "count": 2}
{"id": "a", "core_type": "vector", "kernel": "vector", "stream": "s0", "wait": [], "signal": ["e1", "e2"], "params": {"bytes": 4096}}
{"id": "b", "core_type": "vector", "kernel": "vector", "stream": "s1", "wait": ["e1", "e2"], "signal": [], "params": {"bytes": 4096}}
{"id": "c", "core_type": "vector", "kernel": "vector", "stream": "s2", "wait": [], "signal": ["e2"], "params": {"bytes": 4096}}
)");
    return parse_task_stream(in, "three.jsonl");
}

}  // namespace

TEST_CASE("sub_stream: signals from the tasks left out count as given", "[tasks][sub_stream]") {
    const TaskStream s = three_tasks();
    REQUIRE(s.tasks.size() == 3);

    SECTION("b alone waits for nothing") {
        const TaskStream b = sub_stream(s, {1});
        REQUIRE(b.tasks.size() == 1);
        CHECK(b.tasks[0].id == "b");
        CHECK(b.tasks[0].wait.empty());
        CHECK(b.events.empty());
    }
    SECTION("b with c waits for c's signal of e2 only") {
        const TaskStream bc = sub_stream(s, {1, 2});
        REQUIRE(bc.events.size() == 1);
        CHECK(bc.events[0].id == "e2");
        CHECK(bc.events[0].count == 1);
        REQUIRE(bc.tasks[0].wait.size() == 1);
        CHECK(bc.tasks[0].wait[0] == 0);
        REQUIRE(bc.tasks[1].signal.size() == 1);
        CHECK(bc.tasks[1].signal[0] == 0);
        CHECK(bc.tasks[1].stream == s.tasks[2].stream);
    }
    SECTION("the whole stream keeps every event and count") {
        const TaskStream all = sub_stream(s, {0, 1, 2});
        REQUIRE(all.events.size() == s.events.size());
        for (std::size_t e = 0; e < s.events.size(); ++e) CHECK(all.events[e].count == s.events[e].count);
    }
}

TEST_CASE("sub_stream: a stream across ranks, or tasks out of order, is refused", "[tasks][sub_stream]") {
    TaskStream s = three_tasks();
    CHECK_THROWS_AS(sub_stream(s, {2, 1}), std::invalid_argument);
    CHECK_THROWS_AS(sub_stream(s, {1, 1}), std::invalid_argument);
    CHECK_THROWS_AS(sub_stream(s, {3}), std::out_of_range);
    s.cross_rank = true;
    CHECK_THROWS_AS(sub_stream(s, {0}), std::invalid_argument);
}
