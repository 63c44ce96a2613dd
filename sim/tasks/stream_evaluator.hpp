// How long a task stream takes on a die: the seam through which the
// compiler asks the die model what a plan costs (docs/compiler.md, "Costing
// a plan on the die model") without linking it. hw/die_probe implements it.
#pragma once
#include <cstdint>

#include "tasks/task.hpp"

namespace npusim {

class StreamEvaluator {
public:
    virtual ~StreamEvaluator() = default;
    // When the stream's last task ends on an otherwise idle die, in ps.
    virtual std::uint64_t end_ps(const TaskStream& s) = 0;
};

}  // namespace npusim
