#include "cli/report_trace.hpp"

#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <vector>

#include "common/errors.hpp"

namespace npusim::cli {

ReportTrace::ReportTrace(const std::string& trace_file, bool report) : path_(trace_file) {
    if (!report || !path_.empty()) return;
    const std::string pattern = (std::filesystem::temp_directory_path() / "npusim-report-XXXXXX.json").string();
    std::vector<char> name(pattern.begin(), pattern.end());
    name.push_back('\0');
    const int fd = ::mkstemps(name.data(), 5);
    if (fd < 0) throw InputError(pattern + ": cannot make the report's temporary trace: " + std::strerror(errno));
    ::close(fd);
    path_ = name.data();
    temporary_ = true;
}

ReportTrace::~ReportTrace() {
    if (!temporary_) return;
    std::error_code ec;
    std::filesystem::remove(path_, ec);
}

}  // namespace npusim::cli
