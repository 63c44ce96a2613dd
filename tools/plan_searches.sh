#!/bin/sh
# The bundled single-die graphs on a2 (and BERT-128 on ax300), compiled with the tiler's
# plan (the plan searches off: workload.passes.explore_cube_cores, search_cube_plans and
# explore_vector_cores false) and with the searches (the default), which run every candidate plan on the die
# model: simulated cycles and the wall time of the whole `npusim run` (compile +
# simulate). Usage: tools/plan_searches.sh [build dir]
set -eu
build=${1:-build}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
echo "| model | tiler's plan: cycles | s | searched (default): cycles | s | change |"
echo "|---|---|---|---|---|---|"
for spec in "bert128 models/bert_layer.json workload.dims.seq_len=128" \
            "bert512 models/bert_layer.json workload.dims.seq_len=512" \
            "matmul_2048 models/matmul_2048.json" "convbnrelu models/convbnrelu.json" \
            "segnet models/segnet.json" "host_hetero models/host_hetero.json" \
            "llm_decode models/llm_decode.json" \
            "bert128@ax300 models/bert_layer.json workload.dims.seq_len=128"; do
  set -- $spec
  name=$1 file=$2 sets="" chip=configs/chips/a2.json
  [ $# -ge 3 ] && sets="--set $3"
  case $name in *@ax300) chip=configs/chips/ax300.json ;; esac
  row="| $name"
  for on in false true; do
    start=$(date +%s.%N)
    "$build/npusim" run -q --chip "$chip" --workload "$file" $sets --set workload.passes.explore_cube_cores=$on \
      --set workload.passes.search_cube_plans=$on --set workload.passes.explore_vector_cores=$on --stats "$tmp/$on.json"
    end=$(date +%s.%N)
    cycles=$(/usr/bin/python3 -c "import json,sys; print(int(json.load(open(sys.argv[1]))['total_cycles']))" "$tmp/$on.json")
    row="$row | $cycles | $(/usr/bin/python3 -c "import sys; print(f'{float(sys.argv[2]) - float(sys.argv[1]):.2f}')" "$start" "$end")"
    eval "c$on=$cycles"
  done
  echo "$row | $(/usr/bin/python3 -c "print(f'{($ctrue / $cfalse - 1) * 100:+.1f}%')") |"
done
