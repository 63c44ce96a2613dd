// Functional global memory of the supernode, for what ordering can break
// (docs/design.md §1.3): per DataBlock of every rank's GM, when this call's write of
// the block lands and the 8 B flag it carries. A block becomes visible whole,
// at once, at its landing time. The mesh computes landing times when a write
// is posted, so the memory stores them instead of replaying every landing as
// an event: a read at time t is stale if some block it touches lands after t
// (or was never written); a watch on blocks completes at the latest landing
// time of its blocks once every one has been posted with the watched flag.
//
// Blocks are written once per operator call (the dispatch's window, status
// and workspace blocks are); a second write of a block replaces the first.
// Only blocks something writes or watches are stored (pages of 64 blocks,
// made on first touch). Plain C++, no SystemC.
#pragma once
#include <array>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "hw/fabric.hpp"

namespace npusim {

class Stats;

struct StaleRead {
    int rank = 0;        // whose GM was read
    Addr addr = 0;       // first block of the read that had not landed
    int core = 0;        // reader AIV core on that rank
    std::uint64_t time_ps = 0;
};

class GlobalMemory {
public:
    static constexpr std::uint64_t kNever = ~0ULL;
    // A watch completed: (context, owner, tag, time its last block lands).
    using FireFn = void (*)(void* ctx, std::uint32_t owner, std::uint64_t tag, std::uint64_t fire_ps);

    GlobalMemory(int ranks, std::uint32_t block_bytes);

    std::uint32_t block_bytes() const { return block_bytes_; }
    std::uint64_t block_of(Addr a) const { return a / block_bytes_; }

    // A write of block `block` of `rank` was posted: it lands at land_ps,
    // carrying `flag` if has_flag (otherwise the flag is left as it was);
    // `by` wrote it (for the critical path across ranks).
    void post_block(int rank, std::uint64_t block, std::uint64_t land_ps, bool has_flag, std::uint64_t flag,
                    Writer by = {});

    std::uint64_t land_time(int rank, std::uint64_t block) const;  // kNever if not written
    bool landed(int rank, std::uint64_t block, std::uint64_t now_ps) const { return land_time(rank, block) <= now_ps; }
    std::uint64_t flag(int rank, std::uint64_t block) const;  // 0 if never written
    // Who wrote the block that lands last of [first, first + n).
    Writer writer(int rank, std::uint64_t first, std::uint32_t n) const;

    // Watches blocks [first, first + n) of `rank` for flag `value` (any flag
    // without require_flag). Returns true with fire_ps = the latest landing
    // time if every block has already been posted that way (fire is not
    // called); otherwise fire(owner, tag, fire_ps) is called from the
    // post_block that completes it.
    bool watch(int rank, std::uint64_t first, std::uint32_t n, bool require_flag, std::uint64_t value,
               std::uint32_t owner, std::uint64_t tag, std::uint64_t& fire_ps);
    void set_fire(FireFn fn, void* ctx) {
        fire_ = fn;
        fire_ctx_ = ctx;
    }

    // A read of [addr, addr + bytes) of `rank` by AIV `core` at now_ps. Returns
    // false (and counts one stale read) if some block has not landed by then.
    bool check_read(int rank, Addr addr, std::uint64_t bytes, int core, std::uint64_t now_ps);

    std::uint64_t stale_reads() const { return stale_reads_; }
    std::uint64_t stale_blocks() const { return stale_blocks_; }
    std::uint64_t reads_checked() const { return reads_checked_; }
    std::uint64_t blocks_posted() const { return blocks_posted_; }
    std::uint64_t watches() const { return watches_made_; }
    std::size_t pages() const { return pages_.size(); }
    const std::vector<StaleRead>& stale_samples() const { return samples_; }
    // memory_model.*: the stale-read counts and first samples, blocks, watches, pages.
    void report(Stats& s) const;
    static constexpr std::size_t kMaxSamples = 20;

private:
    static constexpr std::uint32_t kNone = 0xFFFFFFFFu;
    static constexpr int kPageBlocks = 64;
    // Who wrote a block: a Writer without the landing time, which is the
    // block's own (8 B a block, not 16: pages are kept to the run's end).
    struct WrittenBy {
        std::int32_t rank = -1;
        std::uint32_t task = UINT32_MAX;
    };
    struct Page {
        std::uint64_t land[kPageBlocks];
        std::uint64_t flag[kPageBlocks];
        WrittenBy by[kPageBlocks];
        std::uint32_t waiters = kNone;  // index into waiter_heads_, made on first watch
        Page() {
            for (auto& l : land) l = kNever;
            for (auto& f : flag) f = 0;
        }
    };
    struct Waiter {
        std::uint32_t watch;
        std::uint32_t next;
    };
    struct Watch {
        std::uint64_t value = 0;
        std::uint64_t tag = 0;
        std::uint64_t fire_ps = 0;
        std::uint32_t remaining = 0;
        std::uint32_t owner = 0;
        bool require_flag = false;
    };

    Page& page(int rank, std::uint64_t page_no);
    const Page* find_page(int rank, std::uint64_t page_no) const;
    static std::uint64_t page_key(int rank, std::uint64_t page_no) {
        return (static_cast<std::uint64_t>(rank) << 44) ^ page_no;
    }
    void grow();

    std::uint32_t block_bytes_;
    // (rank, page) -> page: open addressing, linear probing, power-of-2 size.
    struct Slot {
        std::uint64_t key = kNever;
        std::uint32_t page = 0;
    };
    std::vector<Slot> table_;
    std::uint64_t mask_ = 0;
    std::vector<std::unique_ptr<Page>> pages_;
    std::vector<std::array<std::uint32_t, kPageBlocks>> waiter_heads_;
    std::vector<Watch> watches_;
    std::vector<std::uint32_t> free_watches_;
    std::vector<Waiter> waiters_;
    std::vector<std::uint32_t> free_waiters_;
    FireFn fire_ = nullptr;
    void* fire_ctx_ = nullptr;
    // Last page looked up (landings come in runs of neighbouring blocks).
    mutable std::uint64_t last_key_ = kNever;
    mutable std::uint32_t last_page_ = 0;

    std::uint64_t stale_reads_ = 0, stale_blocks_ = 0, reads_checked_ = 0, blocks_posted_ = 0, watches_made_ = 0;
    std::vector<StaleRead> samples_;
};

}  // namespace npusim
