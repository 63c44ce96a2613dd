// The test binary run directly re-runs itself once per selected test case
// (tests/one_process_per_case.cpp), so SystemC cases pass outside ctest too.
// These cases carry only [tests]; the tags they select never include them.
// TestSpec, to check the specs the parent writes, is an "external interface".
#define CATCH_CONFIG_EXTERNAL_INTERFACES
#include <catch2/catch.hpp>

#include <algorithm>
#include <sstream>
#include <set>
#include <string>
#include <vector>

#include "support/catch_command_line.hpp"
#include "support/e2e.hpp"

using namespace npusim::test;
using Catch::Matchers::Contains;

namespace {

Result run_tests_binary(const TempDir& tmp, const std::vector<std::string>& args) {
    return run_program(tmp, quote(NPUSIM_TESTS_BIN), args);
}

Catch::TestCaseInfo case_named(const std::string& name) {
    return Catch::TestCaseInfo(name, "", "", {}, Catch::SourceLineInfo(__FILE__, __LINE__));
}

std::size_t count(const std::string& text, const std::string& what) {
    std::size_t n = 0;
    for (auto at = text.find(what); at != std::string::npos; at = text.find(what, at + 1)) ++n;
    return n;
}

// Fixtures for the runs below, hidden ([.]) so that neither ctest nor a plain
// run picks them up. Each checks that it is the first case of its process.
int cases_in_this_process = 0;

}  // namespace

TEST_CASE("one process per case (fixture): fails on purpose", "[.one_process_fixture_fails]") {
    ++cases_in_this_process;
    FAIL("this fixture fails so that a parent's verdict can be seen to count it");
}
TEST_CASE(R"(one process per case (fixture): "quoted", [bracketed] ~ and a\backslash)", "[.one_process_fixture]") {
    CHECK(++cases_in_this_process == 1);
}
TEST_CASE("one process per case (fixture): a, b, c", "[.one_process_fixture]") { CHECK(++cases_in_this_process == 1); }
TEST_CASE("one process per case (fixture): a, b, c, d", "[.one_process_fixture]") { CHECK(++cases_in_this_process == 1); }

TEST_CASE("test binary: run directly on a tag, each SystemC case runs in its own process and passes", "[tests]") {
    TempDir tmp;
    // [deadlock]: two die cases, each starting SystemC.
    const Result r = run_tests_binary(tmp, {"[deadlock]"});
    SHOW(r);
    CHECK(r.code == 0);
    CHECK(count(r.out, "All tests passed") == 2);
    CHECK(count(r.out, "in 1 test case)") == 2);
    CHECK_THAT(r.out, Contains("npusim_tests: 2 test cases, each in its own process: all passed"));
    CHECK_THAT(r.out + r.err, !Contains("E529"));
}

TEST_CASE("test binary: names with quotes, brackets, commas and backslashes each select only their own case", "[tests]") {
    TempDir tmp;
    const Result r = run_tests_binary(tmp, {"[one_process_fixture]", "-r", "compact"});
    SHOW(r);
    CHECK(r.code == 0);
    CHECK(count(r.out, "Passed 1 test case with 1 assertion.") == 3);
    CHECK_THAT(r.out, Contains("npusim_tests: 3 test cases, each in its own process: all passed"));

    // A failing child fails the run and is named; the others still run.
    const Result f = run_tests_binary(tmp, {"[one_process_fixture],[one_process_fixture_fails]"});
    SHOW(f);
    CHECK(f.code == 1);
    CHECK_THAT(f.out, Contains("npusim_tests: 4 test cases, each in its own process: 3 passed, 1 failed: "
                               "\"one process per case (fixture): fails on purpose\""));
    // --abort: no case runs after the first failure (the failing one is declared first).
    const Result a = run_tests_binary(tmp, {"[one_process_fixture],[one_process_fixture_fails]", "-a"});
    SHOW(a);
    CHECK(a.code == 1);
    CHECK_THAT(a.out, Contains("0 passed, 1 failed, 3 not run (abort)"));
}

TEST_CASE("test binary: one selected case, as ctest runs it, stays in the process", "[tests]") {
    TempDir tmp;
    const Result r = run_tests_binary(tmp, {"one process per case (fixture): a\\, b\\, c", "-w", "NoTests"});
    SHOW(r);
    CHECK(r.code == 0);
    CHECK_THAT(r.out, Contains("All tests passed (1 assertion in 1 test case)"));
    CHECK_THAT(r.out, !Contains("each in its own process"));
}

TEST_CASE("test binary: where children cannot write what was asked (-o), the run stays in one process and says why E529", "[tests]") {
    TempDir tmp;
    const std::string report = tmp.path("report.txt");
    const Result r = run_tests_binary(tmp, {"[deadlock]", "-o", report});
    SHOW(r);
    CHECK(r.code != 0);
    CHECK_THAT(slurp(report), Contains("E529"));
    CHECK_THAT(r.err, Contains("npusim_tests: this test case needs its own process: run it through ctest "
                               "(ctest --test-dir build -R NAME) or select one test case"));
}

TEST_CASE("test binary: an exact test spec matches its name and nothing longer, shorter or different", "[tests]") {
    for (const std::string name : {"plain", "a, b", "x [y] z", "[leading] bracket", "~tilde first", "say \"hi\", twice",
                                   "back\\slash\\", "mid*dle", "  leading spaces"}) {
        INFO(name);
        const auto spec = exact_test_spec(name);
        REQUIRE(spec);
        const Catch::TestSpec ts = Catch::parseTestSpec(*spec);
        CHECK(ts.getInvalidArgs().empty());
        CHECK(ts.matches(case_named(name)));
        CHECK(!ts.matches(case_named(name + "x")));
        CHECK(!ts.matches(case_named("x" + name)));
        CHECK(!ts.matches(case_named(name.substr(0, name.size() - 2))));
    }
    // No spec names these exactly: a leading or trailing * is a wildcard,
    // "exclude:" an exclusion.
    for (const std::string name : {"star*", "*star", "exclude:this", ""}) CHECK(!exact_test_spec(name));
}

TEST_CASE("test binary: a child's options are the parent's without its test specs", "[tests]") {
    using V = std::vector<std::string>;
    CHECK(options_for_children({"t", "[die]", "-r", "compact", "-s"}) == V{"t", "-r", "compact", "-s"});
    CHECK(options_for_children({"t", "-d", "yes", "[a]", "--reporter=xml", "b", "-#"}) ==
          V{"t", "-d", "yes", "--reporter=xml", "-#"});
    CHECK(options_for_children({"t", "-sw", "NoTests", "x"}) == V{"t", "-sw", "NoTests"});
    CHECK(options_for_children({"t", "-f", "names.txt", "-c", "a section", "--wait-for-keypress", "exit"}) ==
          V{"t", "-c", "a section"});
    CHECK(!options_for_children({"t", "[die]", "-o", "out.xml"}));
    CHECK(!options_for_children({"t", "--out=out.xml"}));
    CHECK(!options_for_children({"t", "-so", "out.xml"}));
    CHECK(!options_for_children({"t", "-r"}));
}

TEST_CASE("test binary: the options known to take a value are those -h shows with one", "[tests]") {
    TempDir tmp;
    const Result h = run_tests_binary(tmp, {"-h"});
    SHOW(h);
    REQUIRE(h.code == 0);
    // Two columns, "  -r, --reporter <name>   reporter to use (defaults to"; a
    // long left column wraps onto the next lines. The descriptions start where
    // that of -h does.
    const std::size_t column = h.out.find("display usage") - h.out.rfind('\n', h.out.find("display usage")) - 1;
    std::vector<std::string> entries;
    std::istringstream in(h.out);
    for (std::string l; std::getline(in, l);) {
        std::string left = l.substr(0, std::min(column, l.size()));
        left.erase(0, left.find_first_not_of(' '));
        left.erase(left.find_last_not_of(' ') + 1);
        if (left.empty()) continue;
        if (left[0] == '-') entries.push_back(left);
        else if (!entries.empty()) entries.back() += " " + left;
    }
    std::set<std::string> shown;
    for (const auto& e : entries) {
        const auto hint = e.find(" <");
        if (hint == std::string::npos) continue;
        const std::string names = e.substr(0, hint);
        for (std::size_t at = 0; at <= names.size();) {
            const std::size_t end = std::min(names.find(", ", at), names.size());
            shown.insert(names.substr(at, end - at));
            at = end + 2;
        }
    }
    CHECK(shown.count("--reporter"));
    CHECK(shown == catch_options_with_value());
}
