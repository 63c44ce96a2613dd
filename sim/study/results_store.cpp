#include "study/results_store.hpp"

#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <fstream>

#include "common/errors.hpp"

namespace npusim::study {

ojson Row::to_json() const {
    ojson j;
    j["index"] = index;
    j["id"] = id;
    j["axes"] = axes;
    j["metrics"] = metrics;
    j["status"] = status;
    j["error"] = error;
    j["exit_code"] = exit_code;
    j["elapsed_s"] = elapsed_s;
    j["version"] = version;
    return j;
}

Row Row::from_json(const ojson& j) {
    Row r;
    r.index = j.at("index").get<std::size_t>();
    r.id = j.at("id").get<std::string>();
    r.axes = j.at("axes");
    r.metrics = j.at("metrics");
    r.status = j.at("status").get<std::string>();
    r.error = j.value("error", std::string());
    r.exit_code = j.value("exit_code", 0);
    r.elapsed_s = j.value("elapsed_s", 0.0);
    r.version = j.value("version", std::string());
    if (r.id.empty() || !r.axes.is_object() || !r.metrics.is_object()) throw std::runtime_error("malformed row");
    return r;
}

std::string csv_field(const std::string& text) {
    if (text.find_first_of(",\"\n\r") == std::string::npos) return text;
    std::string out = "\"";
    for (char c : text) {
        if (c == '"') out += '"';
        out += c;
    }
    return out + "\"";
}

std::string csv_value(const ojson& v) {
    if (v.is_null()) return "";
    if (v.is_string()) return csv_field(v.get<std::string>());
    return csv_field(v.dump());
}

ResultsStore::ResultsStore(std::string dir, std::vector<std::string> axis_paths, std::vector<std::string> metrics)
    : dir_(std::move(dir)), axes_(std::move(axis_paths)), metrics_(std::move(metrics)) {}

std::string ResultsStore::jsonl_path() const { return dir_ + "/results.jsonl"; }
std::string ResultsStore::csv_path() const { return dir_ + "/results.csv"; }

std::string ResultsStore::csv_header() const {
    std::string h = "index,id";
    for (const auto& a : axes_) h += "," + csv_field(a);
    for (const auto& m : metrics_) h += "," + csv_field(m);
    return h + ",status,error,version\n";
}

std::string ResultsStore::csv_line(const Row& r) const {
    std::string l = std::to_string(r.index) + "," + r.id;
    for (const auto& a : axes_) l += "," + csv_value(r.axes.contains(a) ? r.axes[a] : ojson());
    for (const auto& m : metrics_) l += "," + csv_value(r.metrics.contains(m) ? r.metrics[m] : ojson());
    std::string err = r.error;
    std::replace(err.begin(), err.end(), '\n', ' ');
    return l + "," + r.status + "," + csv_field(err) + "," + csv_field(r.version) + "\n";
}

std::vector<Row> ResultsStore::load(std::size_t* skipped) const {
    std::vector<Row> rows;
    std::size_t bad = 0;
    std::ifstream in(jsonl_path(), std::ios::binary);
    std::string line;
    while (std::getline(in, line)) {
        if (line.find_first_not_of(" \t\r") == std::string::npos) continue;
        try {
            rows.push_back(Row::from_json(ojson::parse(line)));
        } catch (const std::exception&) {
            ++bad;
        }
    }
    if (skipped) *skipped = bad;
    return rows;
}

void ResultsStore::rewrite(std::vector<Row> rows) const {
    std::stable_sort(rows.begin(), rows.end(), [](const Row& a, const Row& b) { return a.index < b.index; });
    std::string jsonl, csv = csv_header();
    for (const auto& r : rows) {
        jsonl += r.to_json().dump() + "\n";
        csv += csv_line(r);
    }
    write_file_atomically(jsonl_path(), jsonl);
    write_file_atomically(csv_path(), csv);
}

namespace {

void append_text(const std::string& file, const std::string& text) {
    const int fd = ::open(file.c_str(), O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC, 0644);
    if (fd < 0) throw InputError(file + ": cannot append: " + std::strerror(errno));
    std::size_t done = 0;
    while (done < text.size()) {
        const ssize_t n = ::write(fd, text.data() + done, text.size() - done);
        if (n < 0 && errno == EINTR) continue;
        if (n <= 0) {
            ::close(fd);
            throw InputError(file + ": cannot append: " + std::strerror(errno));
        }
        done += static_cast<std::size_t>(n);
    }
    ::close(fd);
}

}  // namespace

void ResultsStore::append(const Row& row) const {
    append_text(jsonl_path(), row.to_json().dump() + "\n");
    append_text(csv_path(), csv_line(row));
}

}  // namespace npusim::study
