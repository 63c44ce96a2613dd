// A program's own stack: code that reads as straight-line kernel code (a
// kernel-API program on an AIV core) and suspends where the hardware would
// wait, resumed by the die's WakeScheduler when its time comes. Boost.Context
// fibers: a switch costs ~10 ns and no SystemC process, so 13,824 programs of
// a 288-rank supernode cost the SystemC kernel nothing.
//
// Stacks are small (64 KB by default) with a guard page below, so a program
// that overflows its stack stops with a fault instead of writing over memory;
// only the touched pages become resident. An exception thrown by the body is
// rethrown by the resume() that ran into it.
#pragma once
#include <cstddef>
#include <exception>
#include <functional>
#include <memory>

namespace npusim {

class Fiber {
public:
    static constexpr std::size_t kDefaultStackBytes = 64 * 1024;

    explicit Fiber(std::function<void()> body, std::size_t stack_bytes = kDefaultStackBytes);
    ~Fiber();
    Fiber(const Fiber&) = delete;
    Fiber& operator=(const Fiber&) = delete;

    // Runs the body until it suspends or returns; rethrows what it threw.
    void resume();
    // From inside the body: back to the resume() that entered it.
    void suspend();
    bool finished() const { return finished_; }
    bool running() const { return running_; }

private:
    struct Impl;
    std::unique_ptr<Impl> impl_;
    std::function<void()> body_;
    std::exception_ptr error_;
    bool finished_ = false;
    bool running_ = false;
};

}  // namespace npusim
