#include "hw/die_probe.hpp"

#include <stdexcept>

#include <fmt/format.h>

#include "hw/die.hpp"
#include "tasks/stream_checks.hpp"

namespace npusim {

std::uint64_t DieProbe::end_ps(const TaskStream& s) {
    // A module may be built only while the design is elaborated.
    if (sc_core::sc_get_status() != sc_core::SC_ELABORATION)
        throw std::logic_error("DieProbe: a die can be probed only before the simulation starts");
    // Module names are unique in the process, so number every probe.
    static std::uint64_t serial = 0;
    Die die(fmt::format("probe{}", serial++).c_str(), chip_, s, nullptr, false, {}, nullptr,
            WakeScheduler::Kernel::alone);
    die.run_alone();
    ++probes_;
    return die.end_ps();
}

double DieProbe::cycles(const TaskStream& s) {
    check_stream_fits_chip(s, chip_);
    return static_cast<double>(end_ps(s)) / ps_per_cycle();
}

}  // namespace npusim
