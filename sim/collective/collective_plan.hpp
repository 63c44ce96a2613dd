// A collective (workload kind "collective") planned as a cross-rank task
// stream (docs/collectives.md): which rank copies which slice to whom over
// the mesh, Data-as-Flag, and which vector core reduces it on arrival.
// Plain C++; the System runs the stream like any other.
#pragma once
#include <cstdint>
#include <string>
#include <vector>

#include "chip/chip_params.hpp"
#include "config/workload_params.hpp"
#include "tasks/task.hpp"

namespace npusim::collective {

struct CollectivePlan {
    CollectiveWorkload workload;
    int ranks = 0;
    int slices = 0;                   // pieces every chunk is cut into, each a chain of copies and reductions
    int senders = 0;                  // vector cores that copy (slice i on core i % senders)
    int reducers = 0;                 // vector cores that reduce (core senders + i % reducers); 0 = none
    int steps = 0;                    // dependent rounds of copies (ring: N-1, 2(N-1) for allreduce)
    std::uint64_t chunk_bytes = 0;    // bytes / ranks, rounded up to whole elements
    std::uint32_t block_payload = 0;  // payload of one Data-as-Flag DataBlock (datablock_bytes - 8)
    std::vector<std::string> lines;   // the task stream, JSON Lines (tasks carry "rank")
    // Per rank: payload written to other ranks, blocks put on its planes,
    // bytes its vector cores reduce (read), tasks.
    std::vector<std::uint64_t> sent_bytes, sent_blocks, reduced_bytes, tasks;
    // Blocks rank r sends rank d, at [r * ranks + d] (the bound's tiers).
    std::vector<std::uint64_t> blocks_to;
};

// Where a collective runs (a graph's collective node, compiler/comm_lowering):
// among `group` (global ranks, in ring order; empty: every rank of the chip),
// on a buffer of N chunks at `buffer` (0: at 0), its messages landing in slots
// from `landing` (0: just above the buffer), an allgather's own chunk read
// from `own` (~0: the buffer's), and only `rank`'s tasks (-1: every rank's).
struct CollectivePlace {
    std::vector<int> group;
    std::uint64_t buffer = 0, landing = 0, own = ~0ULL;
    int rank = -1;
};

// InputError (exit 2) naming the key when the chip has fewer than 2 ranks or
// no vector cores, or bytes is not a whole number of dtype elements.
CollectivePlan plan_collective(const CollectiveWorkload& w, const ChipParams& chip, const CollectivePlace& at = {});
// Bytes the landing slots of a collective take (a graph's workspace for them).
std::uint64_t landing_bytes(const CollectiveWorkload& w, const ChipParams& chip, int ranks);

// The plan's lines as a TaskStream (through the stream reader, so it is
// checked like a file); `label` names it in messages.
TaskStream collective_stream(const CollectivePlan& plan, const std::string& label);

// "allreduce", "ring", "fp16", ...
const char* to_string(CollectiveWorkload::Op op);
const char* to_string(CollectiveWorkload::Algorithm a);
DType to_dtype(CollectiveWorkload::Dtype d);

}  // namespace npusim::collective
