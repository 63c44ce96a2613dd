#include "hw/program_runtime.hpp"

#include "stats/stats.hpp"

namespace npusim {

ProgramRuntime::ProgramRuntime(const TaskStream& ts, const ChipParams& chip, int vector_cores)
    : barriers_(ts.programs.size()), profile_(1, vector_cores) {
    for (const ProgramDecl& d : ts.programs) {
        programs_.push_back(program_for(d, ts.file, chip));
        blocks_.push_back(d.blocks);
    }
}

void ProgramRuntime::report(Stats& s) const {
    s.set("kernel.instances", instances);
    s.set("kernel.ops", ops);
    s.set("kernel.waits", waits);
    s.set("kernel.sync_alls", sync_alls);
    profile_.report(s, "phases");
}

}  // namespace npusim
