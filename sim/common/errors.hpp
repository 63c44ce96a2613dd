// Error types that map to the CLI's exit codes (docs/design.md §4.1).
#pragma once
#include <stdexcept>
#include <string>

namespace npusim {

// Bad user input: a file, JSON position or key path, what was expected. Exit 2.
struct InputError : std::runtime_error {
    using std::runtime_error::runtime_error;
};

// The simulation can never finish: names a waiting task and its event. Exit 3.
struct DeadlockError : std::runtime_error {
    using std::runtime_error::runtime_error;
};

// A check or regression failed. Exit 1.
struct CheckFailed : std::runtime_error {
    using std::runtime_error::runtime_error;
};

}  // namespace npusim
