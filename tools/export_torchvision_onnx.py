#!/usr/bin/python3
"""Export torchvision / torch models to ONNX for the real-export checks of
docs/validation.md ("ONNX import") and the corpus of docs/onnx.md
(tools/onnx_corpus.py). Needs python3-torch and python3-torchvision
(Debian); the test suite does not: the torchvision exports are large
(ResNet-50: ~100 MB) and are not committed.

    /usr/bin/python3 tools/export_torchvision_onnx.py OUT_DIR [MODEL...]

MODEL (default resnet50):
  - a classification model of torchvision.models: resnet18, resnet50,
    mobilenet_v2, mobilenet_v3_small, efficientnet_b0, regnet_y_400mf,
    convnext_tiny, squeezenet1_0, densenet121, vit_b_16, ...;
  - a segmentation model of torchvision.models.segmentation (its "out" map,
    no auxiliary head): deeplabv3_resnet50, deeplabv3_mobilenet_v3_large,
    fcn_resnet50, lraspp_mobilenet_v3_large, ...;
  - encoder_layer: a torch.nn.TransformerEncoderLayer (768, 12 heads, 3072);
  - gpt2_block: a GPT-2-style pre-norm block in plain torch ops: LayerNorm,
    one fused QKV Linear split in three (ONNX Split), causal masked
    attention (masked_fill, softmax), a tanh-GELU MLP;
  - llama_block: a Llama-style block: RMSNorm (x * rsqrt(mean(x^2) + eps)
    * w), rotary embeddings (rotate_half on q and k, cos / sin computed from
    the positions), grouped-query attention (4 query heads, 2 KV heads,
    repeated by expand + reshape), an additive causal mask, a SiLU-gated MLP.

NAME:SIZE exports an image model at SIZE x SIZE instead of 224 x 224 (e.g.
deeplabv3_mobilenet_v3_large:320, written as
deeplabv3_mobilenet_v3_large_320.onnx). Random weights (torch.manual_seed(0)
before building each model, so an export is the same bytes every time):
cycle counts do not depend on the values. The batch axis is dynamic
(workload.batch binds it), and so is the sequence axis of the transformer
layer and blocks (workload.dims.seq). Opset 13, 14 for vit_b_16 and the
two blocks (OPSETS).

The two blocks are small (hidden 256, an MLP of 1.5 x hidden: under 2 MB
each) and are committed as models/onnx/gpt2_block.onnx and
models/onnx/llama_block.onnx; regenerate them with

    /usr/bin/python3 tools/export_torchvision_onnx.py models/onnx gpt2_block llama_block
"""
import argparse
import math
import os
import sys

from debian_deps import require
import tool_args

# The opset an export is written at when it is not 13.
OPSETS = {"vit_b_16": 14, "gpt2_block": 14, "llama_block": 14}
# Exports with a sequence axis, and the length they are traced at.
SEQUENCE_MODELS = {"encoder_layer": (128, 768), "gpt2_block": (64, 256), "llama_block": (64, 256)}


def file_stem(name):
    """The file name (without .onnx) an export of NAME[:SIZE] is written as."""
    base, _, size = name.partition(":")
    return f"{base}_{size}" if size else base


def opset_of(name):
    return OPSETS.get(name.partition(":")[0], 13)


def blocks(torch):
    """The GPT-2 and Llama blocks, defined once torch is imported."""
    nn = torch.nn
    F = torch.nn.functional

    class GPT2Block(nn.Module):
        def __init__(self, hidden=256, heads=4, ffn=384):
            super().__init__()
            self.hidden, self.heads = hidden, heads
            self.ln_1 = nn.LayerNorm(hidden)
            self.c_attn = nn.Linear(hidden, 3 * hidden)  # fused QKV
            self.c_proj = nn.Linear(hidden, hidden)
            self.ln_2 = nn.LayerNorm(hidden)
            self.c_fc = nn.Linear(hidden, ffn)
            self.c_fc_proj = nn.Linear(ffn, hidden)

        def attn(self, x):
            b, t, c = x.size()
            d = c // self.heads
            q, k, v = self.c_attn(x).split(self.hidden, dim=2)
            q, k, v = (z.view(b, t, self.heads, d).transpose(1, 2) for z in (q, k, v))
            att = (q @ k.transpose(-2, -1)) * (1.0 / math.sqrt(self.hidden // self.heads))
            pos = torch.arange(t, device=x.device)
            causal = pos[None, :] > pos[:, None]  # True above the diagonal: a future key
            att = att.masked_fill(causal, float("-inf"))
            att = F.softmax(att, dim=-1)
            y = (att @ v).transpose(1, 2).contiguous().view(b, t, c)
            return self.c_proj(y)

        def forward(self, x):
            x = x + self.attn(self.ln_1(x))
            return x + self.c_fc_proj(F.gelu(self.c_fc(self.ln_2(x)), approximate="tanh"))

    class RMSNorm(nn.Module):
        def __init__(self, hidden, eps=1e-6):
            super().__init__()
            self.eps = eps
            self.weight = nn.Parameter(torch.ones(hidden))

        def forward(self, x):
            return x * torch.rsqrt(x.pow(2).mean(-1, keepdim=True) + self.eps) * self.weight

    def rotate_half(x):
        half = x.shape[-1] // 2
        return torch.cat((-x[..., half:], x[..., :half]), dim=-1)

    class LlamaBlock(nn.Module):
        def __init__(self, hidden=256, heads=4, kv_heads=2, ffn=384, theta=10000.0):
            super().__init__()
            self.heads, self.kv_heads, self.d = heads, kv_heads, hidden // heads
            self.input_layernorm = RMSNorm(hidden)
            self.q_proj = nn.Linear(hidden, heads * self.d, bias=False)
            self.k_proj = nn.Linear(hidden, kv_heads * self.d, bias=False)
            self.v_proj = nn.Linear(hidden, kv_heads * self.d, bias=False)
            self.o_proj = nn.Linear(heads * self.d, hidden, bias=False)
            self.post_attention_layernorm = RMSNorm(hidden)
            self.gate_proj = nn.Linear(hidden, ffn, bias=False)
            self.up_proj = nn.Linear(hidden, ffn, bias=False)
            self.down_proj = nn.Linear(ffn, hidden, bias=False)
            inv_freq = 1.0 / theta ** (torch.arange(0, self.d, 2).float() / self.d)
            self.register_buffer("inv_freq", inv_freq, persistent=False)

        def repeat_kv(self, x):
            b, kvh, t, d = x.shape
            rep = self.heads // self.kv_heads
            return x[:, :, None, :, :].expand(b, kvh, rep, t, d).reshape(b, kvh * rep, t, d)

        def attn(self, x):
            b, t, _ = x.shape
            q = self.q_proj(x).view(b, t, self.heads, self.d).transpose(1, 2)
            k = self.k_proj(x).view(b, t, self.kv_heads, self.d).transpose(1, 2)
            v = self.v_proj(x).view(b, t, self.kv_heads, self.d).transpose(1, 2)
            pos = torch.arange(t, device=x.device).float()
            freqs = pos[:, None] * self.inv_freq[None, :]
            emb = torch.cat((freqs, freqs), dim=-1)
            cos, sin = emb.cos(), emb.sin()
            q = q * cos + rotate_half(q) * sin
            k = k * cos + rotate_half(k) * sin
            k, v = self.repeat_kv(k), self.repeat_kv(v)
            idx = torch.arange(t, device=x.device)
            mask = torch.zeros(t, t).masked_fill(idx[None, :] > idx[:, None], float("-inf"))
            att = (q @ k.transpose(-2, -1)) / math.sqrt(self.d) + mask
            att = F.softmax(att, dim=-1)
            y = (att @ v).transpose(1, 2).reshape(b, t, self.heads * self.d)
            return self.o_proj(y)

        def forward(self, x):
            x = x + self.attn(self.input_layernorm(x))
            h = self.post_attention_layernorm(x)
            return x + self.down_proj(F.silu(self.gate_proj(h)) * self.up_proj(h))

    return {"gpt2_block": GPT2Block, "llama_block": LlamaBlock}


def export(name, out_dir):
    torch = require("torch")
    torchvision = require("torchvision")
    torch.manual_seed(0)
    base, _, size = name.partition(":")
    side = int(size) if size else 224
    segmentation = torchvision.models.segmentation

    class SegmentationOut(torch.nn.Module):
        """A segmentation model returns a dict: export its "out" map."""

        def __init__(self, model):
            super().__init__()
            self.model = model

        def forward(self, x):
            return self.model(x)["out"]

    block_classes = blocks(torch)
    if base in SEQUENCE_MODELS:
        seq, hidden = SEQUENCE_MODELS[base]
        if base == "encoder_layer":
            model = torch.nn.TransformerEncoderLayer(d_model=768, nhead=12, dim_feedforward=3072, batch_first=True)
        else:
            model = block_classes[base]()
        x = torch.randn(1, seq, hidden)
        axes = {"x": {0: "batch", 1: "seq"}}
    elif hasattr(segmentation, base):
        build = getattr(segmentation, base)
        kwargs = {"weights": None, "weights_backbone": None}
        if not base.startswith("lraspp"):
            kwargs["aux_loss"] = False  # LR-ASPP has no auxiliary head to leave out
        model = SegmentationOut(build(**kwargs))
        x = torch.randn(1, 3, side, side)
        axes = {"x": {0: "batch"}}
    elif hasattr(torchvision.models, base):
        model = getattr(torchvision.models, base)(weights=None)
        x = torch.randn(1, 3, side, side)
        axes = {"x": {0: "batch"}}
    else:
        print(f"export_torchvision_onnx: error: unknown model '{base}'", file=sys.stderr)
        sys.exit(2)
    model.eval()
    path = os.path.join(out_dir, file_stem(name) + ".onnx")
    # Not under torch.no_grad(): there nn.MultiheadAttention (ViT, the encoder layer) takes its fast path,
    # aten::_native_multi_head_attention, which torch 1.13 cannot export.
    torch.onnx.export(model, x, path, input_names=["x"], output_names=["y"], dynamic_axes=axes,
                      opset_version=opset_of(name), do_constant_folding=True)
    print(f"{name} -> {path} ({os.path.getsize(path) / 1e6:.1f} MB)")


def main():
    ap = tool_args.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("out_dir", metavar="OUT_DIR", help="folder to write the exports into")
    ap.add_argument("models", nargs="*", default=["resnet50"], metavar="MODEL", help="MODEL or NAME:SIZE (default resnet50)")
    a = ap.parse_args()
    out_dir = a.out_dir
    require("torch")  # before the folder is made: without torch, one line and nothing written
    require("torchvision")
    os.makedirs(out_dir, exist_ok=True)
    for name in a.models:
        export(name, out_dir)


if __name__ == "__main__":
    main()
