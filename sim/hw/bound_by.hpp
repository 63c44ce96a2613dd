// What bound a task (docs/statistics.md "What binds"): the pipe that was
// busiest in it, and for a transfer pipe, the shared rate that held it
// (HBM or L2 saturated for most of the task) or else the core's own GM
// port. Ops and the critical path sum their tasks' time by it, so a run
// names its binding resource and the chip key that sets it without a
// re-run (`--what-would-help` measures the same question by re-running).
#pragma once
#include <cstdint>
#include <string>

namespace npusim {

enum class BoundBy : std::uint8_t {
    none,            // not a core task (or never ran)
    latency,         // no pipe busy for half the task: fill, drain, tier latency
    cube_m,          // the Cube's M pipe (MACs)
    mte1,            // L1 -> L0
    fixpipe,         // L0C out to a local buffer
    vector_v,        // the Vector unit
    cube_gm_port,    // a Cube core's GM port (its own rate)
    vector_gm_port,  // a Vector core's GM port
    cube_l2_port,    // a Cube core's port for L2 hits (most of its bytes hit)
    vector_l2_port,  // a Vector core's
    hbm,             // the HBM share, saturated
    l2,              // the L2 share, saturated
};
constexpr int kBoundByCount = 12;

const char* to_string(BoundBy b);  // "cube.gm_port", "hbm", "cube_m", ...
// The chip key whose capacity it is ("" for none and latency).
const char* chip_key(BoundBy b);
// The same for a resource named on the critical path: a BoundBy's name, or
// dispatch, mesh, host ("" for sync wait, idle, latency).
std::string resource_key(const std::string& resource);

}  // namespace npusim
