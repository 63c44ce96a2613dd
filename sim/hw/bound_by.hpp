// What bound a task (docs/statistics.md "What binds"): the pipe that was
// busiest in it; for a transfer pipe the core's port its bytes took
// longest on (GM for misses, L2 for hits), or the share behind that port
// (HBM, L2) when it was saturated for at least half the pipe's time; for a
// send, the mesh tier. Ops and the critical path sum their tasks' time by it, so a run
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
    cube_l2_port,    // a Cube core's port for L2 read hits
    vector_l2_port,  // a Vector core's
    cube_l2_write_port,    // a Cube core's port for writes into L2
    vector_l2_write_port,  // a Vector core's
    hbm,             // the HBM share, saturated
    l2,              // the L2 share, saturated
    mesh_intra,      // a send held by the mesh's planes inside a node
    mesh_inter,      // between nodes
};
constexpr int kBoundByCount = 16;

const char* to_string(BoundBy b);  // "cube.gm_port", "hbm", "cube_m", ...
// The chip key whose capacity it is ("" for none and latency).
const char* chip_key(BoundBy b);
// The same for a resource named on the critical path: a BoundBy's name, or
// dispatch, host ("" for sync wait, idle, latency and a mesh segment, which
// waits on a landing of either tier).
std::string resource_key(const std::string& resource);

}  // namespace npusim
