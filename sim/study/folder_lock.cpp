#include "study/folder_lock.hpp"

#include <fcntl.h>
#include <signal.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <climits>
#include <cstring>
#include <string>

#include <fmt/format.h>

#include "common/errors.hpp"

namespace npusim::study {
namespace {

std::string host_name() {
    char buf[HOST_NAME_MAX + 1] = {};
    if (::gethostname(buf, sizeof buf - 1) != 0) return "?";
    return buf;
}

std::string read_all(int fd) {
    std::string text;
    char buf[512];
    ::lseek(fd, 0, SEEK_SET);
    for (ssize_t n; (n = ::read(fd, buf, sizeof buf)) > 0 && text.size() < 4096;) text.append(buf, static_cast<std::size_t>(n));
    while (!text.empty() && (text.back() == '\n' || text.back() == ' ')) text.pop_back();
    return text;
}

// "pid 123 on host h" from the file's "pid=123 host=h".
std::string owner_text(const std::string& content) {
    std::string pid = "?", host = "?";
    const auto p = content.find("pid="), h = content.find("host=");
    if (p != std::string::npos) pid = content.substr(p + 4, content.find(' ', p) - p - 4);
    if (h != std::string::npos) host = content.substr(h + 5, content.find(' ', h) - h - 5);
    return fmt::format("pid {} on host {}", pid, host);
}

}  // namespace

FolderLock::FolderLock(const std::string& dir, std::string& note) : file_(dir + "/sweep.lock") {
    note.clear();
    // The file may be unlinked by its releasing owner between our open and
    // our flock: then we hold a lock on a file no longer in the folder, so
    // check the name still leads to it and retry if not.
    for (int attempt = 0; attempt < 100; ++attempt) {
        const int fd = ::open(file_.c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0644);
        if (fd < 0) throw InputError(fmt::format("{}: cannot create the sweep's lock file: {}", file_, std::strerror(errno)));
        if (::flock(fd, LOCK_EX | LOCK_NB) != 0) {
            const int err = errno;
            const std::string owner = read_all(fd);
            ::close(fd);
            if (err != EWOULDBLOCK)
                throw InputError(fmt::format("{}: cannot lock the sweep folder: {}", file_, std::strerror(err)));
            throw InputError(fmt::format("{}: the folder is in use by another sweep ({}); wait for it to finish, stop it, "
                                         "or choose another --out",
                                         dir, owner.empty() ? "owner not yet recorded" : owner_text(owner)));
        }
        struct stat by_fd {}, by_name {};
        if (::fstat(fd, &by_fd) != 0 || ::stat(file_.c_str(), &by_name) != 0 || by_fd.st_ino != by_name.st_ino ||
            by_fd.st_dev != by_name.st_dev) {
            ::close(fd);
            continue;
        }
        const std::string before = read_all(fd);
        if (!before.empty())
            note = fmt::format("took over a stale lock of {} (that sweep is no longer running)", owner_text(before));
        const std::string me = fmt::format("pid={} host={}\n", ::getpid(), host_name());
        if (::ftruncate(fd, 0) != 0 || ::pwrite(fd, me.data(), me.size(), 0) != static_cast<ssize_t>(me.size())) {
            const int err = errno;
            ::close(fd);
            throw InputError(fmt::format("{}: cannot write the sweep's lock file: {}", file_, std::strerror(err)));
        }
        fd_ = fd;
        return;
    }
    throw InputError(fmt::format("{}: cannot take the sweep's lock file (it keeps changing)", file_));
}

FolderLock::~FolderLock() {
    if (fd_ < 0) return;
    ::unlink(file_.c_str());  // before the unlock: a waiter that opened it re-checks the name
    ::close(fd_);
}

}  // namespace npusim::study
