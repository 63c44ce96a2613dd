#include "common/memory_budget.hpp"

#include <cstdlib>
#include <fstream>
#include <string>

#include <fmt/format.h>

#include "common/errors.hpp"

namespace npusim {

std::uint64_t available_memory_bytes() {
    if (const char* env = std::getenv("NPUSIM_MEMORY_AVAILABLE"); env && *env) {
        char* end = nullptr;
        const double v = std::strtod(env, &end);
        const std::string unit = end ? std::string(end) : std::string();
        const double scale = unit == "K" || unit == "KB" ? 1024.0
                             : unit == "M" || unit == "MB" ? 1024.0 * 1024
                             : unit == "G" || unit == "GB" ? 1024.0 * 1024 * 1024
                                                           : 1.0;
        if (!(v > 0) || (!unit.empty() && scale == 1.0))
            throw InputError(fmt::format("NPUSIM_MEMORY_AVAILABLE: expected a size in bytes (or with K, M, G), got '{}'", env));
        return static_cast<std::uint64_t>(v * scale);
    }
    std::ifstream in("/proc/meminfo");
    std::string key;
    std::uint64_t kb = 0;
    std::string unit;
    while (in >> key >> kb >> unit)
        if (key == "MemAvailable:") return kb * 1024;
    return 0;
}

std::string memory_text(std::uint64_t bytes) {
    const double b = static_cast<double>(bytes);
    if (b >= 1e9) return fmt::format("{:.1f} GB", b / 1e9);
    if (b >= 1e6) return fmt::format("{:.0f} MB", b / 1e6);
    return fmt::format("{:.0f} KB", b / 1e3);
}

void check_memory_budget(const std::string& what, std::uint64_t bytes, const std::string& shrink) {
    const std::uint64_t have = available_memory_bytes();
    if (have == 0 || bytes <= have) return;
    const bool told = std::getenv("NPUSIM_MEMORY_AVAILABLE") && *std::getenv("NPUSIM_MEMORY_AVAILABLE");
    throw InputError(fmt::format("{} needs about {} of memory, but this machine has {} available ({}); {}", what,
                                 memory_text(bytes), memory_text(have),
                                 told ? "NPUSIM_MEMORY_AVAILABLE" : "MemAvailable in /proc/meminfo", shrink));
}

}  // namespace npusim
