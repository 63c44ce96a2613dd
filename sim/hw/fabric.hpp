// A die's port to the fabric of a System of dies (docs/design.md §1.4): what
// the die's cores may ask of the memory-semantic mesh and of the other
// ranks' global memory. The die knows nothing of planes, tiers or other
// dies; the System (sim/system) implements this. A die on its own has none.
//
//   post        a write leaving this die as DataBlocks: when its last byte has
//               left the die's planes (the receiver may hold it back) and
//               when its last block lands
//   post_local  a write into the die's own GM landing at a given time
//   watch       DataBlocks of this die's GM carrying a flag: when the last of
//               them lands, now if known, else through Watcher::watch_fired
//   check_read  a read of GM that remote writes land in: stale if a block
//               it touches has not landed by the read's start
#pragma once
#include <cstdint>
#include <utility>
#include <vector>

namespace npusim {

using Addr = std::uint64_t;

enum class WriteKind : std::uint8_t {
    data,          // payload only: ceil(bytes / block) blocks, no flag
    data_as_flag,  // every block carries block-8 B of payload and the 8 B flag
    flag,          // one block (e.g. a 32 B {flag, count} status), carries the flag
};

struct WriteRequest {
    int src_rank = 0;
    int dst_rank = 0;
    Addr addr = 0;            // block-aligned for data and data_as_flag
    std::uint64_t bytes = 0;  // payload bytes (flag: bytes written in the block)
    WriteKind kind = WriteKind::data;
    std::uint64_t flag = 0;
    // Who wrote it (the writer's task on src_rank), for the critical path
    // across ranks: a wait for these blocks leads back to that task.
    std::uint32_t task = UINT32_MAX;
};

// Blocks and wire bytes of a write: the payload as the fabric carries it
// (data in 32 B beats, Data-as-Flag in whole blocks, a flag in 32 B beats)
// plus `header_bytes` per block (0: what the sender's MTE3 moves).
std::uint32_t write_blocks(const WriteRequest& w, std::uint32_t block_bytes);
std::uint64_t write_wire_bytes(const WriteRequest& w, std::uint32_t block_bytes, std::uint32_t header_bytes = 0);

struct PostedWrite {
    std::uint64_t left_ps = 0;  // the last byte has left the sender's planes (a full receiver delays it)
    std::uint64_t land_ps = 0;  // the last block has landed
};

// Who the blocks a wait watches were written by: the rank and task whose
// write landed last (UINT32_MAX: not known).
struct Writer {
    int rank = -1;
    std::uint32_t task = UINT32_MAX;
    std::uint64_t land_ps = 0;  // when its last block landed
};

// A unit of a die that waits on GM: the scalar core (unit 0, for a task's
// memory wait) or vector core i (unit 1 + i, for a program's wait).
struct Watcher {
    virtual void watch_fired(int unit, std::uint64_t tag, std::uint64_t fire_ps) = 0;

protected:
    ~Watcher() = default;
};

class Fabric {
public:
    virtual ~Fabric() = default;
    virtual std::uint32_t block_bytes() const = 0;
    // Ps from a write's post to the earliest landing anywhere (the shorter
    // of the own L2's and the mesh's latency), and the slowest tier's latency
    // (a fence's acknowledgement).
    virtual std::uint64_t min_landing_ps() const = 0;
    virtual std::uint64_t max_latency_ps() const = 0;

    virtual PostedWrite post(const WriteRequest& w, std::uint64_t t0_ps) = 0;
    virtual void post_local(const WriteRequest& w, std::uint64_t land_ps) = 0;
    // `blocks` DataBlocks from addr of `rank`'s GM all carrying `value`:
    // true with fire_ps = when the last lands if every one has been posted
    // so; otherwise the die's Watcher hears (unit, tag, fire_ps) from the
    // write that completes it.
    virtual bool watch(int rank, int unit, Addr addr, std::uint32_t blocks, std::uint64_t value, std::uint64_t tag,
                       std::uint64_t& fire_ps) = 0;
    // The writer of the block that completed a watch (the latest landing).
    virtual Writer writer_of(int rank, Addr addr, std::uint32_t blocks) const = 0;
    // Whether the block at addr was ever written, and its flag.
    virtual bool block_written(int rank, Addr addr, std::uint64_t& flag) const = 0;
    virtual bool check_read(int rank, Addr addr, std::uint64_t bytes, int core, std::uint64_t now_ps) = 0;
    // GM ranges of `rank` that writes from the fabric land in, sorted and
    // merged: a read there may be stale (null or empty: none).
    virtual const std::vector<std::pair<std::uint64_t, std::uint64_t>>* remote_ranges(int rank) const = 0;
};

}  // namespace npusim
