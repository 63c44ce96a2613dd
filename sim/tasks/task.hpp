// Task descriptors: the seam between the compiler and the hardware
// (docs/design.md §4.3). Plain data; nothing here knows SystemC or graphs.
#pragma once
#include <cstdint>
#include <string>
#include <unordered_map>
#include <vector>

#include "chip/units.hpp"

namespace npusim {

// program: a kernel program written against the AIV kernel API (a
// Dispatch, a Combine, ...) run by one vector core as one task.
enum class Kernel : std::uint8_t { matmul, vector, copy, scalar, program };
constexpr std::size_t kKernels = 5;
const char* to_string(Kernel k);

// Bytes of a memory space a task reads or writes: `rows` rows of `bytes`
// each, `stride` apart (one row: a contiguous range), as a DMA engine's
// strided descriptor says it.
struct Region {
    Space space = Space::hbm;
    std::uint64_t addr = 0;
    std::uint64_t bytes = 0;   // per row
    std::uint64_t stride = 0;  // from one row's start to the next (rows > 1)
    std::uint32_t rows = 1;

    std::uint64_t total() const { return bytes * rows; }
    // One past the last byte: [addr, end()) holds every row.
    std::uint64_t end() const { return addr + (rows > 1 ? (rows - 1) * stride : 0) + bytes; }
    // f(addr, bytes) for each row in order.
    template <class F>
    void for_each_row(F&& f) const {
        for (std::uint32_t i = 0; i < rows; ++i) f(addr + i * stride, bytes);
    }
};

// Whether two regions of one space share a byte (rows against rows).
bool overlaps(const Region& a, const Region& b);

// A matmul's Cube plan as the compiler tiled it (its tiling data, as a
// CANN kernel carries it): base tile in L0, L1 block, and whether the A
// panel / B stay in L1. All zero: the core plans the task itself.
struct CubeBlocking {
    std::uint32_t m0 = 0, n0 = 0, k0 = 0;
    std::uint32_t m1 = 0, n1 = 0, k1 = 0;
    bool keep_a = false, keep_b = false;
    bool set() const { return m0 != 0; }
    bool operator==(const CubeBlocking& o) const {
        return m0 == o.m0 && n0 == o.n0 && k0 == o.k0 && m1 == o.m1 && n1 == o.n1 && k1 == o.k1 &&
               keep_a == o.keep_a && keep_b == o.keep_b;
    }
};

// Kernel-specific work. One flat struct keeps a task at a fixed, small size.
struct KernelParams {
    // matmul
    std::uint64_t m = 0, n = 0, k = 0;
    DType dtype = DType::fp16;  // matmul operands; a vector task's elements (lanes per repeat)
    CubeBlocking blocking;      // (beside dtype: fills its padding)
    // Bytes of operand A read from GM; 0 = m·k·elt. Smaller for a convolution
    // whose im2col matrix the cube core expands on-chip from the input tile.
    std::uint64_t a_bytes = 0;
    // vector / copy
    std::uint64_t bytes = 0;
    std::uint64_t out_bytes = 0;
    double cycles_per_repeat = 1.0;
    // Independent rows of this many input bytes (a row op over the last
    // axis): each row starts a new repeat. 0 = contiguous.
    std::uint64_t row_bytes = 0;
    // scalar
    std::uint64_t cycles = 0;
    // common
    Space src = Space::hbm;
    Space dst = Space::hbm;
    bool has_addr = false;        // (the flags sit together: no padding between them)
    bool has_out_addr = false;
    // vector / copy: input bytes per UB chunk as the compiler planned the
    // task (its tiling data); 0 = the core plans the chunks itself. (Here it
    // fills the padding after the flags; a chunk is less than UB.)
    std::uint32_t ub_chunk = 0;
    std::uint64_t addr = 0;       // base address read (L2 reuse)
    std::uint64_t out_addr = 0;   // base address written
    std::uint64_t ub_bytes = 0;   // declared resident footprint
    std::uint64_t l1_bytes = 0;
    // program: which of the stream's declared programs, and this task's
    // block of it (GetBlockIdx: the programs divide their work by block).
    std::uint32_t program = 0;
    std::uint32_t block = 0;
    // Rows known only at run time (a grouped kernel reading a runtime group
    // list): the task covers rows [rows_first, rows_first + rows_span) of a
    // tensor whose group g holds rows [g x rows_group, ...), of which the
    // rank's row table (1 + index into TaskStream::row_tables; 0: none)
    // says how many hold data. The task's work scales with the valid share.
    std::uint32_t rows_table = 0;
    std::uint32_t rows_group = 0;
    std::uint32_t rows_first = 0;
    std::uint32_t rows_span = 0;
};

// A task that waits for memory (docs/task-streams.md, "Cross-rank streams"):
// `blocks` DataBlocks from `addr` of the task's own rank's GM, each landed
// carrying the 8 B flag `value`.
struct MemoryWait {
    std::uint64_t addr = 0;
    std::uint64_t value = 0;
    std::uint32_t blocks = 1;
};

// Where a copy's MTE3 writes when it leaves the die: rank `dst_rank`'s GM
// at `addr`, as DataBlocks over the mesh (Data-as-Flag when has_flag).
struct RemoteWrite {
    std::int32_t dst_rank = -1;  // -1: not a remote write
    bool has_flag = false;
    std::uint64_t addr = 0;
    std::uint64_t flag = 0;
};

// A kernel program a stream launches (docs/task-streams.md, "Programs"):
// `blocks` tasks of kernel `program` on one rank run it, task i as block i;
// the program reads its arguments (a JSON object) when it is built, once per
// declaration and shared by every rank that runs it.
struct ProgramDecl {
    std::string id;    // how tasks name it
    std::string name;  // the registered program, e.g. "moe.dispatch"
    std::string args;  // a JSON object, as text
    std::uint32_t blocks = 1;
    std::uint32_t line = 0;
};

// Per rank, the rows each group of a tensor holds at run time
// (docs/task-streams.md, "Row tables"): e.g. the tokens each local expert
// received from a Dispatch. One list for every rank, or one per rank.
struct RowTable {
    std::string id;
    std::vector<std::vector<std::uint32_t>> per_rank;
    std::uint32_t line = 0;
    const std::vector<std::uint32_t>& of(int rank) const {
        return per_rank.size() == 1 ? per_rank[0] : per_rank[static_cast<std::size_t>(rank)];
    }
};

// The share of a task's rows that hold data on `rank` (1 without a row table).
double valid_row_share(const KernelParams& p, const std::vector<RowTable>& tables, int rank);

using EventIndex = std::uint32_t;
using NameIndex = std::uint32_t;  // into TaskStream::names (op / tile labels)

struct Task {
    // What a core reads while it runs the task comes first, in three cache
    // lines; the rest is read at dispatch setup, for messages or traces.
    KernelParams params;
    std::vector<Region> reads;
    std::vector<Region> writes;
    Kernel kernel = Kernel::vector;
    CoreType core_type = CoreType::vector;
    std::uint32_t stream = 0;  // index into TaskStream::streams
    std::int32_t priority = 0;
    std::int32_t core = -1;    // pinned core index within its type, or -1
    NameIndex op = 0;          // 0 = none
    NameIndex tile = 0;
    std::uint32_t line = 0;    // source line, for messages
    std::string id;
    std::vector<EventIndex> wait;
    std::vector<EventIndex> signal;
    // Cross-rank streams (chips with an interconnect): cold, read at dispatch.
    std::int32_t rank = 0;
    RemoteWrite remote;
    std::vector<MemoryWait> wait_memory;
};

struct EventDecl {
    std::string id;
    std::uint32_t count = 1;  // fires after this many signals
    std::uint32_t line = 0;   // 0 = implicitly declared by use
};

struct TaskStream {
    std::string file;                  // where it came from, for messages
    std::vector<Task> tasks;           // in file order
    std::vector<EventDecl> events;
    std::vector<ProgramDecl> programs;
    std::vector<RowTable> row_tables;
    std::vector<std::string> streams;  // stream names in order of first use
    std::vector<std::string> names{""};  // interned op/tile labels; [0] = none
    std::unordered_map<std::string, NameIndex> name_index;  // lookup only
    // Some task names a rank, a destination rank or a memory wait: the
    // stream needs a System of whole-die ranks (hw/system), not one die.
    bool cross_rank = false;

    NameIndex intern(const std::string& s);
    const std::string& name(NameIndex i) const { return names[i]; }
    // What traces and the critical path call a task: its op, or its kernel.
    std::string label(const Task& t) const { return t.op ? names[t.op] : std::string(to_string(t.kernel)); }
};

}  // namespace npusim
