#include "study/child_process.hpp"

#include <time.h>

#include <fcntl.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <csignal>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <ostream>

#include "common/errors.hpp"

namespace npusim::study {

namespace {

volatile std::sig_atomic_t g_interrupted = 0;

extern "C" void on_interrupt(int) { g_interrupted = 1; }

void write_all(int fd, const std::string& s) {
    std::size_t done = 0;
    while (done < s.size()) {
        const ssize_t n = ::write(fd, s.data() + done, s.size() - done);
        if (n <= 0) return;
        done += static_cast<std::size_t>(n);
    }
}

}  // namespace

pid_t spawn_process(const std::vector<std::string>& argv, const std::string& log_file) {
    std::vector<char*> cargv;
    for (const auto& a : argv) cargv.push_back(const_cast<char*>(a.c_str()));
    cargv.push_back(nullptr);
    const pid_t parent = ::getpid();
    const int log = ::open(log_file.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
    if (log < 0) throw InputError(log_file + ": cannot create log file: " + std::strerror(errno));
    const pid_t pid = ::fork();
    if (pid < 0) {
        ::close(log);
        throw InputError(std::string("cannot start a process: ") + std::strerror(errno));
    }
    if (pid == 0) {
        // Child: only async-signal-safe calls until exec.
        ::prctl(PR_SET_PDEATHSIG, SIGTERM);
        if (::getppid() != parent) ::_exit(143);  // the parent died before prctl
        ::signal(SIGINT, SIG_DFL);
        ::signal(SIGTERM, SIG_DFL);
        const int null_in = ::open("/dev/null", O_RDONLY);
        if (null_in >= 0) ::dup2(null_in, 0);
        ::dup2(log, 1);
        ::dup2(log, 2);
        ::execvp(cargv[0], cargv.data());
        const std::string msg = std::string("npusim: error: cannot run ") + argv[0] + ": " + std::strerror(errno) + "\n";
        write_all(2, msg);
        ::_exit(127);
    }
    ::close(log);
    return pid;
}

int exit_code_of(int status) {
    if (WIFEXITED(status)) return WEXITSTATUS(status);
    if (WIFSIGNALED(status)) return 128 + WTERMSIG(status);
    return -1;
}

int wait_process(pid_t pid) {
    int status = 0;
    while (::waitpid(pid, &status, 0) < 0) {
        if (errno != EINTR) return -1;
    }
    return exit_code_of(status);
}

int run_process(const std::vector<std::string>& argv, const std::string& log_file) {
    return wait_process(spawn_process(argv, log_file));
}

std::string self_executable(const std::string& fallback) {
    std::error_code ec;
    const auto p = std::filesystem::read_symlink("/proc/self/exe", ec);
    if (!ec && !p.empty()) return p.string();
    return std::filesystem::absolute(fallback, ec).string();
}

void forward_progress_lines(const std::string& log_file, std::streamoff& offset, const std::string& prefix,
                            std::ostream& out) {
    std::ifstream in(log_file);
    in.seekg(offset);
    std::string line;
    while (std::getline(in, line) && !in.eof()) {
        offset = in.tellg();
        if (line.rfind("npusim: ", 0) == 0 && line.find(" tasks done on ") != std::string::npos)
            out << prefix << line.substr(8) << '\n' << std::flush;
    }
}

bool interrupted() { return g_interrupted != 0; }

void install_interrupt_handlers() {
    struct sigaction sa {};
    sa.sa_handler = on_interrupt;
    sigemptyset(&sa.sa_mask);
    sa.sa_flags = 0;  // no SA_RESTART: a blocking wait returns EINTR
    ::sigaction(SIGINT, &sa, nullptr);
    ::sigaction(SIGTERM, &sa, nullptr);
}

void nap_ms(long ms) {
    timespec ts{ms / 1000, (ms % 1000) * 1000000L};
    ::nanosleep(&ts, nullptr);
}

}  // namespace npusim::study
