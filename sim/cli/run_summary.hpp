// The short human summary `npusim run` prints: total time, per-unit
// utilisation, overlap, where outputs went.
#pragma once
#include <string>

#include "chip/chip_params.hpp"
#include "stats/stats.hpp"

namespace npusim::cli {

std::string run_summary(const Stats& stats, const ChipParams& chip, const std::string& stats_file,
                        const std::string& trace_file);

}  // namespace npusim::cli
