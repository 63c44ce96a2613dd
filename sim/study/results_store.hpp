// The results of a sweep folder: DIR/results.jsonl (one JSON object per
// point) and DIR/results.csv (one column per axis and metric). A finished
// point is appended to both at once, so a killed sweep loses only the points
// that were still running; --resume reads results.jsonl back (ignoring a line
// torn by the kill) and skips the points that finished.
#pragma once
#include <string>
#include <vector>

#include "study/json_file.hpp"

namespace npusim::study {

struct Row {
    std::size_t index = 0;
    std::string id;
    ojson axes = ojson::object();     // axis path -> value
    ojson metrics = ojson::object();  // metric path -> value (null when missing)
    std::string status = "failed";    // "ok" or "failed"
    std::string error;                // why it failed ("" when ok)
    int exit_code = 0;                // of `npusim run` (-1: never ran or no result)
    double elapsed_s = 0;             // wall time of the point
    std::string version;              // of the npusim that ran it (its statistics' "version")

    bool ok() const { return status == "ok"; }
    ojson to_json() const;
    static Row from_json(const ojson& j);  // throws std::exception when malformed
};

class ResultsStore {
public:
    ResultsStore(std::string dir, std::vector<std::string> axis_paths, std::vector<std::string> metrics);

    std::string jsonl_path() const;
    std::string csv_path() const;

    // Rows of results.jsonl; lines that do not parse (a torn last line) are
    // skipped and counted in `skipped`.
    std::vector<Row> load(std::size_t* skipped = nullptr) const;
    // Replaces both files with `rows` sorted by point index (atomically).
    void rewrite(std::vector<Row> rows) const;
    // Appends one row to both files, each with a single write.
    void append(const Row& row) const;

    std::string csv_header() const;
    std::string csv_line(const Row& row) const;

private:
    std::string dir_;
    std::vector<std::string> axes_, metrics_;
};

// One CSV field (RFC 4180 quoting when needed).
std::string csv_field(const std::string& text);
// A JSON value as CSV text: strings as written, null empty, numbers as JSON.
std::string csv_value(const ojson& v);

}  // namespace npusim::study
