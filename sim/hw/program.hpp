// Kernel programs (docs/task-streams.md, "Programs"): code written against
// the AIV kernel API (hw/aiv_core.hpp) that a vector core runs as one task of
// kernel `program`, the way a compiled Dispatch or Combine kernel runs on
// Ascend's AIV cores. Implementations register by name (the layers that
// write them, e.g. sim/moe); a stream declares which program it launches
// with which arguments, and each declaration is built once, when a die first
// meets it, and shared by every rank that runs it.
#pragma once
#include <memory>
#include <string>
#include <vector>

#include "chip/chip_params.hpp"
#include "tasks/task.hpp"

namespace npusim {

class AivCore;

class Program {
public:
    virtual ~Program() = default;
    // One block's part (k.core() of k.cores()), on one rank (k.rank()).
    virtual void run(AivCore& k) const = 0;
};

// Builds a program from its declared arguments (a JSON object as text);
// throws InputError naming the argument for a bad one.
using ProgramFactory = std::shared_ptr<const Program> (*)(const std::string& args, const ChipParams& chip);

// Registers `name` (call before running a stream that names it; a second
// registration of a name replaces the first).
void register_program(const std::string& name, ProgramFactory make);
std::vector<std::string> program_names();

// The program a declaration launches, built on first use and cached by
// (name, args); InputError naming the stream file and line for an unknown
// name (with did-you-mean) or arguments the program refuses.
std::shared_ptr<const Program> program_for(const ProgramDecl& decl, const std::string& file, const ChipParams& chip);

}  // namespace npusim
