#include "tasks/synthetic_stream.hpp"

#include <algorithm>
#include <string>

namespace npusim {

TaskStream synthetic_stream(std::uint64_t tasks, const ChipParams& chip) {
    TaskStream ts;
    ts.file = "<synthetic>";
    const std::uint32_t cubes = static_cast<std::uint32_t>(std::max(1, chip.cube.count));
    const std::uint32_t vectors = static_cast<std::uint32_t>(std::max(1, chip.vector.count));
    for (std::uint32_t i = 0; i < cubes; ++i) ts.streams.push_back("cube" + std::to_string(i));
    for (std::uint32_t i = 0; i < vectors; ++i) ts.streams.push_back("vector" + std::to_string(i));
    ts.tasks.reserve(tasks);
    const NameIndex mm = ts.intern("matmul"), act = ts.intern("activation");
    std::uint64_t group = 0;
    while (ts.tasks.size() < tasks) {
        const EventIndex ev = static_cast<EventIndex>(ts.events.size());
        ts.events.push_back(EventDecl{"e" + std::to_string(group), 1, 0});
        Task c;
        c.id = "c" + std::to_string(group);
        c.core_type = CoreType::cube;
        c.kernel = Kernel::matmul;
        c.stream = static_cast<std::uint32_t>(group % cubes);
        c.op = mm;
        c.signal = {ev};
        c.params.m = c.params.n = c.params.k = 64;
        c.params.has_addr = true;
        c.params.addr = (group % 4096) * 65536;
        c.params.has_out_addr = true;
        c.params.out_addr = (1ULL << 32) + (group % 4096) * 8192;
        ts.tasks.push_back(std::move(c));
        for (int j = 0; j < 2 && ts.tasks.size() < tasks; ++j) {
            Task v;
            v.id = "v" + std::to_string(group) + "_" + std::to_string(j);
            v.core_type = CoreType::vector;
            v.kernel = Kernel::vector;
            v.stream = cubes + static_cast<std::uint32_t>((2 * group + static_cast<std::uint64_t>(j)) % vectors);
            v.op = act;
            v.wait = {ev};
            v.params.bytes = v.params.out_bytes = 4096;
            v.params.has_addr = true;
            v.params.addr = (1ULL << 32) + (group % 4096) * 8192 + static_cast<std::uint64_t>(j) * 4096;
            ts.tasks.push_back(std::move(v));
        }
        ++group;
    }
    return ts;
}

}  // namespace npusim
