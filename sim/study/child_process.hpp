// Child processes of a sweep or a check: every point is one `npusim run` in
// its own process (SystemC cannot restart within one process).
#pragma once
#include <sys/types.h>

#include <iosfwd>
#include <string>
#include <vector>

namespace npusim::study {

// Starts argv[0] (searched in PATH when it has no slash) with argv, stdin
// from /dev/null and stdout and stderr into `log_file` (truncated). The
// child gets SIGTERM if this process dies, so a killed sweep leaves no
// orphans. Throws InputError when fork fails; a program that cannot be
// executed exits 127 with the reason in the log.
pid_t spawn_process(const std::vector<std::string>& argv, const std::string& log_file);

// The exit code of a waitpid status: its exit status, or 128 + signal.
int exit_code_of(int wait_status);

// Waits for a child spawn_process started; returns its exit code (-1 when
// it cannot be waited for).
int wait_process(pid_t pid);

// spawn_process, then wait; returns the exit code.
int run_process(const std::vector<std::string>& argv, const std::string& log_file);

// Absolute path of the running executable (/proc/self/exe), or `fallback`.
std::string self_executable(const std::string& fallback = "npusim");

// Writes to `out` the progress lines ("npusim: ... tasks done on ...", see
// system/run_progress.hpp) of a child's log that follow byte `offset`, each
// after `prefix` instead of "npusim: ", and moves `offset` past the last
// whole line read (a line still being written is read next time).
void forward_progress_lines(const std::string& log_file, std::streamoff& offset, const std::string& prefix,
                            std::ostream& out);

// Sleeps `ms` milliseconds; a signal (EINTR) just ends the nap early.
void nap_ms(long ms);

// Set by SIGINT / SIGTERM once install_interrupt_handlers() ran; long loops
// poll it, stop their children and exit.
bool interrupted();
void install_interrupt_handlers();

}  // namespace npusim::study
