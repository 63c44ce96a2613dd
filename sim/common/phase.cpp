#include "common/phase.hpp"

#include <exception>
#include <vector>

namespace npusim {
namespace {

struct Phases {
    std::vector<std::string> open;
    std::vector<int> uncaught;  // std::uncaught_exceptions() when each opened
    std::string failed;         // the innermost phase an exception left
};

// Reserved once, so naming a phase does not itself allocate much.
Phases& phases() {
    static Phases p = [] {
        Phases v;
        v.open.reserve(16);
        v.uncaught.reserve(16);
        v.failed.reserve(256);
        return v;
    }();
    return p;
}

}  // namespace

Phase::Phase(std::string what) {
    phases().open.push_back(std::move(what));
    phases().uncaught.push_back(std::uncaught_exceptions());
}

Phase::~Phase() {
    Phases& p = phases();
    // Unwinding: the error is reported after this phase is gone, so keep
    // its name (the innermost one the exception passed through).
    if (std::uncaught_exceptions() > p.uncaught.back() && p.failed.empty()) p.failed.swap(p.open.back());
    p.open.pop_back();
    p.uncaught.pop_back();
}

std::string Phase::current() {
    try {
        const Phases& p = phases();
        if (!p.failed.empty()) return p.failed;
        return p.open.empty() ? std::string() : p.open.back();
    } catch (...) {
        return std::string();  // no memory even for the copy
    }
}

}  // namespace npusim
