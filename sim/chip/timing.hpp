// The timing formulas of one die, written once: the hardware modules (sim/hw)
// time their pipes with them, and the compiler's cost model (sim/compiler)
// estimates tasks with them, so the two cannot drift apart. Plain C++.
//
// Cube task: a matmul is cut into L1 blocks of base tiles; each block step
// passes MTE2 (GM -> L1), MTE1 (L1 -> L0A/L0B), M (the cube:
// ceil(m/16)·ceil(k/16)·ceil(n/16) cycles in fp16, k in 32s for int8) and
// FixPipe (L0C -> out, after the last k step).
// Vector task: the input is cut into UB chunks; each passes MTE2 (GM -> UB),
// V (repeats of 256 B of lanes, rows padded to whole repeats, at most
// max_repeats per instruction) and MTE3 (UB -> GM).
#pragma once
#include <array>
#include <cstdint>

#include "chip/chip_params.hpp"
#include "chip/units.hpp"

namespace npusim::timing {

// ---- Cube ------------------------------------------------------------------

// M-pipe cycles of one (m, k, n) tile.
std::uint64_t mmad_cycles(const ChipParams& chip, DType dt, std::uint64_t m, std::uint64_t k, std::uint64_t n);

struct MatmulShape {
    std::uint64_t m = 0, n = 0, k = 0;
    DType dtype = DType::fp16;
    // GM bytes of operand A; 0 = m·k·elt (smaller for a convolution whose
    // im2col matrix the core expands on-chip).
    std::uint64_t a_bytes = 0;
    // Where the operands come from and the result goes: GM (hbm, l2; the
    // l2 space always hits) through the core's port, or core-local (L1
    // operands need no MTE2; a UB / L1 result leaves FixPipe off the port).
    Space src = Space::hbm, dst = Space::hbm;
    bool operator==(const MatmulShape& o) const {
        return m == o.m && n == o.n && k == o.k && dtype == o.dtype && a_bytes == o.a_bytes && src == o.src &&
               dst == o.dst;
    }
};

// The plan of a matmul on one cube core (docs/design.md, Timing model):
// base tiles (m0 x n0 x k0) as large as L0A/L0B/L0C allow double-buffered,
// grouped into L1 blocks — A (m1 x k1) and B (k1 x n1) loaded once into L1
// (double-buffered) and reused by every base tile inside. The pipe
// schedule steps through L1 blocks: step = (mi·nb + ni)·kb + ki. With K
// split over several blocks (kb > 1) the m1 x n1 accumulators stay in L0C
// across them, so m1·n1 fits L0C. A block is not loaded again when it is
// still in L1: the A panel of a row of blocks when K is one block or all of
// A fits L1, B when it all fits L1 (or is one block). Block sizes minimise
// the bytes loaded into L1.
struct MatmulTiling {
    std::uint64_t m0 = 0, n0 = 0, k0 = 0;  // base tile (L0)
    std::uint64_t m1 = 0, n1 = 0, k1 = 0;  // L1 block
    std::uint64_t mb = 0, nb = 0, kb = 0;  // L1 blocks per dimension
    int elt = 2;                            // operand bytes
    double a_gm_ratio = 1.0;                // GM bytes of A per byte of A in L0A
    bool a_panel_reused = false;            // A blocks stay in L1 across n blocks
    bool b_reused = false;                  // B blocks stay in L1 across m blocks
    std::uint64_t tiles() const { return mb * nb * kb; }
};
// Where a plan will run, for plan_matmul's choice among blocks that move
// equally few bytes: `active` cores streaming (0: all the chip's), whether
// the blocks a task reads again are L2 hits, and the `warm` share of every
// load that another core of the wave fetched first (as matmul_pipe_cycles
// takes them). A core that plans a task alone knows none of it (the
// default: cold operands, every core streaming); the compiler knows the
// kernel the task belongs to.
// Re-reads hit when L2 holds what the cores stream between a block's two
// reads (rereads_in_l2): with the wave's distinct A and B blocks known
// (`a_streams`, `b_streams`: the tiles' A row blocks and B column blocks
// the active cores read, each once however many cores share it), from the
// plan; else `rereads_hit` says it for both operands.
struct PlanContext {
    int active = 0;
    bool rereads_hit = false;
    double warm = 0;
    std::uint64_t a_streams = 0, b_streams = 0;
};
// Whether a task's A blocks and its B blocks read again hit in L2.
struct Rereads {
    bool a = false, b = false;
    Rereads() = default;
    Rereads(bool both) : a(both), b(both) {}  // NOLINT: one answer for both operands reads as a bool
    Rereads(bool a_hit, bool b_hit) : a(a_hit), b(b_hit) {}
};
MatmulTiling plan_matmul(const MatmulShape& s, const ChipParams& chip, const PlanContext& where = {});
// The same, ranking only the blocks that move nearly as few bytes as the
// fewest: for a search that rates many tile shapes (the compiler's tiler).
// Never faster by the pipe schedule than plan_matmul's plan.
MatmulTiling plan_matmul_quick(const MatmulShape& s, const ChipParams& chip, const PlanContext& where = {});
// The pipe schedule plan_matmul ranks plans by, where they run.
double matmul_plan_cycles(const MatmulShape& s, const MatmulTiling& t, const ChipParams& chip, const PlanContext& where);
// A time matmul_plan_cycles never comes under (an extrapolated schedule is raised to it).
double matmul_plan_floor(const MatmulShape& s, const MatmulTiling& t, const ChipParams& chip, const PlanContext& where);
// A plan's re-reads in L2, where it runs: an A panel (m1 rows, all K) is
// read again after the core streamed one B column panel (n1 columns), a
// B block after all the task's B. Between them every distinct stream of
// the wave moves as much; the re-read hits when those bytes fit L2.
Rereads rereads_in_l2(const MatmulShape& s, const MatmulTiling& t, const ChipParams& chip, const PlanContext& where);
// A plan made elsewhere (a compiled task's tiling data: m0..k1 and the two
// reuse flags set) on this chip: fills in the block counts and returns
// whether its base tile, L1 blocks and kept operands fit this chip's
// buffers, as every plan plan_matmul makes for the chip does.
bool adopt_matmul_tiling(const MatmulShape& s, MatmulTiling& t, const ChipParams& chip);
// A grouped kernel whose rows are known only at run time (a row table)
// keeps the plan it was compiled with when fewer rows hold data: its row
// block and base tile shrink to the whole fractals those rows fill.
void fit_rows(MatmulTiling& t, const MatmulShape& s, const ChipParams& chip);
// Cycles of the plan's double-buffered pipe schedule on one core (MTE2,
// MTE1, M, FixPipe; MTE2 and FixPipe share the GM port) while `active` cores
// stream; rereads are L2 hits as `rereads` says, and a `warm` share of
// every load is (bytes another core of the wave fetched first: the core's
// L2 rate and latency). Tasks of more than `exact_tiles` block steps are
// extrapolated at the steady rate.
double matmul_pipe_cycles(const MatmulShape& s, const MatmulTiling& t, const ChipParams& chip, int active,
                          Rereads rereads, std::uint64_t exact_tiles = 4096, double warm = 0);
// A time the stepped schedule of all the task's steps never comes under:
// its busiest stage or its GM port, with the first step's fill and the
// last step's drain around that stage.
double matmul_pipe_floor(const MatmulShape& s, const MatmulTiling& t, const ChipParams& chip, int active,
                         Rereads rereads, double warm = 0);

// Bytes of L0C accumulators (fp32 / int32) and of FixPipe's fp16 output.
inline constexpr std::uint64_t kAccBytes = 4;
inline constexpr std::uint64_t kOutBytes = 2;

// The work of one L1 block step in each pipe.
struct CubeTile {
    std::uint64_t mi = 0, ni = 0, ki = 0;  // block coordinates
    std::uint64_t tm = 0, tn = 0, tk = 0;  // its extent
    std::uint64_t a_gm_bytes = 0;          // MTE2: A read from GM (0: still in L1)
    std::uint64_t b_bytes = 0;             // MTE2: B read from GM (0: still in L1)
    bool a_reread = false, b_reread = false;  // this task read these bytes before (L2 may hold them)
    std::uint64_t l0_bytes = 0;            // MTE1: A + B moved L1 -> L0, every base tile
    double mte1_cycles = 0;
    double m_cycles = 0;
    std::uint64_t out_bytes = 0;           // FixPipe: 0 while accumulating in L0C
};
CubeTile cube_tile(const MatmulShape& s, const MatmulTiling& t, const ChipParams& chip, std::uint64_t tile);

// Each block step's work found once for all four pipes, which work on steps
// at most a double buffer apart: the last 8 are kept.
class CubeTileRing {
public:
    void clear() { of_.fill(~std::uint64_t{0}); }
    const CubeTile& at(const MatmulShape& s, const MatmulTiling& t, const ChipParams& chip, std::uint64_t tile) {
        CubeTile& c = steps_[tile & 7];
        if (of_[tile & 7] != tile) c = cube_tile(s, t, chip, tile), of_[tile & 7] = tile;
        return c;
    }

private:
    std::array<CubeTile, 8> steps_;
    std::array<std::uint64_t, 8> of_{~std::uint64_t{0}, ~std::uint64_t{0}, ~std::uint64_t{0}, ~std::uint64_t{0},
                                      ~std::uint64_t{0}, ~std::uint64_t{0}, ~std::uint64_t{0}, ~std::uint64_t{0}};
};

// FixPipe to a core-local buffer (L1 / UB), not through the GM port.
double fixpipe_local_cycles(const ChipParams& chip, std::uint64_t bytes);

// ---- Vector ----------------------------------------------------------------

// What one vector task asks of its core. A repeat covers repeat_bytes of
// lanes (128 fp16 or 64 fp32 elements in 256 B); a row starts a new repeat,
// so a row shorter than a repeat leaves the rest of its lanes masked off.
struct VectorShape {
    std::uint64_t bytes = 0;      // input
    std::uint64_t out_bytes = 0;
    DType dtype = DType::fp16;    // element type: its size sets the lanes per repeat
    std::uint64_t row_bytes = 0;  // independent rows of this many input bytes; 0 = contiguous
    double cycles_per_repeat = 1;
    bool copy = false;            // no V work
    // Where the input is read from and the output goes: GM (hbm, l2) through
    // the core's port, L1 over the core's UB move, UB in place (no move).
    Space src = Space::hbm, dst = Space::hbm;
};

// Bytes of input one chunk moves through UB: tile_kb, what fits UB with
// double buffering and the output chunk; whole repeats, or whole rows when a
// row fits UB (a row op needs its row resident), else whole-repeat pieces of
// one row.
std::uint64_t vector_chunk_bytes(const VectorShape& s, const ChipParams& chip);

struct VectorPlan {
    std::uint64_t chunk = 1;   // input bytes per chunk (the last of a row or task may be shorter)
    std::uint64_t pieces = 1;  // chunks per row when a row is longer than a chunk
    std::uint64_t tiles = 0;   // chunks
};
// Where a vector task runs, for plan_vector's choice of chunk: `active`
// vector cores streaming beside it (0: all the chip's) and the `warm` share
// of its GM input that L2 holds (an earlier kernel's output). A core that
// plans a task alone knows neither (every core streaming, cold input); the
// compiler knows the kernel the task belongs to.
struct VectorContext {
    int active = 0;
    double warm = 0;
};
VectorPlan plan_vector(const VectorShape& s, const ChipParams& chip, const VectorContext& where = {});
// The plan of chunks of `chunk` input bytes (a compiled task's tiling
// data) if such chunks fit this chip's UB, double-buffered with their
// output, and keep whole rows where the plan would; else false.
bool adopt_vector_chunk(const VectorShape& s, std::uint64_t chunk, const ChipParams& chip, VectorPlan& plan);
// Cycles of the plan's double-buffered pipe schedule on one vector core
// (MTE2, V, MTE3; MTE2 and MTE3 share the GM port) while `active` cores
// stream: loads from HBM, stores into the write-back L2.
double vector_pipe_cycles(const VectorShape& s, const VectorPlan& p, const ChipParams& chip, int active,
                          std::uint64_t exact_tiles = 4096, double warm = 0);

// V repeats of `bytes` of input that start on a row boundary or lie within
// one row: each row (or the contiguous run) rounds up to whole repeats of
// repeat_bytes / element-size lanes.
std::uint64_t vector_repeats(const VectorShape& s, const ChipParams& chip, std::uint64_t bytes);
// Vector instructions those repeats take: each op pass (about
// ceil(cycles_per_repeat) of them) needs one instruction per max_repeats.
std::uint64_t vector_instructions(const VectorShape& s, const ChipParams& chip, std::uint64_t repeats);
// V-pipe cycles of one chunk: repeats x cycles_per_repeat plus issue_cycles
// per instruction.
double vector_v_cycles(const VectorShape& s, const ChipParams& chip, std::uint64_t bytes);

struct VectorTile {
    std::uint64_t in_bytes = 0, out_bytes = 0;
    std::uint64_t in_offset = 0, out_offset = 0;
    double v_cycles = 0;  // 0 for a copy
};
// Chunk `tile` of the plan; its output is the same share of out_bytes.
VectorTile vector_tile(const VectorPlan& p, const VectorShape& s, const ChipParams& chip, std::uint64_t tile);
// V-pipe cycles of all chunks of the plan.
double vector_task_v_cycles(const VectorPlan& p, const VectorShape& s, const ChipParams& chip);

// On-core moves into / out of UB (L1 <-> UB on a coupled core).
double ub_move_cycles(const ChipParams& chip, std::uint64_t bytes);

// ---- Ports, memory and dispatch ----------------------------------------------

// Bytes per cycle one core's GM port moves when `active` cores stream from
// HBM at once and share it evenly (the port caps it).
double gm_share_bytes_per_cycle(double port_bytes_per_cycle, const ChipParams& chip, int active);
// One GM port per core: MTE2, MTE3 and FixPipe of a core take turns on it
// (at most one transfer at a time), so copying in and out at once gets the
// port's rate in total. L2 hits move at the core's L2 rate (read or write),
// capped by its share of L2's aggregate bandwidth; misses at the core's
// share of HBM (gm_share_bytes_per_cycle).
double l2_port_bytes_per_cycle(const ChipParams& chip, CoreType t, bool write, int active);
// Effective bytes per cycle of a transfer on a core of type t whose bytes
// hit L2 in fraction `hit_fraction` (misses first, then hits, as the memory
// system serves them) while `active` cores stream at once.
double core_transfer_bytes_per_cycle(const ChipParams& chip, CoreType t, double hit_fraction, int active,
                                     bool write = false);
// Cycles of such a transfer of `bytes`, `hit_bytes` of them L2 hits.
double core_transfer_cycles(const ChipParams& chip, CoreType t, double bytes, double hit_bytes, int active,
                            bool write = false);
// Cycles of a transfer of `bytes` at `bytes_per_cycle`.
inline double transfer_cycles(double bytes, double bytes_per_cycle) { return bytes / bytes_per_cycle; }
// Share of HBM peak the channels deliver with `write_fraction` of the bytes
// written: the streaming efficiency (refresh, row switches) less two
// read<->write turnarounds per write batch of the minority direction.
double hbm_efficiency(const HbmParams& hbm, double write_fraction);
// The L2 capacity in bytes (what the estimates ask to fit).
inline double l2_capacity_bytes(const ChipParams& chip) { return chip.l2.size_mb * 1024.0 * 1024.0; }
// Cycles from a transfer's last byte leaving to its data arriving (unloaded).
double hbm_latency_cycles(const ChipParams& chip);
// The same for a store to GM: the write-back L2 takes it (L2 latency).
double gm_write_latency_cycles(const ChipParams& chip);
// Per-task fixed cost on a core of type t: kernel entry on the core.
int task_start_cycles(CoreType t, const ChipParams& chip);
// The scalar core's serial dispatch of one task.
int dispatch_cycles(const ChipParams& chip);
// Cycles between two task starts when the scalar slots dispatch back to
// back (dispatch_cycles over the slot count).
double dispatch_interval_cycles(const ChipParams& chip);

}  // namespace npusim::timing
