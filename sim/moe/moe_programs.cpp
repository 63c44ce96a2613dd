#include "moe/moe_programs.hpp"

#include <map>
#include <memory>
#include <string>
#include <utility>

#include <nlohmann/json.hpp>

#include "common/errors.hpp"
#include "hw/program.hpp"
#include "moe/combine.hpp"
#include "moe/dispatch.hpp"

namespace npusim {

namespace {

using json = nlohmann::json;

// What a Dispatch's program and the Combines after it share: the routing,
// the layout, the context and the Combine's rows. The same on every rank
// (only the Combine's own tensors differ by rank), so built once per
// Dispatch and block size: a supernode's ranks would otherwise each hold
// every rank's tables.
struct DispatchState {
    MoeOp op;
    std::shared_ptr<const Routing> routing;
    DispatchLayout layout;
    DispatchContext ctx;
    CombineRows rows;
    DispatchState(const MoeOp& p, std::uint32_t block)
        : op(p),
          routing(Routing::shared(p.routing, p.ranks(), p.batch, p.top_k, p.experts)),
          layout(op, block),
          ctx(op, *routing, layout),
          rows(ctx) {}
};

std::shared_ptr<const DispatchState> dispatch_state(const std::string& args, std::uint32_t block) {
    static std::map<std::pair<std::string, std::uint32_t>, std::weak_ptr<const DispatchState>> cache;
    const MoeOp op = MoeOp::from_args(args);                // a clear error first
    auto& slot = cache[{json::parse(args).dump(), block}];  // the same op however its text is spaced
    if (auto s = slot.lock()) return s;
    auto s = std::make_shared<const DispatchState>(op, block);
    slot = s;
    return s;
}

class DispatchProgram : public Program {
public:
    explicit DispatchProgram(std::shared_ptr<const DispatchState> s) : s_(std::move(s)) {}
    void run(AivCore& k) const override {
        if (s_->op.variant == MoeOp::Variant::baseline) dispatch_baseline(k, s_->ctx);
        else dispatch_optimized(k, s_->ctx);
    }

private:
    std::shared_ptr<const DispatchState> s_;
};

class CombineProgram : public Program {
public:
    CombineProgram(const MoeOp& combine, std::shared_ptr<const DispatchState> dispatch, std::uint32_t block)
        : d_(std::move(dispatch)), op_(combine), layout_(op_, block), ctx_(d_->ctx, op_, layout_, d_->rows) {}
    void run(AivCore& k) const override {
        if (op_.variant == MoeOp::Variant::baseline) combine_baseline(k, ctx_);
        else combine_optimized(k, ctx_);
    }

private:
    std::shared_ptr<const DispatchState> d_;
    MoeOp op_;
    CombineLayout layout_;
    CombineContext ctx_;
};

std::uint32_t block_of(const ChipParams& chip) { return static_cast<std::uint32_t>(chip.interconnect.datablock_bytes); }

std::shared_ptr<const Program> make_dispatch(const std::string& args, const ChipParams& chip) {
    return std::make_shared<DispatchProgram>(dispatch_state(args, block_of(chip)));
}

std::shared_ptr<const Program> make_combine(const std::string& args, const ChipParams& chip) {
    json j;
    try {
        j = json::parse(args);
        return std::make_shared<CombineProgram>(MoeOp::from_args(j.at("combine").dump()),
                                                dispatch_state(j.at("dispatch").dump(), block_of(chip)),
                                                block_of(chip));
    } catch (const json::exception& e) {
        throw InputError(std::string("args: expected {\"combine\": {...}, \"dispatch\": {...}}: ") + e.what());
    }
}

}  // namespace

void register_moe_programs() {
    register_program(kDispatchProgram, &make_dispatch);
    register_program(kCombineProgram, &make_combine);
}

}  // namespace npusim
