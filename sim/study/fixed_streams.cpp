#include "study/fixed_streams.hpp"

#include <filesystem>
#include <fstream>
#include <map>
#include <mutex>
#include <thread>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "common/errors.hpp"
#include "common/version.hpp"
#include "study/child_process.hpp"
#include "study/point_run.hpp"

namespace npusim::study {

namespace fs = std::filesystem;

namespace {

// Names the stream by what it is compiled from: the combination's values,
// the chip and workload files' contents and the simulator's version, so a
// resumed sweep never runs a stream an older build or file made.
std::string combination_id(const Study& s, const Point& p) {
    ojson key = p.values;
    for (const char* k : {"change", "value", "applied", "mode", "stream"}) key.erase(k);
    key["npusim"] = version();
    key["chip_file"] = point_id(ojson(read_text_file(s.chips[p.chip].path)));
    key["workload_file"] = point_id(ojson(read_text_file(s.workloads[p.workload].path)));
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
    if (!in.eof() || !out) throw InputError(unpinned + ": cannot write the unpinned stream (disk full?)");
    fs::rename(unpinned + ".tmp", unpinned);
}

// Compiles one combination's stream to `path` (and its unpinned copy);
// returns "" or what went wrong, in one line.
std::string compile_one(const Study& s, const Point& p, const std::string& path, const std::string& self) {
    const std::string stem = path.substr(0, path.size() - 6), log = stem + ".log";
    std::vector<std::string> argv = {self, "compile", "--chip", s.chips[p.chip].path, "--workload",
                                     s.workloads[p.workload].path};
    for (const auto& a : p.compile_set_args(s)) argv.insert(argv.end(), {"--set", a});
    argv.insert(argv.end(), {"--emit-tasks", path + ".tmp", "--quiet"});
    try {
        const int rc = run_process(argv, log);
        if (rc != 0) return error_from_log(log, rc);
        std::error_code ec;
        fs::rename(path + ".tmp", path, ec);
        if (ec) return fmt::format("{}: no stream written ({})", path, ec.message());
        write_unpinned(path, stem + "_unpinned.jsonl");
    } catch (const std::exception& e) {
        return e.what();
    }
    return "";
}

}  // namespace

std::string fixed_stream_path(const std::string& out_dir, const Study& s, const Point& p) {
    return out_dir + "/streams/" + combination_id(s, p) + (p.unpinned ? "_unpinned" : "") + ".jsonl";
}

void compile_fixed_streams(const Study& s, const std::vector<Point>& points, const std::string& out_dir,
                           const std::string& self, unsigned jobs) {
    std::map<std::string, const Point*> todo;  // pinned stream path -> a point of its combination
    for (const auto& p : points) {
        if (p.mode != Mode::fixed) continue;
        Point pinned = p;
        pinned.unpinned = false;
        std::error_code ec;
        if (!fs::exists(fixed_stream_path(out_dir, s, p), ec)) todo.emplace(fixed_stream_path(out_dir, s, pinned), &p);
    }
    if (todo.empty()) return;
    fs::create_directories(out_dir + "/streams");
    const std::vector<std::pair<std::string, const Point*>> list(todo.begin(), todo.end());
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
            const std::string e = compile_one(s, *list[i].second, list[i].first, self);
            if (!e.empty())
                errors[i] = fmt::format("{}: fixed mode: the base run ({}) does not compile: {}", s.file,
                                        list[i].second->label(), e);
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
