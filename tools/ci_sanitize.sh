#!/usr/bin/env bash
# The whole test suite under AddressSanitizer + UndefinedBehaviorSanitizer
# (the tests spawn this build's npusim, so every end-to-end and bad-input test
# is a sanitizer test too): the job before a change to memory-handling code
# lands (docs/robustness.md). .ci/run keeps within its time budget by running
# only the sanitized fuzz targets and their regression inputs.
#
#   tools/ci_sanitize.sh [BUILD_DIR]     (default build-asan; incremental)
#
# -O1 -g1 keeps the build and the run short; the what-if conformance test's
# ~500 simulations are the code the suite already runs, and under ASan they
# would take most of the time, so it is left out.
set -euo pipefail
cd "$(dirname "$0")/.."
build=${1:-build-asan}
export ASAN_OPTIONS=${ASAN_OPTIONS:-detect_leaks=1:abort_on_error=1}
export UBSAN_OPTIONS=${UBSAN_OPTIONS:-print_stacktrace=1:halt_on_error=1}
cmake -S . -B "$build" -G Ninja -DNPUSIM_SANITIZE=ON -DCMAKE_BUILD_TYPE=RelWithDebInfo \
  "-DCMAKE_CXX_FLAGS_RELWITHDEBINFO=-O1 -g1" >/dev/null
cmake --build "$build" -j2
ctest --test-dir "$build" -j2 --output-on-failure -LE conformance
