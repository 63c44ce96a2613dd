#include "hw/ai_core.hpp"

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <stdexcept>
#include <vector>

#include <fmt/format.h>

#include "chip/pipeline_schedule.hpp"
#include "chip/timing.hpp"
#include "hw/fabric.hpp"
#include "stats/run_span.hpp"
#include "stats/stats.hpp"
#include "trace/trace_writer.hpp"

namespace npusim {

AiCore::AiCore(sc_core::sc_module_name name, CoreType type, int index, SimContext& ctx, CoreListener& listener,
               std::vector<std::string> pipe_names)
    : sc_core::sc_module(name),
      ctx_(ctx),
      type_(type),
      index_(index),
      listener_(listener),
      pipe_names_(std::move(pipe_names)),
      pipes_(pipe_names_.size()),
      l2_read_cap_(ctx.bytes_per_ps(timing::l2_port_bytes_per_cycle(ctx.chip, type, false, 1))),
      l2_write_cap_(ctx.bytes_per_ps(timing::l2_port_bytes_per_cycle(ctx.chip, type, true, 1))) {
    if (ctx_.tracing) {
        const std::string core = fmt::format("{}{}", to_string(type_), index_);
        tid_ = ctx_.next_tid++;
        ctx_.trace->thread(ctx_.trace_pid, tid_, core, tid_);
        if (ctx_.trace_pipes)
            for (const auto& p : pipe_names_) {
                pipe_tids_.push_back(ctx_.next_tid);
                ctx_.trace->thread(ctx_.trace_pid, ctx_.next_tid, core + "." + p, ctx_.next_tid);
                ++ctx_.next_tid;
            }
        in_buffer_counter_ = fmt::format("{} {} in use (KB)", core, type_ == CoreType::cube ? "L1" : "UB");
    }
}

// A tile's input buffer is taken when its load (the first stage) begins and
// given back when the second stage (MTE1, or the Vector unit) is done with
// it: the double buffers' fill, as a counter per core.
void AiCore::take_in_buffer(std::uint64_t tile, std::uint64_t bytes) {
    std::uint64_t& slot = in_buffer_bytes_[tile % in_buffer_bytes_.size()];
    in_buffer_total_ += bytes - slot;
    slot = bytes;
    ctx_.trace->counter(ctx_.trace_pid, in_buffer_counter_, now_ps(), static_cast<double>(in_buffer_total_) / 1024.0);
}

void AiCore::give_in_buffer(std::uint64_t tile) {
    std::uint64_t& slot = in_buffer_bytes_[tile % in_buffer_bytes_.size()];
    if (slot == 0) return;
    in_buffer_total_ -= slot;
    slot = 0;
    ctx_.trace->counter(ctx_.trace_pid, in_buffer_counter_, now_ps(), static_cast<double>(in_buffer_total_) / 1024.0);
}

void AiCore::start(std::uint32_t task) {
    running_ = true;
    task_ = task;
    ctx_.timing[task].start_ps = now_ps();
    ctx_.timing[task].core = index_;
    ctx_.timing[task].trace_tid = tid_;
    ctx_.timing[task].prev_on_core = last_task_;
    last_task_ = task;
    task_stage_ps_.fill(0);
    task_bytes_ = 0;
    task_link_stage_ = -1;
    task_hit_port_ps_ = task_hit_write_port_ps_ = task_miss_port_ps_ = 0;
    hbm_saturated_at_start_ = ctx_.memory->hbm_saturated_ps(now_ps());
    l2_saturated_at_start_ = ctx_.memory->l2_saturated_ps(now_ps());
    ctx_.scheduler->at(now_ps() + ctx_.cycles_to_ps(task_start_cycles()), *this, kStarted);
}

void AiCore::wake(std::uint64_t action) {
    count_event(EventKind::core);
    if (action != kStarted && (action & kProgramAction)) {
        program_wake(action & ~kProgramAction);
        return;
    }
    if (action == kMacroCompute) {
        macro_part_done(action);
        return;
    }
    if (action != kStarted) {
        if (action & kDrained) on_drained(action & ~kDrained);
        else if (action & kArrived) on_arrived(action & ~kArrived);
        else end_stage(static_cast<int>(action));
        return;
    }
    const Task& t = ctx_.stream.tasks[task_];
    if (t.kernel == Kernel::program) {
        start_program(t);
        return;
    }
    if (ctx_.place.fabric) check_gm_reads(t);
    in_map_.reset(t.reads, t.params.has_addr, t.params.addr);
    out_map_.reset(t.writes, t.params.has_out_addr, t.params.out_addr);
    // The first stage loads, the last stores; through GM both take the
    // core's one port.
    const int last = static_cast<int>(pipe_names_.size()) - 1;
    // A write to another rank leaves through the mesh, not the GM port.
    const bool remote = t.remote.dst_rank >= 0 && t.remote.dst_rank != ctx_.place.rank;
    port_ = (is_global(t.params.src) ? 1u : 0u) | (is_global(t.params.dst) && !remote ? 1u << last : 0u);
    tiles_ = plan(t);
    // A long task runs in closed form (run_macro), the rest tile by tile.
    macro_ = Macro{};
    if (!remote && macro_allowed() && tiles_ >= kMacroMinTiles) {
        macro_.end = tiles_;
        run_macro();
        return;
    }
    pipeline_.reset(static_cast<int>(pipe_names_.size()), tiles_, 2, port_);
    pipeline_.kick(*this);
    if (pipeline_.finished()) finish_task();
}

// Opt-in (NPUSIM_CLOSED_FORM=1): the closed form is within a few per cent
// of stepping, but a parameter that moves a task across the threshold moves
// its time by that much too, which can flip a small what-if response.
bool AiCore::macro_allowed() {
    static const bool on = [] {
        const char* e = std::getenv("NPUSIM_CLOSED_FORM");
        return e && *e && std::string(e) != "0";
    }();
    return on;
}

// A long task in closed form, a chunk of kMacroChunk tiles at a time: each
// tile's stage work is taken as the stepped pipeline would take it, the
// chunk's loads and its stores go as one transfer each through the memory
// system (every tile's addresses through the L2 model when the chunk
// starts), and the chunk takes what the core's own pipe schedule
// (chip/pipeline_schedule.hpp) says its tiles take: the first chunk with
// the pipeline's fill and drain, every later one its steady state. Shared
// rates (other cores' traffic on L2 and HBM) slow the transfers as they
// change, as for any transfer.
void AiCore::run_macro() {
    macro_.next = 0;
    run_macro_chunk();
}

void AiCore::run_macro_chunk() {
    const Task& t = ctx_.stream.tasks[task_];
    const int stages = static_cast<int>(pipe_names_.size());
    const std::uint64_t from = macro_.next, to = std::min(macro_.end, from + kMacroChunk);
    const std::size_t n = static_cast<std::size_t>(to - from);
    macro_.next = to;
    // Each tile's stage work: compute in ps, transfers in bytes until the
    // L2 model has said where the chunk's bytes come from.
    struct Part {
        StageWork::Kind kind = StageWork::Kind::none;
        double ps = 0;
        std::size_t index = 0;  // in reads or writes
        bool write = false;
    };
    std::vector<std::array<Part, TilePipeline::kMaxStages>> parts(n);
    std::vector<TransferRequest> reads, writes;
    double port_cap = 0;
    for (std::size_t i = 0; i < n; ++i)
        for (int s = 0; s < stages; ++s) {
            const StageWork w = work(t, s, from + i);
            const auto si = static_cast<std::size_t>(s);
            Part& part = parts[i][si];
            part.kind = w.kind;
            pipes_[si].bytes += w.bytes;
            if (w.kind == StageWork::Kind::compute) {
                part.ps = static_cast<double>(ctx_.cycles_to_ps(static_cast<std::uint64_t>(std::llround(w.cycles))));
                pipes_[si].busy_ps += static_cast<std::uint64_t>(part.ps);
                task_stage_ps_[si] += static_cast<std::uint64_t>(part.ps);
            }
            if (w.kind != StageWork::Kind::transfer) continue;
            task_bytes_ += w.bytes;
            part.write = w.transfer.write;
            part.index = (part.write ? writes : reads).size();
            port_cap = std::max(port_cap, w.transfer.cap_bytes_per_ps);
            (w.transfer.write ? macro_.write_stage : macro_.read_stage) = s;
            (w.transfer.write ? writes : reads).push_back(w.transfer);
        }
    // What comes from HBM and what from L2, and so each transfer's time on
    // the port alone: misses at the port's rate, hits at the core's L2 rate.
    const MemorySystem::Batch rb = ctx_.memory->prepare_batch(reads), wb = ctx_.memory->prepare_batch(writes);
    const auto alone = [&](std::uint64_t hbm, std::uint64_t l2, bool write) {
        return (port_cap > 0 ? static_cast<double>(hbm) / port_cap : 0.0) +
               static_cast<double>(l2) / (write ? l2_write_cap_ : l2_read_cap_);
    };
    macro_.read_ps = alone(rb.hbm, rb.l2, false);
    macro_.write_ps = alone(wb.hbm, wb.l2, true);
    const double hbm_latency = static_cast<double>(ctx_.memory->hbm_latency_ps()),
                 l2_latency = static_cast<double>(ctx_.memory->l2_latency_ps());
    // The chunk's pace: the core's own pipe schedule (the TilePipeline's
    // rules: double buffering, the shared port) over these tiles; after the
    // first chunk its steady state, the difference of running them twice
    // and once, so fill and drain count once per task.
    const auto cost = [&](int s, std::uint64_t tile) {
        const Part& part = parts[static_cast<std::size_t>(tile % n)][static_cast<std::size_t>(s)];
        timing::StageCost c;
        if (part.kind == StageWork::Kind::none) c.none = true;
        else if (part.kind == StageWork::Kind::compute) c.cycles = part.ps;
        else {
            const auto [hbm, l2] = (part.write ? wb : rb).parts[part.index];
            c.cycles = alone(hbm, l2, part.write);
            c.latency = hbm > 0 ? hbm_latency : l2_latency;
        }
        return c;
    };
    const double once = timing::pipelined_cycles(stages, n, 2, cost, 4 * n, port_);
    const double twice = timing::pipelined_cycles(stages, 2 * n, 2, cost, 4 * n, port_);
    macro_.pace_ps = std::max(from == 0 ? once : twice - once, 1.0);
    macro_.start_ps = now_ps();
    macro_.pending = 1;  // the compute's own end
    ctx_.scheduler->at(now_ps() + static_cast<std::uint64_t>(std::ceil(macro_.pace_ps)), *this, kMacroCompute);
    // Loads and stores through one port share it in proportion to their
    // time on it, so together they never move faster than the port; they
    // are not slowed to the pace: like the stepped tiles' transfers, they
    // move as fast as L2 and HBM let them, and contention the pace has room
    // for costs nothing.
    const bool shared_port = (port_ & (port_ - 1)) != 0;
    const double port_ps = macro_.read_ps + macro_.write_ps;
    const auto submit = [&](const MemorySystem::Batch& b, double own_ps, bool write, std::uint64_t tag) {
        if (b.hbm + b.l2 == 0) return;
        ++macro_.pending;
        ++macro_.arriving;
        const double f = shared_port && port_ps > 0 ? own_ps / port_ps : 1.0;
        ctx_.memory->start_batch(b, port_cap * f, (write ? l2_write_cap_ : l2_read_cap_) * f, this, tag);
    };
    submit(rb, macro_.read_ps, false, kMacroRead);
    submit(wb, macro_.write_ps, true, kMacroWrite);
    ++macro_runs_;
    macro_tiles_ += to - from;
}

void AiCore::macro_part_done(std::uint64_t part) {
    const std::uint64_t now = now_ps();
    // A transfer stage was busy while its bytes moved, for its share of the
    // port when loads and stores share one.
    const auto busy = [&](int stage, double own_ps) {
        if (stage < 0) return;
        const double port_ps = macro_.read_ps + macro_.write_ps;
        const double share = (port_ & (port_ - 1)) != 0 && port_ps > 0 ? own_ps / port_ps : 1.0;
        const auto ps = static_cast<std::uint64_t>(static_cast<double>(now - macro_.start_ps) * share);
        pipes_[static_cast<std::size_t>(stage)].busy_ps += ps;
        task_stage_ps_[static_cast<std::size_t>(stage)] += ps;
        stage_transfer_[static_cast<std::size_t>(stage)] = true;
    };
    if (part == kMacroRead) busy(macro_.read_stage, macro_.read_ps);
    if (part == kMacroWrite) busy(macro_.write_stage, macro_.write_ps);
    if (--macro_.pending > 0) return;
    if (ctx_.tracing && ctx_.trace_pipes) {
        const Task& t = ctx_.stream.tasks[task_];
        for (std::size_t s = 0; s < pipe_names_.size(); ++s)
            ctx_.trace->complete(ctx_.trace_pid, pipe_tids_[s], task_label(t), "pipe", macro_.start_ps, now - macro_.start_ps,
                                 fmt::format(R"("task":"{}","closed_form_until_tile":{})", json_escape(t.id), macro_.next - 1));
    }
    if (macro_.next < macro_.end) {
        run_macro_chunk();
        return;
    }
    macro_.ran = true;
    if (macro_.arriving == 0) finish_task();
}

void AiCore::check_gm_reads(const Task& t) {
    // In a System, what the task reads may be a copy from another rank
    // still in flight: where copies land (RankLink::remote_ranges), a block
    // not landed yet — or not even sent — is a stale read.
    const auto* ranges = ctx_.place.fabric->remote_ranges(ctx_.place.rank);
    if (!ranges || ranges->empty()) return;
    const auto& remote = *ranges;
    auto check = [&](std::uint64_t addr, std::uint64_t bytes) {
        const std::uint64_t end = addr + bytes;
        auto it = std::upper_bound(remote.begin(), remote.end(), std::make_pair(addr, ~std::uint64_t{0}));
        if (it != remote.begin()) --it;
        for (; it != remote.end() && it->first < end; ++it) {
            const std::uint64_t lo = std::max(addr, it->first), hi = std::min(end, it->second);
            if (lo < hi) ctx_.place.fabric->check_read(ctx_.place.rank, lo, hi - lo, index_, now_ps());
        }
    };
    if (!t.reads.empty()) {
        for (const Region& r : t.reads)
            if (is_global(r.space)) r.for_each_row(check);
    } else if (t.params.has_addr && is_global(t.params.src) && t.kernel != Kernel::matmul) {
        check(t.params.addr, t.params.bytes);
    }
}

void AiCore::start_program(const Task& t) {
    throw std::logic_error("task '" + t.id + "': a " + to_string(type_) + " core cannot run a kernel program");
}

void AiCore::program_wake(std::uint64_t) {}

void AiCore::record_busy(int pipe, std::uint64_t ps, std::uint64_t bytes, bool transfer) {
    const auto p = static_cast<std::size_t>(pipe);
    pipes_[p].busy_ps += ps;
    pipes_[p].bytes += bytes;
    task_stage_ps_[p] += ps;
    stage_transfer_[p] = transfer;
    if (transfer) task_bytes_ += bytes;
}

bool AiCore::has_work(int stage, std::uint64_t tile) {
    return work(ctx_.stream.tasks[task_], stage, tile).kind != StageWork::Kind::none;
}

bool AiCore::begin_stage(int stage, std::uint64_t tile) {
    const Task& t = ctx_.stream.tasks[task_];
    StageWork w = work(t, stage, tile);
    if (w.kind == StageWork::Kind::none) return false;
    stage_start_[stage] = now_ps();
    stage_tile_[stage] = tile;
    pipes_[stage].bytes += w.bytes;
    stage_transfer_[stage] = w.kind == StageWork::Kind::transfer || w.kind == StageWork::Kind::link;
    if (w.kind == StageWork::Kind::link) task_link_stage_ = stage;
    if (stage_transfer_[stage]) task_bytes_ += w.bytes;
    StageDid& did = stage_did_[stage];
    did = StageDid{w.bytes, 0, 0, w.flops, false};
    if (stage == 0 && ctx_.tracing && ctx_.trace_pipes && w.bytes) take_in_buffer(tile, w.bytes);
    if (w.kind == StageWork::Kind::compute || w.kind == StageWork::Kind::link) {
        ctx_.scheduler->at(now_ps() + ctx_.cycles_to_ps(w.cycles), *this, static_cast<std::uint64_t>(stage));
    } else {
        // L2 hits move at the core's L2 rate; the engine's cap is for misses.
        w.transfer.l2_cap_bytes_per_ps = w.transfer.write ? l2_write_cap_ : l2_read_cap_;
        const MemorySystem::Served served = ctx_.memory->transfer(w.transfer, this, static_cast<std::uint64_t>(stage));
        // A read of L2-resident data counts as one when some of its bytes missed (regions in HBM).
        did.read = !w.transfer.write && (w.transfer.space == Space::hbm || served.hbm > 0);
        did.l2_hit = served.l2;
        did.l2_miss = served.hbm;
        // The engine moves misses at its port's rate, hits at the L2 rate.
        if (w.transfer.cap_bytes_per_ps > 0) task_miss_port_ps_ += static_cast<double>(served.hbm) / w.transfer.cap_bytes_per_ps;
        if (w.transfer.l2_cap_bytes_per_ps > 0)
            (w.transfer.write ? task_hit_write_port_ps_ : task_hit_port_ps_) +=
                static_cast<double>(served.l2) / w.transfer.l2_cap_bytes_per_ps;
    }
    return true;
}

void AiCore::transfer_drained(std::uint64_t stage) {
    // A closed-form chunk's transfer has moved its bytes: the next chunk may
    // go (its data still arrives a latency later, overlapping the next).
    if (stage == kMacroRead || stage == kMacroWrite) {
        macro_part_done(stage);
        return;
    }
    // Handled after the compute stages that end at the same time (as the
    // compiler's pipe schedule orders them), so which stage takes the
    // freed port does not depend on event order.
    ctx_.scheduler->at(now_ps(), *this, kDrained | stage);
}

void AiCore::transfer_done(std::uint64_t stage) {
    if (stage == kMacroRead || stage == kMacroWrite) {
        if (--macro_.arriving == 0 && macro_.ran) finish_task();
        return;
    }
    ctx_.scheduler->at(now_ps(), *this, kArrived | stage);
}

void AiCore::on_drained(std::uint64_t stage) {
    record_stage(static_cast<int>(stage));
    ++transfers_in_flight_;
    pipeline_.stage_drained(*this, static_cast<int>(stage));
}

void AiCore::on_arrived(std::uint64_t stage) {
    --transfers_in_flight_;
    pipeline_.stage_arrived(*this, static_cast<int>(stage));
    if (pipeline_.finished() && transfers_in_flight_ == 0) finish_task();
}

void AiCore::end_stage(int stage) {
    record_stage(stage);
    pipeline_.stage_done(*this, stage);
    if (pipeline_.finished() && transfers_in_flight_ == 0) finish_task();
}

void AiCore::record_stage(int stage) {
    const std::uint64_t now = now_ps();
    pipes_[stage].busy_ps += now - stage_start_[stage];
    task_stage_ps_[stage] += now - stage_start_[stage];
    if (ctx_.tracing && ctx_.trace_pipes) {
        if (stage == 1) give_in_buffer(stage_tile_[stage]);
        const Task& t = ctx_.stream.tasks[task_];
        const StageDid& did = stage_did_[stage];
        std::string args = fmt::format(R"("task":"{}","tile":{})", json_escape(t.id), stage_tile_[stage]);
        if (did.bytes) args += fmt::format(R"(,"bytes":{})", did.bytes);
        if (did.flops > 0) args += fmt::format(R"(,"flops":{:.0f})", did.flops);
        if (did.read) args += fmt::format(R"(,"l2_hit_bytes":{},"l2_miss_bytes":{})", did.l2_hit, did.l2_miss);
        ctx_.trace->complete(ctx_.trace_pid, pipe_tids_[static_cast<std::size_t>(stage)], task_label(t), "pipe", stage_start_[stage],
                             now - stage_start_[stage], args);
    }
}

BoundBy AiCore::bound_by(std::uint64_t task_ps) const {
    std::size_t busiest = 0;
    for (std::size_t p = 1; p < pipe_names_.size(); ++p)
        if (task_stage_ps_[p] > task_stage_ps_[busiest]) busiest = p;
    const std::uint64_t busy = task_stage_ps_[busiest];
    if (2 * busy < task_ps || busy == 0) return BoundBy::latency;
    const bool cube = type_ == CoreType::cube;
    if (static_cast<int>(busiest) == task_link_stage_) {  // a send the mesh held
        const Task& t = ctx_.stream.tasks[task_];
        return ctx_.chip.interconnect.same_node(ctx_.place.rank, t.remote.dst_rank) ? BoundBy::mesh_intra : BoundBy::mesh_inter;
    }
    if (!stage_transfer_[busiest]) {
        const std::string& pipe = pipe_names_[busiest];
        if (cube) return pipe == "m" ? BoundBy::cube_m : pipe == "mte1" ? BoundBy::mte1 : BoundBy::fixpipe;
        return BoundBy::vector_v;
    }
    // A transfer pipe. Its bytes took longest at one of the core's ports
    // (misses at the GM port, hits at the L2 read or write port); the share
    // behind that port (HBM behind misses, L2 behind hits) held it instead
    // when saturated for at least half the pipe's busy time in the task.
    const std::uint64_t now = now_ps();
    if (task_miss_port_ps_ >= std::max(task_hit_port_ps_, task_hit_write_port_ps_)) {
        if (2 * (ctx_.memory->hbm_saturated_ps(now) - hbm_saturated_at_start_) >= busy) return BoundBy::hbm;
        return cube ? BoundBy::cube_gm_port : BoundBy::vector_gm_port;
    }
    if (2 * (ctx_.memory->l2_saturated_ps(now) - l2_saturated_at_start_) >= busy) return BoundBy::l2;
    if (task_hit_write_port_ps_ > task_hit_port_ps_) return cube ? BoundBy::cube_l2_write_port : BoundBy::vector_l2_write_port;
    return cube ? BoundBy::cube_l2_port : BoundBy::vector_l2_port;
}

std::string AiCore::task_label(const Task& t) const {
    return ctx_.stream.label(t);
}

void AiCore::finish_task() {
    const std::uint64_t now = now_ps();
    TaskTiming& tm = ctx_.timing[task_];
    tm.end_ps = now;
    tm.done = true;
    for (std::size_t p = 0; p < pipe_names_.size(); ++p) {
        std::uint64_t& bound = stage_transfer_[p] ? tm.transfer_ps : tm.compute_ps;
        bound = std::max(bound, task_stage_ps_[p]);
    }
    tm.bytes = task_bytes_;
    tm.bound = bound_by(now - tm.start_ps);
    busy_ps_ += now - tm.start_ps;
    ++tasks_run_;
    // A tile whose data the second stage never took (no work there) frees at the task's end.
    if (ctx_.tracing && ctx_.trace_pipes)
        for (std::uint64_t i = 0; i < in_buffer_bytes_.size(); ++i) give_in_buffer(i);
    running_ = false;
    if (ctx_.tracing) {
        const Task& t = ctx_.stream.tasks[task_];
        const std::uint64_t ready = std::max(tm.head_ps, tm.released_ps);
        ctx_.trace->complete(
            ctx_.trace_pid, tid_, task_label(t), to_string(t.kernel), tm.start_ps, now - tm.start_ps,
            fmt::format(R"("id":"{}","op":"{}","tile":"{}","stream":"{}","event_wait_ns":{:.3f},"dispatch_wait_ns":{:.3f})",
                        json_escape(t.id), json_escape(ctx_.stream.name(t.op)), json_escape(ctx_.stream.name(t.tile)),
                        json_escape(ctx_.stream.streams[t.stream]),
                        (tm.released_ps > tm.head_ps ? tm.released_ps - tm.head_ps : 0) / 1000.0,
                        (tm.start_ps - ready) / 1000.0));
    }
    listener_.task_finished(type_, index_, task_);
}

void AiCore::report(Stats& s, const RunSpan& span) const {
    const std::string key = fmt::format("cores.{}{}", to_string(type_), index_);
    s.set(key + ".busy_cycles", span.cycles(static_cast<double>(busy_ps_)));
    s.set(key + ".utilization", span.utilization(static_cast<double>(busy_ps_)));
    s.set(key + ".tasks", tasks_run_);
    if (macro_runs_ > 0) {
        s.set(key + ".closed_form_runs", macro_runs_);
        s.set(key + ".closed_form_tiles", macro_tiles_);
    }
    for (std::size_t p = 0; p < pipe_names_.size(); ++p)
        s.set(key + ".pipes." + pipe_names_[p] + ".busy_cycles", span.cycles(static_cast<double>(pipes_[p].busy_ps)));
}

void AiCore::report_units(Stats& s, const RunSpan& span, const std::vector<const AiCore*>& cores) {
    if (cores.empty()) return;
    auto unit = [&](const std::string& name, double busy_ps, int count) {
        s.set("units." + name + ".count", count);
        s.set("units." + name + ".busy_cycles", span.cycles(busy_ps));
        s.set("units." + name + ".utilization", span.utilization(busy_ps, count));
    };
    const std::string type = to_string(cores.front()->type());
    double busy_ps = 0;
    for (const AiCore* c : cores) busy_ps += static_cast<double>(c->busy_ps());
    unit(type, busy_ps, static_cast<int>(cores.size()));
    const std::vector<std::string>& pipes = cores.front()->pipe_names();
    for (std::size_t p = 0; p < pipes.size(); ++p) {
        double pipe_busy_ps = 0;
        for (const AiCore* c : cores) pipe_busy_ps += static_cast<double>(c->pipes_[p].busy_ps);
        const std::string name = type + "_" + pipes[p];
        unit(name, pipe_busy_ps, static_cast<int>(cores.size()));
        s.set("units." + name + ".bytes", pipe_bytes(cores, static_cast<int>(p)));
    }
}

std::uint64_t AiCore::pipe_bytes(const std::vector<const AiCore*>& cores, int pipe) {
    std::uint64_t bytes = 0;
    for (const AiCore* c : cores) bytes += c->pipe(pipe).bytes;
    return bytes;
}

}  // namespace npusim
