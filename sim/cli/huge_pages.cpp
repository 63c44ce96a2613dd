// A large run keeps per-task records in several arrays of hundreds of MB
// (descriptors, timing, the scalar core's queues) plus many small heap
// blocks, and each event touches a few of them. With 4 KB pages the TLB
// misses cost about a quarter of the simulation time of a 1 M-task stream
// (`npusim bench`, same binary, interleaved runs: 1.23-2.11 s with 4 KB
// pages, 1.12-1.22 s with huge pages). glibc uses transparent huge pages for
// malloc only if the tunable glibc.malloc.hugetlb=1 is set when the process
// starts, so npusim re-executes itself once with it set. Results do not
// depend on it; only speed does.
#include "cli/huge_pages.hpp"

#include <unistd.h>

#include <cstdlib>
#include <fstream>
#include <string>

namespace npusim::cli {

void reexec_with_huge_pages(char* argv[]) {
    if (std::getenv("NPUSIM_NO_HUGEPAGES")) return;
    const char* current = std::getenv("GLIBC_TUNABLES");
    std::string tunables = current ? current : "";
    if (tunables.find("glibc.malloc.hugetlb") != std::string::npos) return;  // set already, by us or the user
    std::ifstream thp("/sys/kernel/mm/transparent_hugepage/enabled");
    std::string mode;
    if (!std::getline(thp, mode) || mode.find("[never]") != std::string::npos) return;
    tunables += tunables.empty() ? "glibc.malloc.hugetlb=1" : ":glibc.malloc.hugetlb=1";
    setenv("GLIBC_TUNABLES", tunables.c_str(), 1);
    execv("/proc/self/exe", argv);
    // No /proc or exec refused: run on as we are, with normal pages.
}

}  // namespace npusim::cli
