#include "tasks/sub_stream.hpp"

#include <stdexcept>

namespace npusim {

namespace {
constexpr EventIndex kDropped = ~EventIndex{0};
}

TaskStream sub_stream(const TaskStream& s, const std::vector<std::uint32_t>& keep) {
    if (s.cross_rank || !s.programs.empty())
        throw std::invalid_argument("sub_stream: " + s.file + " spans ranks or runs kernel programs");
    std::vector<char> kept(s.tasks.size(), 0);
    for (std::size_t j = 0; j < keep.size(); ++j) {
        // In stream order: a stream's tasks issue in the order they come.
        if (j > 0 && keep[j] <= keep[j - 1]) throw std::invalid_argument("sub_stream: task indices must be ascending");
        kept.at(keep[j]) = 1;
    }
    // Signals each event gets from the tasks left out: given already.
    std::vector<std::uint32_t> given(s.events.size(), 0);
    for (std::size_t i = 0; i < s.tasks.size(); ++i)
        if (!kept[i])
            for (const EventIndex e : s.tasks[i].signal) ++given[e];
    TaskStream out;
    out.file = s.file;
    out.streams = s.streams;
    out.names = s.names;
    out.name_index = s.name_index;
    out.row_tables = s.row_tables;
    std::vector<EventIndex> index(s.events.size(), kDropped);
    for (std::size_t e = 0; e < s.events.size(); ++e) {
        if (given[e] >= s.events[e].count) continue;  // fired before the part starts
        index[e] = static_cast<EventIndex>(out.events.size());
        EventDecl d = s.events[e];
        d.count -= given[e];
        out.events.push_back(std::move(d));
    }
    const auto remap = [&](const std::vector<EventIndex>& from) {
        std::vector<EventIndex> to;
        for (const EventIndex e : from)
            if (index[e] != kDropped) to.push_back(index[e]);
        return to;
    };
    out.tasks.reserve(keep.size());
    for (const std::uint32_t i : keep) {
        Task t = s.tasks[i];
        t.wait = remap(t.wait);
        t.signal = remap(t.signal);
        out.tasks.push_back(std::move(t));
    }
    return out;
}

}  // namespace npusim
