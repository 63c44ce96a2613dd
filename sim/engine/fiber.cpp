#include "engine/fiber.hpp"

#include <boost/context/fiber.hpp>
#include <boost/context/protected_fixedsize_stack.hpp>

namespace npusim {

namespace bctx = boost::context;

struct Fiber::Impl {
    bctx::fiber self;    // the body's side, while it is suspended
    bctx::fiber caller;  // who resumed it, while it runs
};

Fiber::Fiber(std::function<void()> body, std::size_t stack_bytes) : impl_(std::make_unique<Impl>()), body_(std::move(body)) {
    impl_->self = bctx::fiber(std::allocator_arg, bctx::protected_fixedsize_stack(stack_bytes), [this](bctx::fiber&& c) {
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
