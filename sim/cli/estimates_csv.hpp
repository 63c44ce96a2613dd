// `npusim compile --estimates`: every emitted task's cost-model estimate
// beside what the die model says when it runs the task, and its kernel,
// alone (hw/die_probe).
#pragma once
#include <string>

#include "chip/chip_params.hpp"
#include "compiler/compiler.hpp"

namespace npusim::cli {

// Writes the CSV; returns a one-line note of what the probes cost.
std::string write_estimates(const compiler::CompileResult& r, const ChipParams& chip, const std::string& file);

}  // namespace npusim::cli
