#!/usr/bin/env bash
# Runs every libFuzzer target of tests/fuzz for a bounded time (docs/robustness.md).
#
#   tools/run_fuzzers.sh [SECONDS] [TARGET...]
#
# SECONDS per target (default 20). TARGET names are the NAME of
# tests/fuzz/fuzz_NAME.cpp (default: all). Builds the targets first (clang,
# -DNPUSIM_FUZZ=ON, in $NPUSIM_FUZZ_BUILD, default build-fuzz; incremental),
# replays every input of tests/fuzz/regressions/NAME/ (each once crashed
# npusim; all must now run clean), then fuzzes NPUSIM_FUZZ_JOBS targets at a
# time (default 2) from the seed corpus tests/fuzz/corpus/NAME/ plus what
# earlier runs found (kept in $NPUSIM_FUZZ_BUILD/fuzz-work/corpus/NAME/).
# NPUSIM_FUZZ_SEED=N fixes libFuzzer's seed (CI does, so that a run on the
# same commit makes the same mutations; default: a new seed each run).
# Prints executions, coverage and corpus size per target. Exit 1 when any
# target finds a crash, leak, timeout, huge allocation or sanitizer report;
# the input is left in $NPUSIM_FUZZ_BUILD/fuzz-work/artifacts/NAME/ — fix the
# bug and copy the input into tests/fuzz/regressions/NAME/.
set -euo pipefail
cd "$(dirname "$0")/.."

seconds=${1:-20}
shift || true
build=${NPUSIM_FUZZ_BUILD:-build-fuzz}
jobs=${NPUSIM_FUZZ_JOBS:-2}
work=$build/fuzz-work
dict=tests/fuzz/npusim.dict

if [ ! -f "$build/build.ninja" ]; then
  cmake -S . -B "$build" -G Ninja -DCMAKE_CXX_COMPILER=clang++ -DNPUSIM_FUZZ=ON -DBUILD_TESTING=OFF >/dev/null
fi
cmake --build "$build" --target fuzz_targets -j"$jobs"

if [ $# -gt 0 ]; then
  targets=("$@")
else
  targets=()
  for f in tests/fuzz/fuzz_*.cpp; do n=$(basename "$f" .cpp); targets+=("${n#fuzz_}"); done
fi

# Common options: 10 s per input is a hang; one allocation over 1 GiB or a
# process over 2 GiB is an absurd size that was not rejected in time.
opts=(-timeout=10 -rss_limit_mb=2048 -malloc_limit_mb=1024 -max_len=8192 -dict="$dict" -print_final_stats=1)
if [ -n "${NPUSIM_FUZZ_SEED:-}" ]; then opts+=(-seed="$NPUSIM_FUZZ_SEED"); fi
export ASAN_OPTIONS=${ASAN_OPTIONS:-detect_leaks=1:abort_on_error=1}
export UBSAN_OPTIONS=${UBSAN_OPTIONS:-print_stacktrace=1:halt_on_error=1}

failed=0
mkdir -p "$work/logs"

echo "== replaying tests/fuzz/regressions"
for t in "${targets[@]}"; do
  dir=tests/fuzz/regressions/$t
  [ -d "$dir" ] || continue
  mapfile -t inputs < <(find "$dir" -type f ! -name '.*' | sort)
  [ ${#inputs[@]} -gt 0 ] || continue
  if "$build/fuzz_$t" "${opts[@]}" "${inputs[@]}" >"$work/logs/$t.replay.log" 2>&1; then
    echo "  $t: ${#inputs[@]} inputs clean"
  else
    echo "  $t: FAILED on a regression input (log: $work/logs/$t.replay.log)"
    tail -n 30 "$work/logs/$t.replay.log"
    failed=1
  fi
done

echo "== fuzzing ${#targets[@]} targets for ${seconds}s each, $jobs at a time"
run_one() {
  local t=$1
  mkdir -p "$work/corpus/$t" "$work/artifacts/$t"
  "$build/fuzz_$t" "${opts[@]}" -max_total_time="$seconds" -artifact_prefix="$work/artifacts/$t/" \
    "$work/corpus/$t" "tests/fuzz/corpus/$t" >"$work/logs/$t.log" 2>&1
}
declare -A pids
for t in "${targets[@]}"; do
  while [ "$(jobs -rp | wc -l)" -ge "$jobs" ]; do wait -n || true; done
  run_one "$t" &
  pids[$t]=$!
done
declare -A status
for t in "${targets[@]}"; do
  if wait "${pids[$t]}"; then status[$t]=0; else status[$t]=$?; fi
done

printf '%-16s %6s %12s %10s %8s %8s %8s  %s\n' target secs execs exec/s cov ft corpus result
for t in "${targets[@]}"; do
  log=$work/logs/$t.log
  execs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$log" | tail -1)
  rate=$(sed -n 's/^stat::average_exec_per_sec: *//p' "$log" | tail -1)
  last=$(grep -E '^#[0-9]+' "$log" | tail -1 || true)
  cov=$(sed -n 's/.* cov: \([0-9]*\).*/\1/p' <<<"$last")
  ft=$(sed -n 's/.* ft: \([0-9]*\).*/\1/p' <<<"$last")
  corp=$(sed -n 's/.* corp: \([0-9]*\/[0-9]*[a-zA-Z]*\).*/\1/p' <<<"$last")
  if [ "${status[$t]}" -eq 0 ]; then result=clean; else result="FAILED (exit ${status[$t]})"; failed=1; fi
  printf '%-16s %6s %12s %10s %8s %8s %8s  %s\n' "$t" "$seconds" "${execs:-?}" "${rate:-?}" "${cov:-?}" "${ft:-?}" "${corp:-?}" "$result"
done
for t in "${targets[@]}"; do
  if [ "${status[$t]}" -ne 0 ]; then
    echo "---- $t: $work/logs/$t.log"
    grep -m1 -B2 -A25 -E 'ERROR:|runtime error|invariant violated|terminate called|Timeout|out-of-memory|malloc\(' \
      "$work/logs/$t.log" | cut -c1-300 || tail -n 30 "$work/logs/$t.log"
    echo "input: $(ls -d "$work/artifacts/$t"/* 2>/dev/null | tr '\n' ' ')"
  fi
done
exit $failed
