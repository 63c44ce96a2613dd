#include "engine/fiber.hpp"

#include <boost/context/fiber.hpp>
#include <boost/context/protected_fixedsize_stack.hpp>

#include <map>
#include <mutex>
#include <vector>

namespace npusim {

namespace bctx = boost::context;

namespace {

// Protected stacks kept for reuse: a supernode's programs start and end by
// the ten thousand, and a stack per program from the kernel (mmap, mprotect,
// munmap) showed in the profile. One simulation per process: the pool lives
// as long as the process.
class StackPool {
public:
    explicit StackPool(std::size_t bytes) : alloc_(bytes), bytes_(bytes) {}
    bctx::stack_context allocate() {
        std::lock_guard<std::mutex> lk(mutex());  // a System's dies may run on two threads
        auto& free = pool()[bytes_];
        if (free.empty()) return alloc_.allocate();
        const bctx::stack_context sc = free.back();
        free.pop_back();
        return sc;
    }
    void deallocate(bctx::stack_context& sc) noexcept {
        std::lock_guard<std::mutex> lk(mutex());
        pool()[bytes_].push_back(sc);
    }

private:
    static std::mutex& mutex() {
        static std::mutex m;
        return m;
    }
    static std::map<std::size_t, std::vector<bctx::stack_context>>& pool() {
        static std::map<std::size_t, std::vector<bctx::stack_context>> p;
        return p;
    }
    bctx::protected_fixedsize_stack alloc_;
    std::size_t bytes_;
};

}  // namespace

struct Fiber::Impl {
    bctx::fiber self;    // the body's side, while it is suspended
    bctx::fiber caller;  // who resumed it, while it runs
};

Fiber::Fiber(std::function<void()> body, std::size_t stack_bytes) : impl_(std::make_unique<Impl>()), body_(std::move(body)) {
    impl_->self = bctx::fiber(std::allocator_arg, StackPool(stack_bytes), [this](bctx::fiber&& c) {
        impl_->caller = std::move(c);
        try {
            body_();
        } catch (const bctx::detail::forced_unwind&) {
            throw;  // an unfinished fiber being destroyed: let Boost unwind it
        } catch (...) {
            error_ = std::current_exception();
        }
        finished_ = true;
        return std::move(impl_->caller);
    });
}

// A fiber that never finished is unwound by Boost (it throws a forced-unwind
// exception inside the body's stack); nothing of ours is left on it.
Fiber::~Fiber() = default;

void Fiber::resume() {
    running_ = true;
    impl_->self = std::move(impl_->self).resume();
    running_ = false;
    if (error_) {
        std::exception_ptr e = error_;
        error_ = nullptr;
        std::rethrow_exception(e);
    }
}

void Fiber::suspend() { impl_->caller = std::move(impl_->caller).resume(); }

}  // namespace npusim
