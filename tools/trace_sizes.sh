#!/bin/sh
# Trace sizes of the Llama-3.1-8B decode step on one a2 die
# (models/llm/llama3_8b.json: 32 layers, batch 32, 4 K cache) as written
# with each way of cutting a trace down (docs/statistics.md "Size"). Prints
# a Markdown table: option, MB, events.
#
#     sh tools/trace_sizes.sh [NPUSIM]      (default build/npusim)
set -eu
cd "$(dirname "$0")/.."
npusim=${1:-build/npusim}
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
run() {
    out=$1
    shift
    "$npusim" run --chip configs/chips/a2.json --workload models/llm/llama3_8b.json --trace "$dir/$out" -q "$@"
    bytes=$(stat -c %s "$dir/$out")
    case $out in
        *.gz) events=$(gzip -dc "$dir/$out" | grep -c '^{"ph"') ;;
        *) events=$(grep -c '^{"ph"' "$dir/$out") ;;
    esac
    printf '| `%s` | %s | %s |\n' "$*${*:+ }--trace $out" "$(echo "$bytes" | awk '{printf "%.1f", $1 / 1e6}')" "$events"
    rm -f "$dir/$out"
}
echo '| options | MB | events |'
echo '|---|---|---|'
run t.json
run t.json.gz
run t.json --trace-tasks-only
run t.json.gz --trace-tasks-only
run t.json --trace-window 0:2000
run t.json --trace-cores cube0,vector0
run t.json --trace-ops 'l0.*'
