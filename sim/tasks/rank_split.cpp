#include "tasks/rank_split.hpp"

#include <limits>

namespace npusim {

std::vector<TaskStream> split_by_rank(const TaskStream& ts, int ranks) {
    constexpr std::uint32_t kNone = std::numeric_limits<std::uint32_t>::max();
    std::vector<TaskStream> out(static_cast<std::size_t>(ranks));
    // Per rank: old stream / event index -> new, made on first use.
    std::vector<std::vector<std::uint32_t>> stream_map(out.size(), std::vector<std::uint32_t>(ts.streams.size(), kNone));
    std::vector<std::vector<std::uint32_t>> event_map(out.size(), std::vector<std::uint32_t>(ts.events.size(), kNone));
    std::vector<std::size_t> count(out.size(), 0);
    for (const Task& t : ts.tasks) ++count[static_cast<std::size_t>(t.rank)];
    for (std::size_t r = 0; r < out.size(); ++r) {
        out[r].file = ts.file;
        out[r].names = ts.names;  // op/tile labels keep their indices
        out[r].programs = ts.programs;  // and tasks their program's
        out[r].row_tables = ts.row_tables;
        out[r].cross_rank = ts.cross_rank;
        out[r].tasks.reserve(count[r]);
    }
    auto map_events = [&](std::size_t r, std::vector<EventIndex>& es) {
        for (EventIndex& e : es) {
            std::uint32_t& m = event_map[r][e];
            if (m == kNone) {
                m = static_cast<std::uint32_t>(out[r].events.size());
                out[r].events.push_back(ts.events[e]);
            }
            e = m;
        }
    };
    for (const Task& t : ts.tasks) {
        const auto r = static_cast<std::size_t>(t.rank);
        TaskStream& o = out[r];
        Task copy = t;
        std::uint32_t& s = stream_map[r][t.stream];
        if (s == kNone) {
            s = static_cast<std::uint32_t>(o.streams.size());
            o.streams.push_back(ts.streams[t.stream]);
        }
        copy.stream = s;
        map_events(r, copy.wait);
        map_events(r, copy.signal);
        o.tasks.push_back(std::move(copy));
    }
    return out;
}

}  // namespace npusim
