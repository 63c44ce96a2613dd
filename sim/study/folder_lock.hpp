// A sweep owns its --out folder while it runs (docs/robustness.md "One sweep
// per folder"): DIR/sweep.lock holds the owner's pid and host and an
// exclusive flock(2) on it. The kernel drops the flock when the owner exits,
// however it exits (kill -9 included), so a lock file whose flock is free is
// stale: the next sweep takes it over and says whose it was. A second sweep
// or a --resume while the owner lives is refused (InputError, exit 2).
#pragma once
#include <string>

namespace npusim::study {

class FolderLock {
public:
    // Takes DIR/sweep.lock or throws InputError naming the owner. `note`
    // receives a line when a stale lock was taken over ("" otherwise).
    FolderLock(const std::string& dir, std::string& note);
    ~FolderLock();  // removes the lock file
    FolderLock(const FolderLock&) = delete;
    FolderLock& operator=(const FolderLock&) = delete;

    const std::string& file() const { return file_; }

private:
    std::string file_;
    int fd_ = -1;
};

}  // namespace npusim::study
