#!/usr/bin/python3
"""Export torchvision / torch models to ONNX for the real-export checks of
docs/validation.md ("ONNX import"). Needs python3-torch and
python3-torchvision (Debian); the test suite does not: the exports are large
(ResNet-50: ~100 MB) and are not committed.

    /usr/bin/python3 tools/export_torchvision_onnx.py OUT_DIR [MODEL...]

MODEL: resnet50 (default), mobilenet_v2, encoder_layer (a
torch.nn.TransformerEncoderLayer), or a segmentation model of
torchvision.models.segmentation such as deeplabv3_resnet50 (its "out" map;
no auxiliary head). NAME:SIZE exports an image model at SIZE x SIZE
instead of 224 x 224 (e.g. deeplabv3_mobilenet_v3_large:320, written as
deeplabv3_mobilenet_v3_large_320.onnx). Random weights: cycle counts do not
depend on the values. The batch axis is dynamic (workload.batch binds it),
and so is the sequence axis of the transformer layer (workload.dims.seq).
"""
import os
import sys

import torch
import torchvision


class SegmentationOut(torch.nn.Module):
    """A segmentation model returns a dict: export its "out" map."""

    def __init__(self, model):
        super().__init__()
        self.model = model

    def forward(self, x):
        return self.model(x)["out"]


def export(name, out_dir):
    torch.manual_seed(0)
    name, _, size = name.partition(":")
    side = int(size) if size else 224
    stem = f"{name}_{side}" if size else name
    if name == "encoder_layer":
        model = torch.nn.TransformerEncoderLayer(d_model=768, nhead=12, dim_feedforward=3072, batch_first=True)
        x = torch.randn(1, 128, 768)
        axes = {"x": {0: "batch", 1: "seq"}}
    elif hasattr(torchvision.models.segmentation, name):
        model = SegmentationOut(getattr(torchvision.models.segmentation, name)(weights=None, weights_backbone=None,
                                                                              aux_loss=False))
        x = torch.randn(1, 3, side, side)
        axes = {"x": {0: "batch"}}
    else:
        model = getattr(torchvision.models, name)(weights=None)
        x = torch.randn(1, 3, side, side)
        axes = {"x": {0: "batch"}}
    model.eval()
    path = os.path.join(out_dir, stem + ".onnx")
    torch.onnx.export(model, x, path, input_names=["x"], output_names=["y"], dynamic_axes=axes, opset_version=13,
                      do_constant_folding=True)
    print(f"{name} -> {path} ({os.path.getsize(path) / 1e6:.1f} MB)")


def main():
    if len(sys.argv) < 2:
        sys.exit(__doc__)
    out_dir = sys.argv[1]
    os.makedirs(out_dir, exist_ok=True)
    for name in sys.argv[2:] or ["resnet50"]:
        export(name, out_dir)


if __name__ == "__main__":
    main()
