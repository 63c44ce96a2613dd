// `./build/npusim_tests '[die]'` run directly: each selected test case runs in
// a process of its own, as under ctest, because SystemC cannot be started
// twice in one process (the second case would fail with E529).
//
// A Catch2 listener (main() is Catch2WithMain's): when a run selects more than
// one test case, the first process re-runs itself (/proc/self/exe) once per
// case with the same options and that case's exact name, then prints a
// one-line summary and exits with the children's verdict. A child (marked by
// NPUSIM_TESTS_CHILD) and a run of one case (every ctest test) run normally.
// --list-*, -h and the like never reach a listener. Where a re-run would not
// be faithful (-o: every child would overwrite the file; a name no test spec
// selects alone; options it cannot split), the run stays in one process,
// and a case failing with E529 gets a line saying what to do.

// The listener and reporter base classes are "external interfaces" to Catch.
#define CATCH_CONFIG_EXTERNAL_INTERFACES
#include <catch2/catch.hpp>

#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <iostream>
#include <iterator>
#include <optional>
#include <string>
#include <vector>

#include "support/catch_command_line.hpp"

extern char** environ;

namespace {

constexpr const char* kChildMark = "NPUSIM_TESTS_CHILD";

std::vector<std::string> own_command_line() {
    std::ifstream in("/proc/self/cmdline", std::ios::binary);
    const std::string all((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    std::vector<std::string> args;
    for (std::size_t at = 0; at < all.size();) {
        const std::size_t end = all.find('\0', at);
        args.push_back(all.substr(at, end - at));
        at = end == std::string::npos ? all.size() : end + 1;
    }
    return args;
}

// Exit status of `args` run as /proc/self/exe (128 + N if killed by signal N).
int run_child(const std::vector<std::string>& args) {
    std::vector<char*> argv;
    for (const auto& a : args) argv.push_back(const_cast<char*>(a.c_str()));
    argv.push_back(nullptr);
    std::cout.flush();
    std::fflush(nullptr);
    pid_t pid = 0;
    if (posix_spawn(&pid, "/proc/self/exe", nullptr, nullptr, argv.data(), environ) != 0) return 127;
    int status = 0;
    while (waitpid(pid, &status, 0) < 0) {}
    return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
}

struct OneProcessPerCase : Catch::TestEventListenerBase {
    using TestEventListenerBase::TestEventListenerBase;

    void testRunStarting(Catch::TestRunInfo const& info) override {
        TestEventListenerBase::testRunStarting(info);
        const char* mark = std::getenv(kChildMark);
        const std::optional<std::string> child_of = mark ? std::optional<std::string>(mark) : std::nullopt;
        unsetenv(kChildMark);  // what a child's tests start is a run of its own
        const auto& spec = m_config->testSpec();
        const auto& all = Catch::getAllTestCasesSorted(*m_config);
        const auto selected = Catch::filterTests(all, spec, *m_config);
        if (child_of) {
            // The mark holds the case the parent meant; anything else is a bug here.
            if (selected.size() == 1 && selected[0].name == *child_of) return;
            std::cerr << "npusim_tests: a child meant to run \"" << *child_of << "\" selected " << selected.size()
                      << " test cases\n";
            std::exit(3);
        }
        if (!spec.getInvalidArgs().empty()) return;  // Catch reports those
        for (const auto& match : spec.matchesByFilter(all, *m_config))
            if (match.tests.empty()) return;  // Catch reports a filter that matched nothing
        if (selected.size() < 2) return;
        const auto options = npusim::test::options_for_children(own_command_line());
        if (!options) return;

        std::vector<std::string> specs;
        for (const auto& tc : selected) {
            const auto exact = npusim::test::exact_test_spec(tc.name);
            if (!exact) return;
            const auto one = Catch::parseTestSpec(*exact);
            std::size_t matches = 0;
            for (const auto& other : all) matches += one.matches(other) ? 1 : 0;
            if (matches != 1 || !one.matches(tc)) return;
            specs.push_back(*exact);
        }

        std::vector<std::string> failed;
        std::size_t ran = 0;
        for (; ran < selected.size(); ++ran) {
            if (m_config->abortAfter() > 0 && static_cast<int>(failed.size()) >= m_config->abortAfter()) break;
            std::vector<std::string> args = *options;
            args.push_back(specs[ran]);
            setenv(kChildMark, selected[ran].name.c_str(), 1);
            if (run_child(args) != 0) failed.push_back(selected[ran].name);
        }
        unsetenv(kChildMark);
        std::cout << "npusim_tests: " << selected.size() << " test cases, each in its own process: ";
        if (failed.empty()) std::cout << "all passed";
        else std::cout << ran - failed.size() << " passed, " << failed.size() << " failed";
        if (ran < selected.size()) std::cout << ", " << selected.size() - ran << " not run (abort)";
        for (const auto& f : failed) std::cout << (&f == &failed.front() ? ": \"" : ", \"") << f << '"';
        std::cout << '\n';
        std::cout.flush();
        std::exit(failed.empty() ? 0 : static_cast<int>(std::min<std::size_t>(failed.size(), 255)));
    }

    // The run stayed in one process, and SystemC refused a second start.
    bool assertionEnded(Catch::AssertionStats const& stats) override {
        const auto& r = stats.assertionResult;
        if (!r.succeeded() && !hinted_ && r.getMessage().find("(E529)") != std::string::npos) {
            hinted_ = true;
            std::cerr << "npusim_tests: this test case needs its own process: run it through ctest "
                         "(ctest --test-dir build -R NAME) or select one test case\n";
        }
        return TestEventListenerBase::assertionEnded(stats);
    }

private:
    bool hinted_ = false;
};

}  // namespace

CATCH_REGISTER_LISTENER(OneProcessPerCase)
