#include "study/fixed_streams.hpp"

#include <filesystem>
#include <fstream>
#include <map>
#include <mutex>
#include <thread>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "common/errors.hpp"
#include "study/child_process.hpp"
#include "study/point_run.hpp"

namespace npusim::study {

namespace fs = std::filesystem;

namespace {

std::string combination_id(const Point& p) {
    ojson key = p.values;
    for (const char* k : {"change", "value", "applied", "mode", "stream"}) key.erase(k);
    return "s" + point_id(key).substr(1);
}

// The stream without "core" on any task: same tasks, events and priorities.
void write_unpinned(const std::string& pinned, const std::string& unpinned) {
    std::ifstream in(pinned, std::ios::binary);
    std::ofstream out(unpinned + ".tmp", std::ios::binary);
    for (std::string line; std::getline(in, line);) {
        if (line.empty()) continue;
        nlohmann::json t = nlohmann::json::parse(line);
        if (t.is_object()) t.erase("core");
        out << t.dump() << "\n";
    }
    out.close();
    fs::rename(unpinned + ".tmp", unpinned);
}

}  // namespace

std::string fixed_stream_path(const std::string& out_dir, const Point& p) {
    return out_dir + "/streams/" + combination_id(p) + (p.unpinned ? "_unpinned" : "") + ".jsonl";
}

void compile_fixed_streams(const Study& s, const std::vector<Point>& points, const std::string& out_dir,
                           const std::string& self, unsigned jobs) {
    std::map<std::string, const Point*> todo;  // pinned stream path -> a point of its combination
    for (const auto& p : points) {
        if (p.mode != Mode::fixed) continue;
        Point pinned = p;
        pinned.unpinned = false;
        const std::string path = fixed_stream_path(out_dir, pinned);
        std::error_code ec;
        if (!fs::exists(fixed_stream_path(out_dir, p), ec)) todo.emplace(path, &p);
    }
    if (todo.empty()) return;
    fs::create_directories(out_dir + "/streams");
    std::vector<std::pair<std::string, const Point*>> list(todo.begin(), todo.end());
    std::vector<std::string> errors(list.size());
    std::size_t next = 0;
    std::mutex m;
    auto worker = [&] {
        for (;;) {
            std::size_t i;
            {
                std::lock_guard<std::mutex> lock(m);
                if (next == list.size() || interrupted()) return;
                i = next++;
            }
            const auto& [path, p] = list[i];
            const std::string log = path.substr(0, path.size() - 6) + ".log";
            std::vector<std::string> argv = {self, "compile", "--chip", s.chips[p->chip].path, "--workload",
                                             s.workloads[p->workload].path};
            for (const auto& a : p->compile_set_args(s)) argv.insert(argv.end(), {"--set", a});
            argv.insert(argv.end(), {"--emit-tasks", path + ".tmp", "--quiet"});
            const int rc = run_process(argv, log);
            if (rc != 0) {
                errors[i] = fmt::format("{}: fixed mode: the base run ({}) does not compile: {}", s.file,
                                        p->label(), error_from_log(log, rc));
                continue;
            }
            fs::rename(path + ".tmp", path);
            write_unpinned(path, path.substr(0, path.size() - 6) + "_unpinned.jsonl");
        }
    };
    std::vector<std::thread> threads;
    for (unsigned t = 0; t < std::max(1u, std::min<unsigned>(jobs, static_cast<unsigned>(list.size()))); ++t)
        threads.emplace_back(worker);
    for (auto& t : threads) t.join();
    for (const auto& e : errors)
        if (!e.empty()) throw InputError(e);
}

}  // namespace npusim::study
