// The one writer of output files (stats, traces, reports, task streams,
// sweep tables and results, lint JSON, MoE profiles): the text goes to a
// temporary file beside the target, which is flushed, synced and closed with
// every error checked, then renamed over the target. So a reader (or a
// killed writer) never sees half a file, a full disk never leaves a 0-byte
// "result" behind an exit 0, and a failure removes the temporary file and
// throws InputError "FILE: <OS reason>" (exit 2). Targets that are not
// regular files (/dev/null, /dev/stdout, /dev/full, a pipe) are written in
// place, with the same checks. docs/robustness.md "Output files".
#pragma once
#include <cstdio>
#include <ostream>
#include <memory>
#include <string>
#include <string_view>

namespace npusim {

class OutputFile {
public:
    // Creates the target's folder if needed and opens the temporary file;
    // throws InputError when either fails.
    explicit OutputFile(std::string path);
    // Without commit(): the temporary file is removed, the target untouched.
    ~OutputFile();
    OutputFile(const OutputFile&) = delete;
    OutputFile& operator=(const OutputFile&) = delete;

    // Writes never throw: the first error is kept and reported by commit().
    void write(std::string_view text);
    std::ostream& stream();  // the same file as an ostream (buffered)

    // Flush, fsync, close, rename; throws InputError "PATH: reason".
    void commit();
    // Drops the output (temporary file removed); idempotent.
    void discard();

    const std::string& path() const { return path_; }
    bool ok() const { return error_ == 0; }

private:
    class Buf;
    void fail(int err);

    std::string path_, tmp_;  // tmp_ empty: written in place
    int temp_slot_ = -1;      // where a fatal signal finds tmp_ to remove it
    std::FILE* f_ = nullptr;
    int error_ = 0;  // first errno
    std::unique_ptr<Buf> buf_;
    std::unique_ptr<std::ostream> os_;
};

// The whole text at once.
void write_output_file(const std::string& path, std::string_view text);

}  // namespace npusim
