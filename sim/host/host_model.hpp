// The host runtime of a run (docs/design.md §1.2), put together for `npusim run`:
// reads workload.host_mode and the chip's host section, plans the host ops
// from the compiled result's op table, gates the stream, and builds the HostRuntime
// module beside the Die. Off (the default) leaves the run as it was: every
// kernel launched at time 0.
#pragma once
#include <memory>
#include <string>

#include "compiler/compiler.hpp"
#include "host/host_plan.hpp"
#include "host/host_runtime.hpp"
#include "host/stream_gating.hpp"

namespace npusim {
class Die;
class Stats;
class TraceWriter;
}  // namespace npusim

namespace npusim::host {

class HostModel {
public:
    // nullptr when workload.host_mode is "off". InputError when the chip has
    // too few host threads for the mode or cpu_ops names no node.
    static std::unique_ptr<HostModel> create(const GraphWorkload& workload, const ChipParams& chip,
                                             const compiler::CompileResult& compiled);

    // The gated stream for the Die (moved out; call once).
    TaskStream take_stream();
    // Builds the host module; call before Die::run().
    void attach(Die& die, TraceWriter* trace);
    // After Die::run(): DeadlockError if the host did not get through every
    // op; then trace flows from submissions to the tasks they released.
    void finish();
    void collect(Stats& s) const;
    std::string summary(const Stats& s) const;
    static std::string breakdown_line(const Stats& s);

    Mode mode() const { return opt_.mode; }
    const HostPlan& plan() const { return plan_; }

private:
    HostModel() = default;
    RuntimeOptions opt_;
    const ChipParams* chip_ = nullptr;
    HostPlan plan_;
    GatedStream gated_;
    std::unique_ptr<HostRuntime> runtime_;
};

}  // namespace npusim::host
