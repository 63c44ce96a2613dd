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
        std::size_t tasks = 0;
        bool unpinned = false;
        for (const Task& t : ts.tasks) {
            if (t.core_type != type) continue;
            ++tasks;
            if (t.core >= 0) pinned.insert(t.core);
            else unpinned = true;
        }
        if (unpinned || pinned.size() >= std::min(tasks, static_cast<std::size_t>(count))) continue;
        out.push_back(fmt::format(
            "{}: its {} {} tasks can use at most {} of the {} {} cores of chip '{}' ({} pinned {} core{}); was it made "
            "for a smaller chip? (compile the model for this chip, or regenerate the stream; a compile report that says "
            "'planned for N of the {} cores' chose fewer on purpose)",
            ts.file, tasks, to_string(type), pinned.size(), count, to_string(type), chip.name, pinned.size(),
            to_string(type), pinned.size() == 1 ? "" : "s", to_string(type)));
    }
    return out;
}

}  // namespace npusim
