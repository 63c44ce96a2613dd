#!/usr/bin/env bash
# Checks C++ against .clang-format without rewriting anything: prints what
# clang-format would change and exits 1 if anything, 0 if nothing.
#
#     tools/check_format.sh --since REV     the lines changed since REV (commits and work tree)
#     tools/check_format.sh FILE...         the whole of each file
#
# The code base was not reformatted when .clang-format came (older lines may
# differ), so a change is checked by --since: only the lines it touches.
# Needs clang-format (Debian package clang-format).
set -euo pipefail
cd "$(dirname "$0")/.."

usage() { sed -n '5,6s/^#     /usage: /p' "$0"; }
fail() { echo "check_format.sh: $1 (--help for usage)" >&2; exit 2; }

[ $# -gt 0 ] || fail "expected --since REV or files"
case $1 in
    -h|--help) usage; exit 0 ;;
esac
command -v clang-format >/dev/null || fail "clang-format not found (Debian package clang-format)"

if [ "$1" = --since ]; then
    [ $# -eq 2 ] || fail "--since takes one git revision"
    git rev-parse --verify -q "$2^{commit}" >/dev/null || fail "not a git revision: $2"
    # git clang-format 14 exits 0 either way, 15 and later 1 when it has a
    # diff; with --quiet it prints only the diff.
    rc=0
    out=$(git clang-format --quiet --diff --extensions cpp,hpp,h,cc "$2" -- sim tests) || rc=$?
    [ $rc -le 1 ] || exit 2
    [ -n "$out" ] || exit 0
    printf '%s\n' "$out"
    exit 1
fi

case $1 in -*) fail "unknown option: $1" ;; esac
status=0
for f in "$@"; do
    [ -f "$f" ] || fail "no such file: $f"
    if ! clang-format --style=file "$f" | diff -u --label "$f" --label "$f (clang-format)" "$f" -; then
        status=1
    fi
done
exit $status
