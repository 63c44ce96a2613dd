#include "common/output_file.hpp"

#include <fcntl.h>
#include <signal.h>
#include <sys/stat.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <streambuf>

#include "common/errors.hpp"

namespace npusim {

namespace fs = std::filesystem;

namespace {

// Temporaries being written, removed when a fatal signal (SIGINT, SIGTERM,
// SIGHUP) ends a process that has no handler of its own: an interrupted
// `run --trace` leaves no OUT.tmp.PID. A fixed table of heap copies that only
// the writing thread changes; the handler only reads it and unlinks (both
// async-signal-safe), then dies of the signal as before.
constexpr int kTempSlots = 64;
std::atomic<const char*> g_temps[kTempSlots];

void on_fatal_signal(int sig) {
    for (auto& t : g_temps)
        if (const char* p = t.load()) ::unlink(p);
    ::signal(sig, SIG_DFL);
    ::raise(sig);
}

void install_cleanup_once() {
    static const bool installed = [] {
        for (const int sig : {SIGINT, SIGTERM, SIGHUP}) {
            struct sigaction old {};
            if (::sigaction(sig, nullptr, &old) != 0 || old.sa_handler != SIG_DFL) continue;  // handled (a sweep)
            struct sigaction sa {};
            sa.sa_handler = on_fatal_signal;
            sigemptyset(&sa.sa_mask);
            ::sigaction(sig, &sa, nullptr);
        }
        return true;
    }();
    (void)installed;
}

int register_temp(const std::string& path) {
    install_cleanup_once();
    char* copy = ::strdup(path.c_str());
    if (!copy) return -1;
    for (int i = 0; i < kTempSlots; ++i) {
        const char* empty = nullptr;
        if (g_temps[i].compare_exchange_strong(empty, copy)) return i;
    }
    std::free(copy);
    return -1;  // more open at once than slots: still written safely, not cleaned on a signal
}

void unregister_temp(int& slot) {
    if (slot < 0) return;
    std::free(const_cast<char*>(g_temps[slot].exchange(nullptr)));
    slot = -1;
}

}  // namespace

// An ostream's buffer that hands every byte to the FILE (its own buffer is
// enough) and records the first failed write instead of throwing.
class OutputFile::Buf : public std::streambuf {
public:
    explicit Buf(OutputFile& f) : f_(f) {}

protected:
    int_type overflow(int_type c) override {
        if (c == traits_type::eof()) return traits_type::not_eof(c);
        const char ch = traits_type::to_char_type(c);
        f_.write(std::string_view(&ch, 1));
        return c;
    }
    std::streamsize xsputn(const char* s, std::streamsize n) override {
        f_.write(std::string_view(s, static_cast<std::size_t>(n)));
        return n;
    }

private:
    OutputFile& f_;
};

OutputFile::OutputFile(std::string path) : path_(std::move(path)) {
    // Past `ulimit -f` a write is EFBIG ("File too large"), not a kill.
    static const bool ignore_xfsz = [] { return ::signal(SIGXFSZ, SIG_IGN) != SIG_ERR; }();
    (void)ignore_xfsz;
    std::error_code ec;
    const fs::path target(path_);
    if (target.empty()) throw InputError("an output file name is empty");
    struct stat st {};
    const bool in_place = ::stat(path_.c_str(), &st) == 0 && !S_ISREG(st.st_mode);
    if (in_place && S_ISDIR(st.st_mode)) throw InputError(path_ + ": is a directory (expected a file name)");
    if (!in_place && target.has_parent_path()) {
        fs::create_directories(target.parent_path(), ec);
        if (ec) throw InputError(path_ + ": cannot create its folder: " + ec.message());
    }
    // Registered before it exists: a signal between open() and registering
    // would otherwise leave the temporary behind.
    if (!in_place) {
        tmp_ = path_ + ".tmp." + std::to_string(::getpid());
        temp_slot_ = register_temp(tmp_);
    }
    const std::string& open_path = in_place ? path_ : tmp_;
    const int fd = ::open(open_path.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
    if (fd < 0) {
        const int err = errno;
        unregister_temp(temp_slot_);
        throw InputError(path_ + ": " + std::strerror(err));
    }
    f_ = ::fdopen(fd, "wb");
    if (!f_) {
        const int err = errno;
        ::close(fd);
        if (!tmp_.empty()) ::unlink(tmp_.c_str());
        unregister_temp(temp_slot_);
        throw InputError(path_ + ": " + std::strerror(err));
    }
}

OutputFile::~OutputFile() { discard(); }

void OutputFile::fail(int err) {
    if (error_ == 0) error_ = err != 0 ? err : EIO;
}

void OutputFile::write(std::string_view text) {
    if (!f_ || error_ != 0 || text.empty()) return;
    errno = 0;
    if (std::fwrite(text.data(), 1, text.size(), f_) != text.size()) fail(errno);
}

std::ostream& OutputFile::stream() {
    if (!os_) {
        buf_ = std::make_unique<Buf>(*this);
        os_ = std::make_unique<std::ostream>(buf_.get());
    }
    return *os_;
}

void OutputFile::commit() {
    if (!f_) throw InputError(path_ + ": already closed");
    errno = 0;
    if (std::fflush(f_) != 0) fail(errno);
    // fsync: the data is on the disk before the name points at it. Devices
    // and pipes cannot sync (EINVAL), which is no error for them.
    if (error_ == 0 && ::fsync(::fileno(f_)) != 0 && errno != EINVAL && errno != EROFS) fail(errno);
    errno = 0;
    if (std::fclose(f_) != 0) fail(errno);
    f_ = nullptr;
    if (error_ == 0 && !tmp_.empty() && ::rename(tmp_.c_str(), path_.c_str()) != 0) fail(errno);
    if (error_ != 0) {
        if (!tmp_.empty()) ::unlink(tmp_.c_str());
        tmp_.clear();
        unregister_temp(temp_slot_);
        throw InputError(path_ + ": " + std::strerror(error_));
    }
    tmp_.clear();
    unregister_temp(temp_slot_);
}

void OutputFile::discard() {
    if (f_) {
        std::fclose(f_);
        f_ = nullptr;
    }
    if (!tmp_.empty()) ::unlink(tmp_.c_str());
    tmp_.clear();
    unregister_temp(temp_slot_);
}

void write_output_file(const std::string& path, std::string_view text) {
    OutputFile f(path);
    f.write(text);
    f.commit();
}

}  // namespace npusim
