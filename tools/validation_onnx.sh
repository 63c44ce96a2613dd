#!/usr/bin/env bash
# Regenerates the table of "ONNX import: real exports" in docs/validation.md:
# models exported by python3-torch / python3-torchvision and the bundled
# python3-onnx blocks, each imported, compiled and simulated on a2, beside
# the hand-written graphs of the same networks. Markdown on stdout.
#
#   tools/validation_onnx.sh [BUILD_DIR] [EXPORT_DIR]   (defaults: build, a temporary folder)
#
# Exports with tools/export_torchvision_onnx.py when EXPORT_DIR lacks the
# files (needs python3-torch and python3-torchvision; about a minute).
# Times are wall clock, the best of three runs, import + compile + simulate.
set -euo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
BUILD="${1:-build}"
case "$BUILD" in /*) ;; *) BUILD="$ROOT/$BUILD" ;; esac
BIN="$BUILD/npusim"
[ -x "$BIN" ] || { echo "validation_onnx.sh: no npusim binary at $BIN (build first)" >&2; exit 2; }
cd "$ROOT"
WORK="$(mktemp -d "${TMPDIR:-/tmp}/npusim_validation_onnx.XXXXXX")"
trap 'rm -rf "$WORK"' EXIT
EXPORTS="${2:-$WORK}"
for m in resnet50 mobilenet_v2 encoder_layer deeplabv3_resnet50 deeplabv3_mobilenet_v3_large:320; do
  f="$EXPORTS/${m/:/_}.onnx"
  [ -f "$f" ] || /usr/bin/python3 tools/export_torchvision_onnx.py "$EXPORTS" "$m" >&2
done

# row LABEL WORKLOAD [--set ...]...
row() {
  local label=$1 workload=$2
  shift 2
  local best=999 t s e
  for _ in 1 2 3; do
    s=$(date +%s.%N)
    "$BIN" run --chip configs/chips/a2.json --workload "$workload" "$@" --stats "$WORK/s.json" -q
    e=$(date +%s.%N)
    t=$(python3 -c "print(f'{$e - $s:.2f}')")
    best=$(python3 -c "print(min($best, $t))")
  done
  local ops
  case "$workload" in
    *.onnx) "$BIN" import "$workload" --out "$WORK/g.json" "$@" -q ;;
    *) cp "$workload" "$WORK/g.json" ;;
  esac
  ops=$(python3 -c "
import collections, json
g = json.load(open('$WORK/g.json'))
c = collections.Counter(n['op'] for n in g['nodes'])
print(f\"{sum(c.values())} ({', '.join(f'{k} {v}' for k, v in c.most_common(4))}, ...)\")")
  python3 -c "
import json
s = json.load(open('$WORK/s.json'))
print(f\"| $label | $ops | {s['compile']['tasks']} | {s['total_cycles']} | $best s |\")"
}

echo "| model (a2, batch 1) | graph ops | tasks | cycles | import + compile + simulate |"
echo "|---|---|---|---|---|"
row "ResNet-50, torchvision export (opset 13)" "$EXPORTS/resnet50.onnx"
row "ResNet-50, models/resnet50.json" models/resnet50.json
row "MobileNetV2, torchvision export" "$EXPORTS/mobilenet_v2.onnx"
row "DeepLabV3-ResNet-50, torchvision export, 224x224" "$EXPORTS/deeplabv3_resnet50.onnx"
row "DeepLabV3-MobileNetV3-Large, torchvision export, 320x320" "$EXPORTS/deeplabv3_mobilenet_v3_large_320.onnx"
row "TransformerEncoderLayer 768/12/3072, torch export, seq 128" "$EXPORTS/encoder_layer.onnx" --set workload.dims.seq=128
row "BERT-base layer, models/bert_layer.json, seq 128" models/bert_layer.json
row "models/onnx/residual_block.onnx" models/onnx/residual_block.onnx
row "models/onnx/depthwise_block.onnx" models/onnx/depthwise_block.onnx
row "models/onnx/transformer_block.onnx, seq 128" models/onnx/transformer_block.onnx --set workload.dims.seq=128
row "models/onnx/decode_block.onnx, KV cache of 511" models/onnx/decode_block.onnx --set workload.dims.past=511
