// A large run keeps per-task records in several arrays of hundreds of MB
// (descriptors, timing, the scalar core's queues) plus many small heap
// blocks, and each event touches a few of them. With 4 KB pages the TLB
// misses cost about a quarter of the simulation time of a 1 M-task stream
// (`npusim bench`, same binary, interleaved runs: 1.23-2.11 s with 4 KB
// pages, 1.12-1.22 s with huge pages). glibc uses transparent huge pages for
// malloc only if the tunable glibc.malloc.hugetlb=1 is set when the process
// starts, so npusim re-executes itself once with it set. Results do not
// depend on it; only speed does.
//
// It does so from the executable's preinit array, which the dynamic loader
// runs before any library's constructors: the first process does not pay
// SystemC's and protobuf's static initialisation (about 10 ms) only to be
// replaced. Nothing there may need an initialised C++ runtime: plain
// POSIX calls only.
#include "cli/huge_pages.hpp"

#include <fcntl.h>
#include <sys/auxv.h>
#include <unistd.h>

#include <cstdlib>
#include <cstring>

namespace npusim::cli {

namespace {

constexpr const char* kTunable = "glibc.malloc.hugetlb=1";
constexpr const char* kTunables = "GLIBC_TUNABLES=";

// Whether the kernel gives transparent huge pages on request ("always" or
// "madvise" selected, not "never").
bool kernel_has_thp() {
    const int fd = ::open("/sys/kernel/mm/transparent_hugepage/enabled", O_RDONLY | O_CLOEXEC);
    if (fd < 0) return false;
    char mode[128] = {};
    const ssize_t n = ::read(fd, mode, sizeof mode - 1);
    ::close(fd);
    return n > 0 && std::strstr(mode, "[never]") == nullptr;
}

bool is_tunables(const char* entry) { return std::strncmp(entry, kTunables, std::strlen(kTunables)) == 0; }

// Re-executes with envp plus the tunable. envp is the loader's: before
// libc's constructors, getenv and setenv do not see the environment yet.
void reexec(char** argv, char** envp) {
    // Not under secure execution (glibc drops GLIBC_TUNABLES: every process
    // would re-execute) nor when started by ld.so by hand (AT_BASE 0: the
    // executable is the loader).
    if (!argv || !argv[0] || !envp || ::getauxval(AT_SECURE) != 0 || ::getauxval(AT_BASE) == 0) return;
    std::size_t n = 0, values = 0;  // entries, and bytes of the tunables set
    for (; envp[n]; ++n) {
        if (std::strncmp(envp[n], "NPUSIM_NO_HUGEPAGES=", 20) == 0) return;
        if (!is_tunables(envp[n])) continue;
        const char* v = envp[n] + std::strlen(kTunables);
        if (std::strstr(v, "glibc.malloc.hugetlb")) return;  // set already, by us or the user
        if (*v) values += std::strlen(v) + 1;
    }
    if (!kernel_has_thp()) return;
    // The file itself, not /proc/self/exe: the process keeps its name (ps, top).
    static char self[4096];
    const ssize_t len = ::readlink("/proc/self/exe", self, sizeof self);
    if (len <= 0 || static_cast<std::size_t>(len) >= sizeof self) return;  // none, or cut short
    self[len] = '\0';
    // One GLIBC_TUNABLES first: what the caller set (ld.so reads every such
    // entry), then ours; the rest of the environment as it was.
    char* value = static_cast<char*>(std::malloc(std::strlen(kTunables) + values + std::strlen(kTunable) + 1));
    char** env = static_cast<char**>(std::malloc((n + 2) * sizeof(char*)));
    if (value && env) {
        std::strcpy(value, kTunables);
        for (std::size_t i = 0; i < n; ++i)
            if (is_tunables(envp[i]) && envp[i][std::strlen(kTunables)] != '\0')
                std::strcat(std::strcat(value, envp[i] + std::strlen(kTunables)), ":");
        std::strcat(value, kTunable);
        std::size_t k = 0;
        env[k++] = value;
        for (std::size_t i = 0; i < n; ++i)
            if (!is_tunables(envp[i])) env[k++] = envp[i];
        env[k] = nullptr;
        ::execve(self, argv, env);
    }
    // Out of memory or exec refused: run on as we are, with normal pages.
    std::free(value);
    std::free(env);
}

void preinit(int, char** argv, char** envp) { reexec(argv, envp); }

}  // namespace

void reexec_with_huge_pages(char* argv[]) { reexec(argv, environ); }

}  // namespace npusim::cli

// Before any library's constructor (see above). main calls it again, for
// a loader that skips preinit arrays; after a re-execution it finds the
// tunable set and returns.
__attribute__((section(".preinit_array"), used)) static void (*const npusim_huge_pages_preinit)(int, char**, char**) =
    &npusim::cli::preinit;
