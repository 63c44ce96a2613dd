// The trace a --report reads its timeline from: the --trace file when one
// is given, else a temporary of a unique name (mkstemp) that is removed
// when the run ends, however it ends (an exception, a report that cannot
// be written).
#pragma once
#include <string>

namespace npusim::cli {

class ReportTrace {
public:
    ReportTrace(const std::string& trace_file, bool report);
    ~ReportTrace();
    ReportTrace(const ReportTrace&) = delete;
    ReportTrace& operator=(const ReportTrace&) = delete;

    // Where the run writes its trace ("" = no trace).
    const std::string& path() const { return path_; }

private:
    std::string path_;
    bool temporary_ = false;
};

}  // namespace npusim::cli
