#!/usr/bin/env bash
# Regenerates the numbers of docs/validation.md, section "Single-die hardware
# model": the cube and vector cost formulas, HBM sharing, the example
# streams, and the simulator's speed. Usage: tools/validation_core.sh [BUILD_DIR]
set -euo pipefail
cd "$(dirname "$0")/.."
bin="${1:-build}/npusim"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

stat() { python3 -c "import json,sys; d=json.load(open(sys.argv[1]))
for k in sys.argv[2:]:
    v=d
    for p in k.split('.'): v=v[p]
    print(v, end=' ')
print()" "$@"; }

one_task() {  # name, core_type, kernel, params -> stream file
  printf '{"id":"%s","core_type":"%s","kernel":"%s","stream":"s","wait":[],"signal":[],"params":%s}\n' "$1" "$2" "$3" "$4" > "$tmp/$1.jsonl"
}

echo "### Cube: a single L1-resident matmul on ax300 (1 GHz), 64 x k x 64"
echo "| dtype | k | total cycles | M-pipe cycles | ceil(m/16)*ceil(k/16 or 32)*ceil(n/16) |"
echo "|---|---|---|---|---|"
for dt in fp16 int8; do
  for k in 1024 2048 4096; do
    one_task mm cube matmul "{\"m\":64,\"n\":64,\"k\":$k,\"dtype\":\"$dt\",\"src\":\"l1\",\"dst\":\"l1\"}"
    "$bin" run --chip configs/chips/ax300.json --workload "$tmp/mm.jsonl" --stats "$tmp/s.json" -q
    read -r total m <<<"$(stat "$tmp/s.json" total_cycles cores.cube0.pipes.m.busy_cycles)"
    kk=$([ "$dt" = int8 ] && echo 32 || echo 16)
    echo "| $dt | $k | $total | $m | $((4 * (k / kk) * 4)) |"
  done
done
echo
echo "### Vector: one UB-resident task on ax300, V-pipe cycles"
echo "| bytes | cycles_per_repeat | V cycles | ceil(bytes/256)*cpr |"
echo "|---|---|---|---|"
for b in 65536 131072; do
  for c in 1 2; do
    one_task v vector vector "{\"bytes\":$b,\"cycles_per_repeat\":$c,\"src\":\"ub\",\"dst\":\"ub\"}"
    "$bin" run --chip configs/chips/ax300.json --workload "$tmp/v.jsonl" --stats "$tmp/s.json" -q
    echo "| $b | $c | $(stat "$tmp/s.json" cores.vector0.pipes.v.busy_cycles) | $(( (b + 255) / 256 * c )) |"
  done
done
echo
echo "### HBM sharing on a2: traces/copy_48core.jsonl (48 cores x 4 MiB read + 4 MiB written)"
echo "| hbm.bandwidth_gbps | total cycles | total us | achieved GB/s (read+write) |"
echo "|---|---|---|---|"
for bw in 3200 1600 800; do
  "$bin" run --chip configs/chips/a2.json --workload traces/copy_48core.jsonl --set chip.hbm.bandwidth_gbps=$bw --stats "$tmp/s.json" -q
  read -r cyc ns rd wr <<<"$(stat "$tmp/s.json" total_cycles total_ns memory.hbm.read_bytes memory.hbm.write_bytes)"
  python3 -c "print('| $bw | $cyc | %.1f | %.0f |' % ($ns/1000, ($rd+$wr)/$ns))"
done
one_task mm cube matmul '{"m":128,"n":128,"k":1024,"src":"l1","dst":"l1"}'
for bw in 1600 800; do
  "$bin" run --chip configs/chips/a2.json --workload "$tmp/mm.jsonl" --set chip.hbm.bandwidth_gbps=$bw --stats "$tmp/s.json" -q
  echo "L1-resident 128x128x1024 matmul on a2 at $bw GB/s: $(stat "$tmp/s.json" total_cycles) cycles"
done
echo
echo "### Example streams on ax300: op-level vs tile-level sync"
echo "| stream | total cycles | overlap.cube_vector | events.wait_cycles |"
echo "|---|---|---|---|"
for s in op tile; do
  "$bin" run --chip configs/chips/ax300.json --workload traces/convbnrelu_$s.jsonl --stats "$tmp/s.json" -q
  read -r c o w <<<"$(stat "$tmp/s.json" total_cycles overlap.cube_vector events.wait_cycles)"
  python3 -c "print('| convbnrelu_$s | $c | %.3f | $w |' % $o)"
done
echo
echo "### L2 policy on a2: models/resnet50.json (batch 1), total cycles"
echo "| l2.size_mb | eager_writeback false | eager_writeback true |"
echo "|---|---|---|"
for mb in 8 48 96; do
  row="| $mb"
  for e in false true; do
    "$bin" run --chip configs/chips/a2.json --workload models/resnet50.json --set chip.l2.size_mb=$mb \
      --set chip.l2.eager_writeback=$e --stats "$tmp/s.json" -q
    row="$row | $(stat "$tmp/s.json" total_cycles)"
  done
  echo "$row |"
done
echo
echo "| l2.slices (a2's L2 bandwidth spread over them) | 16 | 64 | 128 | 256 |"
echo "|---|---|---|---|---|"
row="| total cycles"
for sl in 16 64 128 256; do
  "$bin" run --chip configs/chips/a2.json --workload models/resnet50.json --set chip.l2.slices=$sl --stats "$tmp/s.json" -q
  row="$row | $(stat "$tmp/s.json" total_cycles)"
done
echo "$row |"
