#include "moe/moe_programs.hpp"

#include <memory>

#include <nlohmann/json.hpp>

#include "common/errors.hpp"
#include "hw/program.hpp"
#include "moe/combine.hpp"
#include "moe/dispatch.hpp"

namespace npusim {

namespace {

using json = nlohmann::json;

// What a Dispatch's program and the Combine's after it share.
struct DispatchState {
    MoeOp op;
    std::shared_ptr<const Routing> routing;
    DispatchLayout layout;
    DispatchContext ctx;
    DispatchState(const MoeOp& p, std::uint32_t block)
        : op(p),
          routing(Routing::shared(p.routing, p.ranks(), p.batch, p.top_k, p.experts)),
          layout(op, block),
          ctx(op, *routing, layout) {}
};

class DispatchProgram : public Program {
public:
    DispatchProgram(const MoeOp& p, std::uint32_t block) : s_(p, block) {}
    void run(AivCore& k) const override {
        if (s_.op.variant == MoeOp::Variant::baseline) dispatch_baseline(k, s_.ctx);
        else dispatch_optimized(k, s_.ctx);
    }

private:
    DispatchState s_;
};

class CombineProgram : public Program {
public:
    CombineProgram(const MoeOp& combine, const MoeOp& dispatch, std::uint32_t block)
        : d_(dispatch, block), op_(combine), layout_(op_, block), ctx_(d_.ctx, op_, layout_) {}
    void run(AivCore& k) const override {
        if (op_.variant == MoeOp::Variant::baseline) combine_baseline(k, ctx_);
        else combine_optimized(k, ctx_);
    }

private:
    DispatchState d_;
    MoeOp op_;
    CombineLayout layout_;
    CombineContext ctx_;
};

std::uint32_t block_of(const ChipParams& chip) { return static_cast<std::uint32_t>(chip.interconnect.datablock_bytes); }

std::shared_ptr<const Program> make_dispatch(const std::string& args, const ChipParams& chip) {
    return std::make_shared<DispatchProgram>(MoeOp::from_args(args), block_of(chip));
}

std::shared_ptr<const Program> make_combine(const std::string& args, const ChipParams& chip) {
    json j;
    try {
        j = json::parse(args);
        return std::make_shared<CombineProgram>(MoeOp::from_args(j.at("combine").dump()),
                                                MoeOp::from_args(j.at("dispatch").dump()), block_of(chip));
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
