// What a command is doing, for the one line printed when memory runs out
// anyway (std::bad_alloc past the estimates of common/memory_budget.hpp):
// "out of memory while compiling models/x.json". Phases nest; the innermost
// is named.
#pragma once
#include <string>

namespace npusim {

class Phase {
public:
    explicit Phase(std::string what);
    ~Phase();
    Phase(const Phase&) = delete;
    Phase& operator=(const Phase&) = delete;

    // The innermost phase an exception left, else the innermost open one,
    // else "".
    static std::string current();
};

}  // namespace npusim
