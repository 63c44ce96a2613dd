#!/usr/bin/env bash
# Simulator speed on the supernode: 288 ranks x 48 AIV cores, batch 128, the
# optimized MoE Dispatch (13,824 kernel instances). Prints wall time, CPU
# time, peak resident memory and simulated events per second, for each
# variant given (default: optimized).
#
#   tools/bench_moe.sh [BUILD_DIR] [VARIANT...]
#
# Targets (issue "Supernode ..."): <= 10 s wall and <= 4 GB peak RSS.
# "events" are the kernel-API operations plus the link chunks the mesh
# schedules (stats key sim_events); the figures read the wall clock, so they
# are printed here and never written into the stats.
set -euo pipefail
cd "$(dirname "$0")/.."
BUILD=${1:-build}
shift || true
VARIANTS=${*:-optimized}
NPUSIM="$BUILD/npusim"
[ -x "$NPUSIM" ] || { echo "bench_moe: $NPUSIM not built" >&2; exit 2; }
TMP=$(mktemp -d)
trap 'rm -rf "$TMP"' EXIT
printf "%-10s %8s %8s %9s %12s %12s %10s\n" variant wall_s cpu_s peak_MB events events/s total_us
for v in $VARIANTS; do
    /usr/bin/time -f "%e %U %S %M" -o "$TMP/time" "$NPUSIM" run --chip configs/chips/a3-supernode.json \
        --workload models/moe_dispatch.json --set workload.variant="$v" --stats "$TMP/stats.json" -q
    read -r wall user sys rss < "$TMP/time"
    python3 - "$TMP/stats.json" "$v" "$wall" "$user" "$sys" "$rss" <<'EOF'
import json, sys
d = json.load(open(sys.argv[1]))
v, wall, user, sys_, rss = sys.argv[2], float(sys.argv[3]), float(sys.argv[4]), float(sys.argv[5]), float(sys.argv[6])
ev = d["sim_events"]
print(f"{v:<10} {wall:8.2f} {user + sys_:8.2f} {rss / 1024:9.0f} {ev:12d} {ev / wall:12.0f} {d['total_ns'] / 1000:10.1f}")
EOF
done
