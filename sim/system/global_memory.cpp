#include "system/global_memory.hpp"

#include <algorithm>
#include <array>
#include <stdexcept>

#include <fmt/format.h>

#include "system/plane_hash.hpp"
#include "stats/stats.hpp"

namespace npusim {

GlobalMemory::GlobalMemory(int ranks, std::uint32_t block_bytes) : block_bytes_(block_bytes) {
    if (block_bytes == 0) throw std::logic_error("GlobalMemory: block size 0");
    if (ranks < 1 || ranks > (1 << 19)) throw std::logic_error("GlobalMemory: rank count out of range");
    table_.resize(1024);
    mask_ = table_.size() - 1;
}

void GlobalMemory::grow() {
    std::vector<Slot> old(table_.size() * 2);
    old.swap(table_);
    mask_ = table_.size() - 1;
    for (const Slot& s : old) {
        if (s.key == kNever) continue;
        std::uint64_t i = mix64(s.key) & mask_;
        while (table_[i].key != kNever) i = (i + 1) & mask_;
        table_[i] = s;
    }
}

GlobalMemory::Page& GlobalMemory::page(int rank, std::uint64_t page_no) {
    const std::uint64_t key = page_key(rank, page_no);
    if (key == last_key_) return *pages_[last_page_];
    std::uint64_t i = mix64(key) & mask_;
    while (table_[i].key != kNever && table_[i].key != key) i = (i + 1) & mask_;
    if (table_[i].key == kNever) {
        if ((pages_.size() + 1) * 2 > table_.size()) {
            grow();
            return page(rank, page_no);
        }
        table_[i] = Slot{key, static_cast<std::uint32_t>(pages_.size())};
        pages_.push_back(std::make_unique<Page>());
    }
    last_key_ = key;
    last_page_ = table_[i].page;
    return *pages_[last_page_];
}

const GlobalMemory::Page* GlobalMemory::find_page(int rank, std::uint64_t page_no) const {
    const std::uint64_t key = page_key(rank, page_no);
    if (key == last_key_) return pages_[last_page_].get();
    std::uint64_t i = mix64(key) & mask_;
    while (table_[i].key != kNever && table_[i].key != key) i = (i + 1) & mask_;
    if (table_[i].key == kNever) return nullptr;
    last_key_ = key;
    last_page_ = table_[i].page;
    return pages_[last_page_].get();
}

void GlobalMemory::post_block(int rank, std::uint64_t block, std::uint64_t land_ps, bool has_flag, std::uint64_t flag,
                              Writer by) {
    Page& p = page(rank, block / kPageBlocks);
    const int slot = static_cast<int>(block % kPageBlocks);
    p.land[slot] = land_ps;
    p.by[slot] = WrittenBy{by.rank, by.task};
    if (has_flag) p.flag[slot] = flag;
    ++blocks_posted_;
    if (p.waiters == kNone) return;
    // Waiters of this block whose condition now holds leave its list.
    std::uint32_t* link = &waiter_heads_[p.waiters][static_cast<std::size_t>(slot)];
    while (*link != kNone) {
        const Waiter w = waiters_[*link];
        Watch& watch = watches_[w.watch];
        if (watch.require_flag && p.flag[slot] != watch.value) {
            link = &waiters_[*link].next;
            continue;
        }
        free_waiters_.push_back(*link);
        *link = w.next;
        watch.fire_ps = std::max(watch.fire_ps, land_ps);
        if (--watch.remaining == 0) {
            const Watch fired = watch;
            free_watches_.push_back(w.watch);
            if (fire_) fire_(fire_ctx_, fired.owner, fired.tag, fired.fire_ps);
        }
    }
}

std::uint64_t GlobalMemory::land_time(int rank, std::uint64_t block) const {
    const Page* p = find_page(rank, block / kPageBlocks);
    return p ? p->land[block % kPageBlocks] : kNever;
}

std::uint64_t GlobalMemory::flag(int rank, std::uint64_t block) const {
    const Page* p = find_page(rank, block / kPageBlocks);
    return p ? p->flag[block % kPageBlocks] : 0;
}

Writer GlobalMemory::writer(int rank, std::uint64_t first, std::uint32_t n) const {
    Writer w;
    std::uint64_t latest = 0;
    for (std::uint64_t b = first; b < first + n; ++b) {
        const Page* p = find_page(rank, b / kPageBlocks);
        if (!p) continue;
        const auto slot = static_cast<std::size_t>(b % kPageBlocks);
        if (p->land[slot] != kNever && p->land[slot] >= latest) {
            latest = p->land[slot];
            w = Writer{p->by[slot].rank, p->by[slot].task, latest};
        }
    }
    return w;
}

bool GlobalMemory::watch(int rank, std::uint64_t first, std::uint32_t n, bool require_flag, std::uint64_t value,
                         std::uint32_t owner, std::uint64_t tag, std::uint64_t& fire_ps) {
    ++watches_made_;
    std::uint64_t latest = 0;
    std::uint32_t id = kNone;
    for (std::uint64_t b = first; b < first + n; ++b) {
        Page& p = page(rank, b / kPageBlocks);
        const int slot = static_cast<int>(b % kPageBlocks);
        if (p.land[slot] != kNever && (!require_flag || p.flag[slot] == value)) {
            latest = std::max(latest, p.land[slot]);
            continue;
        }
        if (id == kNone) {
            if (!free_watches_.empty()) {
                id = free_watches_.back();
                free_watches_.pop_back();
            } else {
                watches_.emplace_back();
                id = static_cast<std::uint32_t>(watches_.size() - 1);
            }
            watches_[id] = Watch{value, tag, 0, 0, owner, require_flag};
        }
        if (p.waiters == kNone) {
            p.waiters = static_cast<std::uint32_t>(waiter_heads_.size());
            waiter_heads_.emplace_back();
            waiter_heads_.back().fill(kNone);
        }
        std::uint32_t w;
        if (!free_waiters_.empty()) {
            w = free_waiters_.back();
            free_waiters_.pop_back();
        } else {
            waiters_.emplace_back();
            w = static_cast<std::uint32_t>(waiters_.size() - 1);
        }
        std::uint32_t& head = waiter_heads_[p.waiters][static_cast<std::size_t>(slot)];
        waiters_[w] = Waiter{id, head};
        head = w;
        ++watches_[id].remaining;
    }
    if (id == kNone) {
        fire_ps = latest;
        return true;
    }
    watches_[id].fire_ps = latest;
    return false;
}

bool GlobalMemory::check_read(int rank, Addr addr, std::uint64_t bytes, int core, std::uint64_t now_ps) {
    ++reads_checked_;
    if (bytes == 0) return true;
    const std::uint64_t first = addr / block_bytes_, last = (addr + bytes - 1) / block_bytes_;
    std::uint64_t missing = 0;
    Addr first_missing = 0;
    // Page by page: one lookup for each page's run of blocks.
    for (std::uint64_t b = first; b <= last;) {
        const std::uint64_t page_no = b / kPageBlocks;
        const std::uint64_t end = std::min(last, page_no * kPageBlocks + kPageBlocks - 1);
        const Page* p = find_page(rank, page_no);
        for (; b <= end; ++b) {
            if (p && p->land[b % kPageBlocks] <= now_ps) continue;
            if (missing++ == 0) first_missing = b * block_bytes_;
        }
    }
    if (missing == 0) return true;
    ++stale_reads_;
    stale_blocks_ += missing;
    if (samples_.size() < kMaxSamples) samples_.push_back(StaleRead{rank, first_missing, core, now_ps});
    return false;
}

void GlobalMemory::report(Stats& s) const {
    s.set("memory_model.stale_reads", stale_reads_);
    s.set("memory_model.stale_blocks", stale_blocks_);
    s.set("memory_model.reads_checked", reads_checked_);
    s.set("memory_model.blocks_written", blocks_posted_);
    s.set("memory_model.watches", watches_made_);
    s.set("memory_model.pages", static_cast<std::uint64_t>(pages_.size()));
    std::string samples = "[";
    for (const StaleRead& r : samples_) {
        if (samples.size() > 1) samples += ",";
        samples += fmt::format(R"({{"rank":{},"address":"{:#x}","core":{},"time_ns":{:.3f}}})", r.rank, r.addr, r.core,
                               static_cast<double>(r.time_ps) / 1000.0);
    }
    s.set_json("memory_model.stale_read_samples", samples + "]");
}

}  // namespace npusim
