// Memory as an input limit (the section of that name in docs/robustness.md): before a stream
// is read or built, or a graph compiled, its memory is estimated from the
// task count and compared with what the machine has available, so a run
// too large for the machine is refused with a line saying what, how much,
// how much there is and what shrinks it (InputError, exit 2) instead of
// ending in std::bad_alloc or the OOM killer.
#pragma once
#include <cstdint>
#include <string>

namespace npusim {

// Measured peak bytes per task (docs/robustness.md has the runs): a task
// stream held for simulation (the die's per-task state included), and a
// compile (tiles, sync plan and the stream's round trip).
constexpr std::uint64_t kStreamBytesPerTask = 640;
constexpr std::uint64_t kCompileBytesPerTask = 1400;
// `compile --emit-tasks` on several ranks, per task of all ranks' copies
// (the whole process's peak): 1 988 and 1 755 B measured for a DeepSeek-V3
// prefill at 2 and 4 layers on 32 dies, 1 197 B for its decode at 2 layers
// on 288 dies.
constexpr std::uint64_t kEmitBytesPerTask = 2000;

// MemAvailable of /proc/meminfo, or the environment variable
// NPUSIM_MEMORY_AVAILABLE (bytes, or with a K/M/G suffix) when set, which
// tests use to stand for a smaller machine. 0 when unknown (no check).
std::uint64_t available_memory_bytes();

// "1.5 GB"-style text for messages.
std::string memory_text(std::uint64_t bytes);

// Throws InputError "WHAT needs about X of memory, but this machine has Y
// available; SHRINK" when bytes > available.
void check_memory_budget(const std::string& what, std::uint64_t bytes, const std::string& shrink);

}  // namespace npusim
