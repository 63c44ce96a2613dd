// The die's one SystemC process for timed work. Every module of a die (and
// the host runtime driving it) computes when it next needs to act and posts
// that action here; the scheduler keeps one sc_event armed for the earliest
// and, when it fires, runs every action due then in (time, post order).
//
// Why not one sc_event per module: each module would then need its own
// agenda behind its event, and SystemC's timed queue (compared through a
// function pointer) on top; the profile showed two heaps per event. Here an
// event costs one insertion into a sorted array and SystemC sees one pending
// notification per die. Still no clocked process: one activation per due
// time, with SystemC time equal to the model's.
//
// Why a sorted array, not a heap: a die has few actions pending (about one
// per busy module) and a new one is almost always due after most of them,
// so inserting from the back moves a few entries and taking the earliest is
// O(1); a binary heap cost about 150 instructions per event here.
#pragma once
#include <array>
#include <atomic>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <vector>

#include <systemc>

namespace npusim {

namespace detail {
// The time of the WakeScheduler run in progress, or ~0 outside one: the
// modules it wakes ask for the time many times per event, and the kernel's
// sc_time_stamp() is an out-of-line call through the simulation context.
// One per thread: a System's dies may run on two (WakeHub::set_threads).
inline thread_local std::uint64_t running_now_ps = ~std::uint64_t{0};
}  // namespace detail

inline std::uint64_t now_ps() {
    const std::uint64_t t = detail::running_now_ps;
    return t != ~std::uint64_t{0} ? t : sc_core::sc_time_stamp().value();
}

// Every simulation event the model processes, by kind, for the
// benchmark's event rate and where a run's time goes (`engine.events_by`).
// Counted per thread; the WakeHub adds its second thread's counts to the
// main one's.
enum class EventKind : std::uint8_t {
    core,         // a Cube or Vector core's action: a task start, a pipe stage's end, a program resumed
    kernel_call,  // a kernel program's API call on a Vector core
    scalar,       // the scalar core's dispatch and event actions
    hbm_flow,     // a transfer's HBM part ending
    l2_flow,      // a transfer's L2 part ending
    delivery,     // a transfer's bytes arriving at its core
    mesh_chunk,   // a chunk of a remote write on a link plane
    host,         // a host-runtime step
};
inline constexpr std::size_t kEventKinds = 8;
inline constexpr const char* kEventKindNames[kEventKinds] = {"core",    "kernel_call", "scalar",     "hbm_flow",
                                                             "l2_flow", "delivery",    "mesh_chunk", "host"};

struct EventCounts {
    std::array<std::uint64_t, kEventKinds> by{};
    std::uint64_t total() const {
        std::uint64_t n = 0;
        for (const std::uint64_t v : by) n += v;
        return n;
    }
    EventCounts& operator+=(const EventCounts& o) {
        for (std::size_t i = 0; i < kEventKinds; ++i) by[i] += o.by[i];
        return *this;
    }
    EventCounts operator-(const EventCounts& o) const {
        EventCounts d = *this;
        for (std::size_t i = 0; i < kEventKinds; ++i) d.by[i] -= o.by[i];
        return d;
    }
};

inline EventCounts& sim_event_counts() {
    static thread_local EventCounts c;
    return c;
}
inline void count_event(EventKind k) { ++sim_event_counts().by[static_cast<std::size_t>(k)]; }
inline std::uint64_t sim_events_total() { return sim_event_counts().total(); }

// SystemC process activations spent on them (the schedulers' runs).
inline std::uint64_t& sim_activations_total() {
    static std::uint64_t n = 0;
    return n;
}

class WakeHub;

// A module acted on by a WakeScheduler; `action` is the module's own code.
class Wakeable {
public:
    virtual void wake(std::uint64_t action) = 0;

protected:
    ~Wakeable() = default;
};

class WakeScheduler : public sc_core::sc_module {
public:
    // Who runs the actions: a SystemC process (every real run), or the
    // caller of run_alone() (a die evaluated outside the simulation, e.g.
    // by the compiler's planner; no SystemC process, event or time).
    enum class Kernel { systemc, alone };
    explicit WakeScheduler(sc_core::sc_module_name name, Kernel kernel = Kernel::systemc);

    // Runs w.wake(action) at t_ps (>= now; earlier means now). Call during
    // elaboration or from any SystemC process.
    void at(std::uint64_t t_ps, Wakeable& w, std::uint64_t action);

    // In a System of dies: the hub's one process runs this scheduler's
    // actions (lane = the die's rank), and this scheduler has none of its own.
    void attach(WakeHub& hub, int lane);
    int lane() const { return lane_; }
    // The hub's side: every action due at now, in post order.
    void run_due(std::uint64_t now);
    // Inside a hub window: every action due before `end`, in time and post
    // order, each at its own time (now_ps()), those they post before `end`
    // included; without telling the hub when this scheduler is next due
    // (the window may run on another thread): the hub calls rearm() once
    // the window is over.
    void run_window(std::uint64_t end);
    void rearm();
    std::uint64_t next_ps() const;  // earliest pending action, or ~0
    // Kernel::alone: runs every action, in (time, post order), each at its
    // own time (now_ps()), those they post included, until none is left;
    // returns the last one's time. The events it counts are not the
    // simulation's (sim_event_counts() are left as they were).
    std::uint64_t run_alone();

private:
    struct Entry {
        std::uint64_t t;
        Wakeable* w;
        std::uint64_t action;
    };

    void run();
    void arm(std::uint64_t t_ps, std::uint64_t now);
    void pop();  // removes the earliest entry

    sc_core::sc_event ev_;
    WakeHub* hub_ = nullptr;
    int lane_ = 0;
    // Pending actions, queue_[head_..] ascending in time, same-time ones in
    // post order (a new entry goes after all not later); entries before
    // head_ are done and dropped when the array empties or half of it is done.
    std::vector<Entry> queue_;
    std::size_t head_ = 0;
    std::uint64_t armed_ps_;
    std::uint64_t done_ps_ = 0;  // the time of the last action run
    bool running_ = false;
    bool alone_ = false;
};

// The one SystemC process of a System of dies (docs/architecture.md, "How
// time works"): each die keeps its own WakeScheduler (a short sorted array),
// and the hub keeps the dies whose schedulers have work in a heap by (time,
// lane). Without a window, when the earliest comes due it runs that die's
// due actions, then the next die's, so actions at the same time run die by
// die in lane order and, within a die, in post order: deterministic without
// relying on the SystemC kernel's order, and with one pending SystemC
// notification for the whole System instead of one per die and per program.
class WakeHub : public sc_core::sc_module {
public:
    explicit WakeHub(sc_core::sc_module_name name);
    ~WakeHub() override;

    // Scheduler `s` (attached as lane s.lane()) has its earliest action at t_ps.
    void arm(WakeScheduler& s, std::uint64_t t_ps);

    // Conservative lookahead (0: off). With a window W, time is cut into
    // cells [jW, (j+1)W); the lanes that have work before E, the end of the
    // earliest lane's cell (or a later cell's, WindowListener::window_end),
    // each run up to E in one go, one after another by (time of their first
    // action, lane): exact as long as nothing one lane does reaches another
    // sooner than W later (the System sets W below the shortest link
    // latency). Cells on a fixed grid make a window that spans several
    // cells in which no lane reaches another give the same results as the
    // cells one by one. Running lanes a window at a time is much kinder to the
    // caches than hopping between dies at every action. What a lane does to
    // another lane's state (a write landing in its memory) is not done while
    // the lanes run: the lanes' owner queues it and applies it in order once
    // they have stopped (WindowListener), so no lane touches another's state.
    void set_window(std::uint64_t w_ps) { window_ps_ = w_ps; }
    std::uint64_t window() const { return window_ps_; }
    std::uint64_t windows_run() const { return windows_run_; }  // windows (or instants) the lanes ran in

    struct WindowListener {
        // On the SystemC thread, every lane stopped: after each window, or
        // without one after each instant.
        virtual void window_over() = 0;
        // Before a window that would end at `end` (a multiple of the window
        // after `now`, the earliest lane's time): a later multiple if no
        // lane can affect another before it (System: no die can post a
        // write before it).
        virtual std::uint64_t window_end(std::uint64_t now, std::uint64_t end) {
            (void)now;
            return end;
        }

    protected:
        ~WindowListener() = default;
    };
    void set_listener(WindowListener* l) { listener_ = l; }

    // With a window, the lanes may run on two threads (1: one): the lower
    // half of the lanes on the SystemC thread, the upper half on a second
    // one, always the same lanes on the same thread. On one thread the due
    // lanes run in (time, lane) order. State the lanes share (the fabric) is
    // reached only through calls that first call serialize(): it waits
    // until the other thread has run every lane before the caller's in that
    // order, so the shared state sees the lanes in the same order on one
    // thread or two, and the results are identical.
    void set_threads(int n) { threads_ = n < 2 ? 1 : 2; }
    int threads() const { return threads_; }
    void serialize();

private:
    struct Lane {
        WakeScheduler* s = nullptr;
        std::uint64_t t = ~std::uint64_t{0};  // when it is due; ~0: not in the heap
        std::uint32_t pos = 0;                // its index in heap_
    };
    void run();
    void run_window(std::uint64_t end);
    void run_lanes(int thread, std::uint64_t end);  // that thread's lanes of the window
    bool before(std::uint32_t a, std::uint32_t b) const {
        return lanes_[a].t != lanes_[b].t ? lanes_[a].t < lanes_[b].t : a < b;
    }
    void sift_up(std::uint32_t i);
    void sift_down(std::uint32_t i);
    void place(std::uint32_t lane, std::uint64_t t);  // insert, move or (t = ~0) remove
    void notify(std::uint64_t now);

    sc_core::sc_event ev_;
    std::vector<Lane> lanes_;
    std::vector<std::uint32_t> heap_;  // lane indices, a binary min-heap by (t, lane)
    std::vector<std::uint32_t> due_;   // the window's lanes, in (time, lane) order
    std::vector<std::size_t> mine_[2];  // per thread, its lanes' positions in due_
    std::uint64_t armed_ps_;
    std::uint64_t window_ps_ = 0;
    std::uint64_t windows_run_ = 0;
    bool running_ = false;
    bool in_window_ = false;
    WindowListener* listener_ = nullptr;
    int threads_ = 1;
    // While both threads run a window: per thread, the position in due_ of
    // the lane it runs (kNoLane: none left).
    static constexpr std::size_t kNoLane = ~std::size_t{0};
    std::atomic<std::size_t> pos_[2]{};
    std::atomic<bool> parallel_{false};
    struct Worker;
    std::unique_ptr<Worker> worker_;  // the second thread, started on first use
};

}  // namespace npusim
