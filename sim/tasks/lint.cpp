#include "tasks/lint.hpp"

#include "common/arith.hpp"

#include <algorithm>
#include <cctype>
#include <map>
#include <tuple>
#include <functional>  // std::greater
#include <limits>
#include <queue>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "common/errors.hpp"

// How the analysis works (docs/lint.md has the user's view).
//
// Nodes are the tasks and the events. Edges: task -> event it signals,
// event -> task that waits on it (so a counting event with N signallers
// gives an edge from each), and task -> next task of the same stream.
// An event edge guarantees "ends before starts"; a stream edge only
// "dispatched before" (the head moves on at dispatch), so a task x precedes
// a task y when a path from x to y begins with x signalling an event:
//   PA(y) = the tasks that precede y
//         = U over waited events ev of PA(ev)  U  PA(stream predecessor)
//   PA(ev) = U over signallers s of (PA(s) + {s}).
// A true dependence is a pair a in PA(b) whose regions conflict;
// TD(b) = PA(b) n conflicts(b). D(x) = U of TD over x and everything after
// it: the tasks whose ordering anything from x onwards relies on.
//
// Removing an edge can only take tasks out of PA sets downstream of it.
// The check walks those nodes in topological order carrying lost(x) =
// (PA(x) \ PA'(x)) n D(x): the D intersection keeps the walk short (a lost
// task that nothing further down depends on is dropped) and is exact,
// because a lost true predecessor of y is lost, and in D, at every node
// between the edge and y. The edge is needed as soon as lost(y) meets TD(y).
// Bit positions are topological ranks, so lost sets stay in a narrow word
// range and the walk works on that range only.

namespace npusim {

LintRegions lint_regions(const Task& t) {
    LintRegions r;
    const KernelParams& p = t.params;
    if (t.kernel == Kernel::scalar) {
        r.reads = t.reads;
        r.writes = t.writes;
        r.everything = r.reads.empty() && r.writes.empty();
        return r;
    }
    bool reads_known = true, writes_known = true;
    if (!t.reads.empty()) {
        r.reads = t.reads;
    } else if (p.has_addr) {
        std::uint64_t bytes = p.bytes;
        if (t.kernel == Kernel::matmul) {
            const std::uint64_t elt = static_cast<std::uint64_t>(dtype_bytes(p.dtype));
            bytes = std::max(p.a_bytes, p.m * p.k * elt) + p.k * p.n * elt;
        }
        r.reads.push_back(Region{p.src, p.addr, bytes});
    } else {
        reads_known = false;
    }
    if (!t.writes.empty()) {
        r.writes = t.writes;
    } else {
        const std::uint64_t bytes = t.kernel == Kernel::matmul ? p.m * p.n * 2 : p.out_bytes;
        if (bytes > 0) {
            if (p.has_out_addr) r.writes.push_back(Region{p.dst, p.out_addr, bytes});
            else writes_known = false;
        }
    }
    r.everything = !reads_known || !writes_known;
    return r;
}

bool regions_overlap(const Region& a, const Region& b) {
    // hbm and l2 are one global address space (l2 only says the data is
    // resident in L2), so they alias each other; ub and l1 only themselves.
    const bool same_memory = a.space == b.space || (is_global(a.space) && is_global(b.space));
    if (!same_memory) return false;
    Region bb = b;
    bb.space = a.space;
    return overlaps(a, bb);
}

namespace {

bool any_overlap(const std::vector<Region>& x, const std::vector<Region>& y) {
    for (const Region& a : x)
        for (const Region& b : y)
            if (regions_overlap(a, b)) return true;
    return false;
}

}  // namespace

bool regions_conflict(const LintRegions& a, const LintRegions& b) {
    if (a.everything || b.everything) return true;
    return any_overlap(a.writes, b.reads) || any_overlap(a.writes, b.writes) || any_overlap(a.reads, b.writes);
}

namespace {

using Word = std::uint64_t;
constexpr std::uint32_t kNone = std::numeric_limits<std::uint32_t>::max();
// Bitsets beyond this would not fit a workstation; say so instead of dying.
constexpr double kMaxBitsetBytes = 8.0 * 1024 * 1024 * 1024;

class BitMatrix {
public:
    BitMatrix() = default;
    BitMatrix(std::size_t rows, std::size_t words) : words_(words), data_(rows * words, 0) {}
    Word* row(std::size_t r) { return data_.data() + r * words_; }
    const Word* row(std::size_t r) const { return data_.data() + r * words_; }

private:
    std::size_t words_ = 0;
    std::vector<Word> data_;
};

inline void set_bit(Word* w, std::uint32_t i) { w[i >> 6] |= Word{1} << (i & 63); }
inline bool test_bit(const Word* w, std::uint32_t i) { return (w[i >> 6] >> (i & 63)) & 1; }

std::string where(const TaskStream& ts, const Task& t) { return fmt::format("{}:{}", ts.file, t.line); }

// A set of task bits that is zero outside words [lo, hi).
struct Lost {
    std::uint32_t lo = 0, hi = 0;
    std::vector<Word> w;  // w[i - lo]
};

// What one check removes: the edge signaller -> waiter of `ev` (single), or
// every edge of `ev` (joint).
struct Removal {
    EventIndex ev = 0;
    bool joint = false;
    std::uint32_t from = 0, to = 0;  // single
    const Word* except = nullptr;    // single: U (PA(s) + {s}) over the event's other signallers
};

class Analysis {
public:
    Analysis(const TaskStream& ts, LintReport& rep) : ts_(ts), rep_(rep) {}

    void run() {
        build_graph();
        if (!order_nodes()) return;
        check_event_counts();
        if (!rep_.deadlocks.empty()) return;
        allocate();
        compute_precedence();
        compute_conflicts();
        compute_downstream();
        check_edges();
    }

private:
    const TaskStream& ts_;
    LintReport& rep_;
    std::uint32_t V_ = 0, N_ = 0;  // tasks, events
    std::size_t W_ = 0;            // words per bitset row

    std::vector<LintRegions> regions_;
    std::vector<std::vector<EventIndex>> waits_, signals_;  // per task, deduplicated
    std::vector<std::uint32_t> stream_pred_, stream_succ_;
    std::vector<std::vector<std::uint32_t>> signallers_, waiters_;  // per event, task order
    std::vector<std::uint64_t> signal_count_;                       // per event, with repeats

    std::vector<std::uint32_t> order_;  // nodes in topological order (tasks 0..V-1, events V..)
    std::vector<std::uint32_t> pos_;    // node -> index in order_
    std::vector<std::uint32_t> rank_;   // task -> bit position (topological rank among tasks)

    BitMatrix pa_, d_, td_;

    // Per-check scratch.
    std::vector<std::int32_t> slot_;  // node -> index into lost_, or -1
    std::vector<Lost> lost_;
    std::vector<std::uint32_t> touched_;
    std::vector<char> queued_;
    std::vector<Word> cand_;

    // ---------------------------------------------------------------- graph
    void build_graph() {
        V_ = static_cast<std::uint32_t>(ts_.tasks.size());
        N_ = static_cast<std::uint32_t>(ts_.events.size());
        W_ = (V_ + 63) / 64;
        rep_.tasks = V_;
        rep_.events = N_;
        regions_.resize(V_);
        waits_.resize(V_);
        signals_.resize(V_);
        stream_pred_.assign(V_, kNone);
        stream_succ_.assign(V_, kNone);
        signallers_.resize(N_);
        waiters_.resize(N_);
        signal_count_.assign(N_, 0);
        std::vector<std::uint32_t> last_in_stream(ts_.streams.size(), kNone);
        for (std::uint32_t t = 0; t < V_; ++t) {
            const Task& task = ts_.tasks[t];
            regions_[t] = lint_regions(task);
            if (regions_[t].everything) rep_.conservative.push_back(t);
            waits_[t] = task.wait;
            std::sort(waits_[t].begin(), waits_[t].end());
            waits_[t].erase(std::unique(waits_[t].begin(), waits_[t].end()), waits_[t].end());
            signals_[t] = task.signal;
            std::sort(signals_[t].begin(), signals_[t].end());
            signals_[t].erase(std::unique(signals_[t].begin(), signals_[t].end()), signals_[t].end());
            for (EventIndex e : task.signal) ++signal_count_[e];
            for (EventIndex e : signals_[t]) signallers_[e].push_back(t);
            for (EventIndex e : waits_[t]) waiters_[e].push_back(t);
            std::uint32_t& last = last_in_stream[task.stream];
            if (last != kNone) {
                stream_pred_[t] = last;
                stream_succ_[last] = t;
                ++rep_.stream_edges;
            }
            last = t;
        }
        for (EventIndex e = 0; e < N_; ++e)
            rep_.event_edges += static_cast<std::uint64_t>(signallers_[e].size()) * waiters_[e].size();
    }

    template <class F>
    void for_each_pred(std::uint32_t node, F&& f) const {
        if (node < V_) {
            for (EventIndex e : waits_[node]) f(V_ + e);
            if (stream_pred_[node] != kNone) f(stream_pred_[node]);
        } else {
            for (std::uint32_t s : signallers_[node - V_]) f(s);
        }
    }
    template <class F>
    void for_each_succ(std::uint32_t node, F&& f) const {
        if (node < V_) {
            for (EventIndex e : signals_[node]) f(V_ + e);
            if (stream_succ_[node] != kNone) f(stream_succ_[node]);
        } else {
            for (std::uint32_t w : waiters_[node - V_]) f(w);
        }
    }

    std::string node_name(std::uint32_t node) const {
        return node < V_ ? fmt::format("'{}'", ts_.tasks[node].id) : fmt::format("event '{}'", ts_.events[node - V_].id);
    }

    // Kahn's algorithm; on a cycle, reports one and returns false.
    bool order_nodes() {
        const std::uint32_t n = V_ + N_;
        std::vector<std::uint32_t> indeg(n, 0);
        for (std::uint32_t x = 0; x < n; ++x) for_each_succ(x, [&](std::uint32_t y) { ++indeg[y]; });
        std::queue<std::uint32_t> ready;
        for (std::uint32_t x = 0; x < n; ++x)
            if (indeg[x] == 0) ready.push(x);
        order_.reserve(n);
        while (!ready.empty()) {
            const std::uint32_t x = ready.front();
            ready.pop();
            order_.push_back(x);
            for_each_succ(x, [&](std::uint32_t y) {
                if (--indeg[y] == 0) ready.push(y);
            });
        }
        if (order_.size() == n) {
            pos_.assign(n, 0);
            for (std::uint32_t i = 0; i < n; ++i) pos_[order_[i]] = i;
            rank_.assign(V_, 0);
            std::uint32_t r = 0;
            for (std::uint32_t x : order_)
                if (x < V_) rank_[x] = r++;
            return true;
        }
        // Every node left has a predecessor that is also left: walk back until a repeat.
        std::uint32_t x = 0;
        while (indeg[x] == 0) ++x;
        std::vector<std::uint32_t> seen_at(n, kNone), path;
        while (seen_at[x] == kNone) {
            seen_at[x] = static_cast<std::uint32_t>(path.size());
            path.push_back(x);
            std::uint32_t next = kNone;
            for_each_pred(x, [&](std::uint32_t q) {
                if (next == kNone && indeg[q] != 0) next = q;
            });
            x = next;
        }
        std::vector<std::uint32_t> cycle(path.begin() + seen_at[x], path.end());
        std::reverse(cycle.begin(), cycle.end());  // forward order, from the task first in the file
        std::rotate(cycle.begin(), std::min_element(cycle.begin(), cycle.end()), cycle.end());
        std::string text = node_name(cycle[0]);
        for (std::size_t i = 0; i < cycle.size(); ++i) {
            const std::uint32_t a = cycle[i], b = cycle[(i + 1) % cycle.size()];
            if (b >= V_) continue;  // task -> event: printed with the event's waiter
            if (a >= V_) text += fmt::format(" -[event '{}']-> {}", ts_.events[a - V_].id, node_name(b));
            else text += fmt::format(" -[stream '{}']-> {}", ts_.streams[ts_.tasks[b].stream], node_name(b));
        }
        rep_.deadlocks.push_back(fmt::format("deadlock: the waits form a cycle: {} ({}); no task of it can start",
                                             text, where(ts_, ts_.tasks[cycle[0]])));
        return false;
    }

    void check_event_counts() {
        for (EventIndex e = 0; e < N_; ++e) {
            if (waiters_[e].empty()) continue;
            const EventDecl& ev = ts_.events[e];
            const Task& w = ts_.tasks[waiters_[e].front()];
            if (signal_count_[e] < ev.count) {
                std::string by;
                for (std::size_t i = 0; i < signallers_[e].size() && i < 3; ++i)
                    by += fmt::format("{}'{}'", i ? ", " : "", ts_.tasks[signallers_[e][i]].id);
                if (signallers_[e].size() > 3) by += ", ...";
                rep_.deadlocks.push_back(fmt::format(
                    "deadlock: event '{}' needs {} signal(s) but the stream gives it {}{}; '{}' ({}) waits on it forever",
                    ev.id, ev.count, signal_count_[e], by.empty() ? "" : " (from " + by + ")", w.id, where(ts_, w)));
            } else if (signal_count_[e] > ev.count) {
                rep_.notes.push_back(fmt::format(
                    "event '{}' gets {} signals but fires after {}; the lint assumes each of its signallers ends "
                    "before its waiters start, which the simulator does not guarantee",
                    ev.id, signal_count_[e], ev.count));
            }
        }
    }

    // ----------------------------------------------------------- closures
    void allocate() {
        const double rows = 2.0 * (V_ + N_) + V_;
        const double bytes = rows * static_cast<double>(W_) * sizeof(Word);
        if (bytes > kMaxBitsetBytes)
            throw InputError(fmt::format("{}: {} tasks and {} events are too many for npusim lint "
                                         "(it would need {:.1f} GB of reachability bitsets)",
                                         ts_.file, V_, N_, bytes / 1e9));
        pa_ = BitMatrix(V_ + N_, W_);
        d_ = BitMatrix(V_ + N_, W_);
        td_ = BitMatrix(V_, W_);
        cand_.assign(W_, 0);
        slot_.assign(V_ + N_, -1);
        queued_.assign(V_ + N_, 0);
    }

    static void or_row(Word* dst, const Word* src, std::size_t lo, std::size_t hi) {
        for (std::size_t i = lo; i < hi; ++i) dst[i] |= src[i];
    }

    void compute_precedence() {
        for (std::uint32_t x : order_) {
            Word* row = pa_.row(x);
            if (x < V_) {
                for (EventIndex e : waits_[x]) or_row(row, pa_.row(V_ + e), 0, W_);
                if (stream_pred_[x] != kNone) or_row(row, pa_.row(stream_pred_[x]), 0, W_);
            } else {
                for (std::uint32_t s : signallers_[x - V_]) {
                    or_row(row, pa_.row(s), 0, W_);
                    set_bit(row, rank_[s]);
                }
            }
        }
    }

    void set_conflict(std::uint32_t a, std::uint32_t b) {
        set_bit(td_.row(a), rank_[b]);
        set_bit(td_.row(b), rank_[a]);
    }

    // Conflicting pairs by a sweep over regions sorted by address: every
    // overlapping pair is found from the one that starts first, and only
    // pairs with a write in them are visited.
    void compute_conflicts() {
        struct Iv {
            Space space;
            std::uint64_t start, end;
            std::uint32_t task;
        };
        std::vector<Iv> all, writes;
        for (std::uint32_t t = 0; t < V_; ++t) {
            if (regions_[t].everything) continue;
            for (const Region& r : regions_[t].reads)
                if (r.bytes) r.for_each_row([&](std::uint64_t a, std::uint64_t n) { all.push_back(Iv{r.space, a, a + n, t}); });
            for (const Region& r : regions_[t].writes)
                if (r.bytes)
                    r.for_each_row([&](std::uint64_t a, std::uint64_t n) {
                        all.push_back(Iv{r.space, a, a + n, t});
                        writes.push_back(Iv{r.space, a, a + n, t});
                    });
        }
        // hbm and l2 sort as one space: they alias (see regions_overlap).
        auto memory = [](Space s) { return is_global(s) ? Space::hbm : s; };
        for (auto* v : {&all, &writes})
            for (Iv& iv : *v) iv.space = memory(iv.space);
        auto before = [](const Iv& a, const Iv& b) {
            return a.space != b.space ? a.space < b.space : a.start < b.start;
        };
        std::sort(all.begin(), all.end(), before);
        std::sort(writes.begin(), writes.end(), before);
        // Pairs whose later-starting member is in `later`, found from each member of `first`.
        auto sweep = [&](const std::vector<Iv>& first, const std::vector<Iv>& later) {
            for (const Iv& a : first) {
                auto it = std::lower_bound(later.begin(), later.end(), a, before);
                for (; it != later.end() && it->space == a.space && it->start < a.end; ++it)
                    if (it->task != a.task) set_conflict(a.task, it->task);
            }
        };
        sweep(all, writes);  // a write starting inside any region
        sweep(writes, all);  // anything starting inside a write
        for (std::uint32_t u : rep_.conservative) {
            Word* row = td_.row(u);
            for (std::size_t i = 0; i < W_; ++i) row[i] = ~Word{0};
            for (std::uint32_t t = 0; t < V_; ++t) set_bit(td_.row(t), rank_[u]);
        }
        for (std::uint32_t t = 0; t < V_; ++t) {
            Word* row = td_.row(t);
            const Word* pa = pa_.row(t);
            for (std::size_t i = 0; i < W_; ++i) {
                row[i] &= pa[i];
                rep_.true_dependences += popcount64(row[i]);
            }
        }
    }

    void compute_downstream() {
        for (auto it = order_.rbegin(); it != order_.rend(); ++it) {
            const std::uint32_t x = *it;
            Word* row = d_.row(x);
            if (x < V_) or_row(row, td_.row(x), 0, W_);
            for_each_succ(x, [&](std::uint32_t y) { or_row(row, d_.row(y), 0, W_); });
        }
    }

    // ------------------------------------------------------------- checks
    Lost* lost_of(std::uint32_t node) { return slot_[node] < 0 ? nullptr : &lost_[static_cast<std::size_t>(slot_[node])]; }

    // cand[lo, hi) &= ~(PA(q) minus lost(q)) [minus bit q when `with_self`].
    void remove_contribution(std::uint32_t q, bool with_self, std::uint32_t lo, std::uint32_t hi) {
        const Word* pa = pa_.row(q);
        const Lost* l = lost_of(q);
        for (std::uint32_t i = lo; i < hi; ++i) {
            Word keep = pa[i];
            if (l && i >= l->lo && i < l->hi) keep &= ~l->w[i - l->lo];
            cand_[i] &= ~keep;
        }
        if (with_self) {
            const std::uint32_t b = rank_[q];
            if ((b >> 6) >= lo && (b >> 6) < hi) cand_[b >> 6] &= ~(Word{1} << (b & 63));
        }
    }

    static void nonzero_range(const Word* w, std::uint32_t& lo, std::uint32_t& hi, std::size_t n) {
        lo = 0;
        hi = 0;
        std::size_t i = 0;
        while (i < n && w[i] == 0) ++i;
        if (i == n) return;
        std::size_t j = n;
        while (w[j - 1] == 0) --j;
        lo = static_cast<std::uint32_t>(i);
        hi = static_cast<std::uint32_t>(j);
    }

    // Computes lost(x); returns false when x loses a true predecessor.
    bool visit(std::uint32_t x, const Removal& rm) {
        const bool seed = x < V_ && (rm.joint ? std::binary_search(waits_[x].begin(), waits_[x].end(), rm.ev) : x == rm.to);
        // Lost candidates: what the removed edge brought, and what changed predecessors lost.
        const Word* removed = nullptr;
        std::uint32_t lo = std::numeric_limits<std::uint32_t>::max(), hi = 0;
        Word self_word = 0;
        std::uint32_t self_index = 0;
        if (seed) {
            if (rm.joint) {
                removed = pa_.row(V_ + rm.ev);
            } else {
                removed = pa_.row(rm.from);
                self_index = rank_[rm.from] >> 6;
                self_word = Word{1} << (rank_[rm.from] & 63);
            }
            std::uint32_t l, h;
            nonzero_range(removed, l, h, W_);
            if (self_word) {
                l = h > l ? std::min(l, self_index) : self_index;
                h = std::max(h, self_index + 1);
            }
            if (h > l) lo = std::min(lo, l), hi = std::max(hi, h);
        }
        for_each_pred(x, [&](std::uint32_t q) {
            if (const Lost* l = lost_of(q)) lo = std::min(lo, l->lo), hi = std::max(hi, l->hi);
        });
        if (lo >= hi) return true;
        std::fill(cand_.begin() + lo, cand_.begin() + hi, Word{0});
        if (removed) or_row(cand_.data(), removed, lo, hi);
        if (self_word) cand_[self_index] |= self_word;
        for_each_pred(x, [&](std::uint32_t q) {
            if (const Lost* l = lost_of(q))
                for (std::uint32_t i = l->lo; i < l->hi; ++i) cand_[i] |= l->w[i - l->lo];
        });
        const Word* d = d_.row(x);
        for (std::uint32_t i = lo; i < hi; ++i) cand_[i] &= d[i];
        // Take out what the kept edges still bring.
        if (x < V_) {
            for (EventIndex e : waits_[x]) {
                if (seed && e == rm.ev) {
                    if (!rm.joint && rm.except)
                        for (std::uint32_t i = lo; i < hi; ++i) cand_[i] &= ~rm.except[i];
                    continue;
                }
                remove_contribution(V_ + e, false, lo, hi);
            }
            if (stream_pred_[x] != kNone) remove_contribution(stream_pred_[x], false, lo, hi);
        } else {
            for (std::uint32_t s : signallers_[x - V_]) remove_contribution(s, true, lo, hi);
        }
        std::uint32_t l, h;
        nonzero_range(cand_.data() + lo, l, h, hi - lo);
        if (h <= l) return true;
        l += lo;
        h += lo;
        if (x < V_) {
            const Word* td = td_.row(x);
            for (std::uint32_t i = l; i < h; ++i)
                if (cand_[i] & td[i]) return false;
        }
        slot_[x] = static_cast<std::int32_t>(touched_.size());
        touched_.push_back(x);
        if (lost_.size() < touched_.size()) lost_.emplace_back();
        Lost& out = lost_[touched_.size() - 1];
        out.lo = l;
        out.hi = h;
        out.w.assign(cand_.begin() + l, cand_.begin() + h);
        return true;
    }

    // True when every true dependence is still ordered without the removed edge(s).
    bool keeps_order(const Removal& rm) {
        using Item = std::pair<std::uint32_t, std::uint32_t>;  // (topological position, node)
        std::priority_queue<Item, std::vector<Item>, std::greater<Item>> heap;
        std::vector<std::uint32_t> queued_nodes;
        auto push = [&](std::uint32_t node) {
            if (queued_[node]) return;
            queued_[node] = 1;
            queued_nodes.push_back(node);
            heap.emplace(pos_[node], node);
        };
        if (rm.joint) {
            for (std::uint32_t w : waiters_[rm.ev]) push(w);
        } else {
            push(rm.to);
        }
        bool ok = true;
        while (ok && !heap.empty()) {
            const std::uint32_t x = heap.top().second;
            heap.pop();
            ok = visit(x, rm);
            if (ok && slot_[x] >= 0) for_each_succ(x, push);
        }
        for (std::uint32_t n : queued_nodes) queued_[n] = 0;
        for (std::uint32_t n : touched_) slot_[n] = -1;
        touched_.clear();
        return ok;
    }

    void check_edges() {
        std::vector<Word> suffix, prefix(W_), except(W_);
        for (EventIndex e = 0; e < N_; ++e) {
            const auto& sig = signallers_[e];
            const auto& wai = waiters_[e];
            if (sig.empty() || wai.empty()) continue;
            LintEventSummary sum;
            sum.event = e;
            sum.edges = static_cast<std::uint64_t>(sig.size()) * wai.size();
            bool any_candidate = false;
            for (std::uint32_t p : sig)
                for (std::uint32_t c : wai) any_candidate = any_candidate || !test_bit(td_.row(c), rank_[p]);
            if (!any_candidate) continue;
            // suffix[i] = U over signallers after i of (PA(s) + {s}); prefix runs along.
            suffix.assign(sig.size() * W_, 0);
            for (std::size_t i = sig.size() - 1; i > 0; --i) {
                Word* dst = suffix.data() + (i - 1) * W_;
                std::copy(suffix.begin() + static_cast<std::ptrdiff_t>(i * W_),
                          suffix.begin() + static_cast<std::ptrdiff_t>((i + 1) * W_), dst);
                or_row(dst, pa_.row(sig[i]), 0, W_);
                set_bit(dst, rank_[sig[i]]);
            }
            std::fill(prefix.begin(), prefix.end(), Word{0});
            for (std::size_t i = 0; i < sig.size(); ++i) {
                const std::uint32_t p = sig[i];
                for (std::size_t k = 0; k < W_; ++k) except[k] = prefix[k] | suffix[i * W_ + k];
                for (std::uint32_t c : wai) {
                    if (test_bit(td_.row(c), rank_[p])) continue;  // a direct data dependence
                    Removal rm;
                    rm.ev = e;
                    rm.from = p;
                    rm.to = c;
                    rm.except = except.data();
                    if (keeps_order(rm)) {
                        rep_.over_sync.push_back(LintEdge{e, p, c});
                        ++sum.redundant;
                    }
                }
                or_row(prefix.data(), pa_.row(p), 0, W_);
                set_bit(prefix.data(), rank_[p]);
            }
            if (sum.redundant == 0) continue;
            if (sum.redundant == sum.edges) {
                Removal rm;
                rm.ev = e;
                rm.joint = true;
                sum.removable = sum.edges == 1 || keeps_order(rm);
            }
            rep_.event_summary.push_back(sum);
        }
        std::sort(rep_.over_sync.begin(), rep_.over_sync.end(), [&](const LintEdge& a, const LintEdge& b) {
            const Task &ta = ts_.tasks[a.to], &tb = ts_.tasks[b.to];
            const Task &fa = ts_.tasks[a.from], &fb = ts_.tasks[b.from];
            if (a.event != b.event) return a.event < b.event;
            if (ta.line != tb.line) return ta.line < tb.line;
            return fa.line < fb.line;
        });
    }
};

std::string plural(std::uint64_t n, const char* one, const char* many) {
    return fmt::format("{} {}", n, n == 1 ? one : many);
}

}  // namespace

LintReport lint_task_stream(const TaskStream& ts) {
    LintReport rep;
    Analysis(ts, rep).run();
    return rep;
}

namespace {

// What a task is, for grouping: its op, or its id with the digits dropped.
std::string task_kind(const TaskStream& ts, const Task& t) {
    if (t.op) return ts.name(t.op);
    std::string s;
    for (char c : t.id)
        if (!std::isdigit(static_cast<unsigned char>(c))) s += c;
    return s;
}

// One line per (event, signalling op, waiting op), in order of first finding,
// with the event's verdict beside it.
std::string grouped_findings(const TaskStream& ts, const LintReport& r) {
    struct Group {
        const LintEdge* first;
        std::uint64_t count = 0;
    };
    std::vector<std::tuple<EventIndex, std::string, std::string>> order;
    std::map<std::tuple<EventIndex, std::string, std::string>, Group> groups;
    for (const LintEdge& e : r.over_sync) {
        auto key = std::make_tuple(e.event, task_kind(ts, ts.tasks[e.from]), task_kind(ts, ts.tasks[e.to]));
        auto [it, fresh] = groups.try_emplace(key, Group{&e});
        if (fresh) order.push_back(key);
        ++it->second.count;
    }
    std::map<EventIndex, const LintEventSummary*> verdicts;
    for (const LintEventSummary& s : r.event_summary) verdicts[s.event] = &s;
    std::string out = fmt::format("over-synchronisation, {} in {} (grouped by event and the ops it joins):\n",
                                  plural(r.over_sync.size(), "edge", "edges"), plural(order.size(), "group", "groups"));
    for (const auto& key : order) {
        const Group& g = groups.at(key);
        const LintEventSummary* v = verdicts.count(std::get<0>(key)) ? verdicts[std::get<0>(key)] : nullptr;
        std::string verdict;
        if (v && v->removable) verdict = "the event can be removed";
        else if (v && v->redundant < v->edges)
            verdict = fmt::format("{} of the event's {} edges order a true dependence", v->edges - v->redundant, v->edges);
        else if (v) verdict = "remove edges one at a time and rerun";
        const Task& to = ts.tasks[g.first->to];
        out += fmt::format("  {:>5} x event '{}' orders {} -> {}, e.g. '{}' -> '{}' ({}:{}); {}\n", g.count,
                           ts.events[std::get<0>(key)].id, std::get<1>(key), std::get<2>(key), ts.tasks[g.first->from].id,
                           to.id, ts.file, to.line, verdict);
    }
    std::uint64_t removable = 0, finer = 0, one_by_one = 0;
    for (const LintEventSummary& s : r.event_summary) {
        if (s.removable) ++removable;
        else if (s.redundant < s.edges) ++finer;
        else ++one_by_one;
    }
    out += fmt::format("events: {} can be removed, {} would keep their true dependences with finer granularity, {} "
                       "need edges removed one at a time\n",
                       removable, finer, one_by_one);
    return out;
}

}  // namespace

std::string lint_report_text(const TaskStream& ts, const LintReport& r, bool summary) {
    std::string out = fmt::format("lint {}: {}, {}, {} and {}, {}\n", ts.file, plural(r.tasks, "task", "tasks"),
                                  plural(r.events, "event", "events"),
                                  plural(r.event_edges, "event edge", "event edges"),
                                  plural(r.stream_edges, "stream edge", "stream edges"),
                                  plural(r.true_dependences, "true dependence", "true dependences"));
    for (const std::string& d : r.deadlocks) out += d + "\n";
    if (!r.conservative.empty()) {
        std::string ids;
        for (std::size_t i = 0; i < r.conservative.size() && i < 5; ++i)
            ids += fmt::format("{}'{}'", i ? ", " : "", ts.tasks[r.conservative[i]].id);
        if (r.conservative.size() > 5) ids += ", ...";
        out += fmt::format(
            "note: {} without reads/writes regions (and no address to derive them from) treated as touching "
            "all memory; edges into or out of them are never reported: {}\n",
            plural(r.conservative.size(), "task", "tasks"), ids);
    }
    for (const std::string& n : r.notes) out += "note: " + n + "\n";
    if (summary && !r.over_sync.empty()) out += grouped_findings(ts, r);
    const std::size_t shown_edges = summary ? 0 : r.over_sync.size();  // grouped above instead
    for (std::size_t i = 0; i < shown_edges; ++i) {
        const LintEdge& e = r.over_sync[i];
        const Task& to = ts.tasks[e.to];
        out += fmt::format(
            "over-synchronisation: event '{}' orders '{}' -> '{}' ({}:{}), but they share no written data and no "
            "other dependence needs it\n",
            ts.events[e.event].id, ts.tasks[e.from].id, to.id, ts.file, to.line);
    }
    const std::size_t shown_events = summary ? 0 : r.event_summary.size();
    for (std::size_t i = 0; i < shown_events; ++i) {
        const LintEventSummary& s = r.event_summary[i];
        const std::string& id = ts.events[s.event].id;
        if (s.removable) {
            out += fmt::format("event '{}' can be removed: none of its {} is needed\n", id,
                               plural(s.edges, "edge", "edges"));
        } else if (s.redundant < s.edges) {
            out += fmt::format(
                "event '{}': {} of its {} edges are over-synchronisation; only {} order a true dependence "
                "(a finer-grained event would keep just those)\n",
                id, s.redundant, s.edges, s.edges - s.redundant);
        } else {
            out += fmt::format(
                "event '{}': each of its {} edges is over-synchronisation on its own, but not all together: "
                "without the event a true dependence would be unordered; remove edges one at a time and rerun "
                "the lint\n",
                id, s.edges);
        }
    }
    if (!r.deadlocks.empty())
        out += fmt::format("FAILED: the stream deadlocks ({}); over-synchronisation not analysed\n",
                           plural(r.deadlocks.size(), "problem", "problems"));
    else if (!r.over_sync.empty())
        out += fmt::format("FAILED: {} in {}\n",
                           plural(r.over_sync.size(), "over-synchronised edge", "over-synchronised edges"),
                           plural(r.event_summary.size(), "event", "events"));
    else
        out += "ok: no over-synchronisation\n";
    return out;
}

std::string lint_report_json(const TaskStream& ts, const LintReport& r) {
    using json = nlohmann::json;
    json j;
    j["file"] = ts.file;
    j["ok"] = r.clean();
    j["tasks"] = r.tasks;
    j["events"] = r.events;
    j["event_edges"] = r.event_edges;
    j["stream_edges"] = r.stream_edges;
    j["true_dependences"] = r.true_dependences;
    json cons = json::array();
    for (std::uint32_t t : r.conservative) cons.push_back(ts.tasks[t].id);
    j["conservative_tasks"] = cons;
    json edges = json::array();
    for (const LintEdge& e : r.over_sync) {
        const Task &from = ts.tasks[e.from], &to = ts.tasks[e.to];
        edges.push_back({{"event", ts.events[e.event].id},
                         {"from", from.id},
                         {"from_line", from.line},
                         {"to", to.id},
                         {"to_line", to.line}});
    }
    j["over_synchronisation"] = edges;
    json events = json::array();
    for (const LintEventSummary& s : r.event_summary)
        events.push_back({{"event", ts.events[s.event].id},
                          {"edges", s.edges},
                          {"redundant", s.redundant},
                          {"removable", s.removable}});
    j["events_with_over_synchronisation"] = events;
    j["deadlocks"] = r.deadlocks;
    j["notes"] = r.notes;
    return j.dump(2) + "\n";
}

}  // namespace npusim
