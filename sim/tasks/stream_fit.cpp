#include "tasks/stream_fit.hpp"

#include <algorithm>
#include <set>

#include <fmt/format.h>

namespace npusim {

std::vector<std::string> stream_fit_warnings(const TaskStream& ts, const ChipParams& chip) {
    std::vector<std::string> out;
    for (CoreType type : {CoreType::cube, CoreType::vector}) {
        const int count = type == CoreType::cube ? chip.cube.count : chip.vector.count;
        std::set<std::int32_t> pinned;
        std::set<std::uint32_t> unpinned_streams;
        std::size_t tasks = 0;
        for (const Task& t : ts.tasks) {
            if (t.core_type != type) continue;
            ++tasks;
            if (t.core >= 0) pinned.insert(t.core);
            else unpinned_streams.insert(t.stream);
        }
        const std::size_t reach = pinned.size() + unpinned_streams.size();
        if (reach >= std::min(tasks, static_cast<std::size_t>(count))) continue;
        std::string how;
        if (!pinned.empty())
            how = fmt::format("{} pinned {} core{}", pinned.size(), to_string(type), pinned.size() == 1 ? "" : "s");
        if (!unpinned_streams.empty())
            how += fmt::format("{}{} stream{} of unpinned tasks", how.empty() ? "" : " and ", unpinned_streams.size(),
                               unpinned_streams.size() == 1 ? "" : "s");
        out.push_back(fmt::format(
            "{}: its {} {} tasks can use at most {} of the {} {} cores of chip '{}' ({}); was it made for a smaller chip? "
            "(compile the model for this chip, or regenerate the stream)",
            ts.file, tasks, to_string(type), reach, count, to_string(type), chip.name, how));
    }
    return out;
}

}  // namespace npusim
