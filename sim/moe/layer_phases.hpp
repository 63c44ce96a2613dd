// The three phases of the MoE layer on each rank, from the per-core phase
// stamps: dispatch [the rank's start, its last core's "ready" stamp — the
// expert GEMMs may start], experts [then, its first core's "experts" stamp —
// the stream's done flag seen], combine [then, its last core's "combine_sum"].
// They partition every rank's time, so each phase's share is its mean
// duration over the mean rank time.
#pragma once
#include <array>
#include <string>

namespace npusim {

class PhaseProfile;
class Stats;

struct LayerPhase {
    const char* name;
    double start_ns = 0;  // earliest start on any rank
    double end_ns = 0;    // latest end on any rank
    double mean_ns = 0;   // mean duration over the ranks
    double share = 0;     // mean_ns / the mean rank time
};

using LayerPhases = std::array<LayerPhase, 3>;  // dispatch, experts, combine

// Throws std::logic_error if a core lacks one of the stamps (a kernel bug).
LayerPhases layer_phases(const PhaseProfile& profile, int ranks, int cores);
// moe.phases.<name>.{start_ns,end_ns,mean_ns,share}
void report_layer_phases(const LayerPhases& phases, Stats& s);

}  // namespace npusim
