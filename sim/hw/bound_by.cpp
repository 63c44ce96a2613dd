#include "hw/bound_by.hpp"

namespace npusim {

const char* to_string(BoundBy b) {
    switch (b) {
        case BoundBy::none: return "none";
        case BoundBy::latency: return "latency";
        case BoundBy::cube_m: return "cube_m";
        case BoundBy::mte1: return "mte1";
        case BoundBy::fixpipe: return "fixpipe";
        case BoundBy::vector_v: return "vector_v";
        case BoundBy::cube_gm_port: return "cube.gm_port";
        case BoundBy::vector_gm_port: return "vector.gm_port";
        case BoundBy::cube_l2_port: return "cube.l2_port";
        case BoundBy::vector_l2_port: return "vector.l2_port";
        case BoundBy::cube_l2_write_port: return "cube.l2_write_port";
        case BoundBy::vector_l2_write_port: return "vector.l2_write_port";
        case BoundBy::mesh_intra: return "mesh.intra_node";
        case BoundBy::mesh_inter: return "mesh.inter_node";
        case BoundBy::hbm: return "hbm";
        case BoundBy::l2: return "l2";
    }
    return "none";
}

const char* chip_key(BoundBy b) {
    switch (b) {
        case BoundBy::cube_m: return "chip.cores.cube.count";
        case BoundBy::mte1: return "chip.cores.cube.l1_to_l0_bytes_per_cycle";
        case BoundBy::fixpipe: return "chip.cores.cube.fixpipe_bytes_per_cycle";
        case BoundBy::vector_v: return "chip.cores.vector.count";
        case BoundBy::cube_gm_port: return "chip.cores.cube.gm_bytes_per_cycle";
        case BoundBy::vector_gm_port: return "chip.cores.vector.gm_bytes_per_cycle";
        case BoundBy::cube_l2_port: return "chip.cores.cube.l2_read_bytes_per_cycle";
        case BoundBy::vector_l2_port: return "chip.cores.vector.l2_read_bytes_per_cycle";
        case BoundBy::cube_l2_write_port: return "chip.cores.cube.l2_write_bytes_per_cycle";
        case BoundBy::vector_l2_write_port: return "chip.cores.vector.l2_write_bytes_per_cycle";
        case BoundBy::mesh_intra: return "chip.interconnect.intra_node.plane_bandwidth_gbps";
        case BoundBy::mesh_inter: return "chip.interconnect.inter_node.plane_bandwidth_gbps";
        case BoundBy::hbm: return "chip.hbm.bandwidth_gbps";
        case BoundBy::l2: return "chip.l2.bandwidth_gbps";
        default: return "";
    }
}

std::string resource_key(const std::string& resource) {
    for (int b = 0; b < kBoundByCount; ++b)
        if (resource == to_string(static_cast<BoundBy>(b))) return chip_key(static_cast<BoundBy>(b));
    if (resource == "dispatch") return "chip.cores.scalar.dispatch_cycles";
    if (resource == "host") return "workload.host_*";
    return "";
}

}  // namespace npusim
