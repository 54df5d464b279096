#!/usr/bin/env python3
"""Full-size random-weight stand-in for Smart Turn v3.2, to measure memory and compute at true scale.

Writes OUT/smart-turn-v3.2-cpu.onnx, where OUT is the first argument, else
$XDG_CACHE_HOME/voice-agent/standins (~/.cache/voice-agent/standins): a model directory, used
as `voice-agent ... --model-dir OUT`. Not the model cache: there the manifest's pinned size
would make a stand-in look like a damaged download of the real model.

The architecture is Smart Turn v3's (pipecat-ai/smart-turn, smart_turn/train.py,
SmartTurnV3Model; see scripts/models/FULLSIZE.md for the sources):

  Whisper Tiny encoder (openai/whisper-tiny: d_model 384, 4 layers, 6 heads, FFN 1536, GELU,
  pre-LayerNorm) with max_source_positions 400 instead of 1500, so it takes 8 s of features:
    conv1  Conv1d(80, 384, k=3, pad 1) + GELU             [B, 80, 800] -> [B, 384, 800]
    conv2  Conv1d(384, 384, k=3, stride 2, pad 1) + GELU  -> [B, 384, 400]
    + sinusoidal positions [400, 384], 4 encoder layers, final LayerNorm -> [B, 400, 384]
  attention pooling: Linear(384, 256), Tanh, Linear(256, 1), softmax over the 400 frames,
  weighted sum -> [B, 384]
  classifier: Linear(384, 256), LayerNorm(256), GELU, Dropout, Linear(256, 64), GELU,
  Linear(64, 1), then a sigmoid: output `logits` [B, 1] is already a probability.

About 8.0 M parameters, 32 MB as fp32 (the real fp32 "GPU" export is 32 MB; the published
smart-turn-v3.2-cpu.onnx is the int8 QDQ quantization of it, 8.3 MiB). This script writes fp32 only.
Parameter names follow Hugging Face's WhisperEncoder and SmartTurnV3Model, so the state dict of a
real checkpoint would load into FullSizeSmartTurn unchanged.

The signature is exactly what turn/smartturn checks: input `input_features` f32 [batch, 80, 800],
output `logits` f32 [batch, 1] (batch symbolic). Weights come from a fixed seed; the last bias is
set so that the demo-like pattern input lands near p = 0.5 rather than at a saturated 0 or 1.

Run (from the repository root; Debian: apt-get install -y python3-numpy python3-onnx
python3-torch; use /usr/bin/python3):

    /usr/bin/python3 scripts/models/make_fullsize_smart_turn.py
    go run ./cmd/voice-agent turn test/testdata/demo.wav --model-dir ~/.cache/voice-agent/standins --json
    go run ./cmd/voice-agent bench stages test/testdata/demo.wav --model-dir ~/.cache/voice-agent/standins
"""
import math
import os
import sys

import numpy as np
import onnx
import torch
from torch import nn

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from make_tiny_xasr import set_dims  # noqa: E402  (one helper for every generator)

OPSET = 17  # as make_tiny_smart_turn.py (the real v3.2 export uses 18; v3.0 used 20)
SEED = 20250102

# Whisper Tiny encoder (openai/whisper-tiny config.json).
N_MELS = 80
N_FRAMES = 800  # 8 s at 100 frames/s
D_MODEL = 384
LAYERS = 4
HEADS = 6
FFN = 1536
POSITIONS = 400  # SmartTurnV3Model sets config.max_source_positions = 400 (= 800 / conv2 stride)
# Smart Turn v3 head.
POOL_HIDDEN = 256
CLS_HIDDEN = (256, 64)

MODEL_FILE = "smart-turn-v3.2-cpu.onnx"


def sinusoids(length, channels, max_timescale=10000):
    """Whisper's positional embedding (openai/whisper model.py `sinusoids`); Hugging Face
    initializes WhisperEncoder.embed_positions with the same values."""
    inc = math.log(max_timescale) / (channels // 2 - 1)
    inv = torch.exp(-inc * torch.arange(channels // 2, dtype=torch.float32))
    t = torch.arange(length, dtype=torch.float32)[:, None] * inv[None, :]
    return torch.cat([torch.sin(t), torch.cos(t)], dim=1)


class WhisperAttention(nn.Module):
    def __init__(self):
        super().__init__()
        self.head_dim = D_MODEL // HEADS
        self.scaling = self.head_dim ** -0.5
        self.q_proj = nn.Linear(D_MODEL, D_MODEL)
        self.k_proj = nn.Linear(D_MODEL, D_MODEL, bias=False)  # Whisper's key projection has no bias
        self.v_proj = nn.Linear(D_MODEL, D_MODEL)
        self.out_proj = nn.Linear(D_MODEL, D_MODEL)

    def forward(self, x):
        b, t, _ = x.shape
        q = (self.q_proj(x) * self.scaling).view(b, t, HEADS, self.head_dim).transpose(1, 2)
        k = self.k_proj(x).view(b, t, HEADS, self.head_dim).transpose(1, 2)
        v = self.v_proj(x).view(b, t, HEADS, self.head_dim).transpose(1, 2)
        w = torch.softmax(torch.matmul(q, k.transpose(2, 3)), dim=-1)
        o = torch.matmul(w, v).transpose(1, 2).reshape(b, t, D_MODEL)
        return self.out_proj(o)


class WhisperEncoderLayer(nn.Module):
    def __init__(self):
        super().__init__()
        self.self_attn = WhisperAttention()
        self.self_attn_layer_norm = nn.LayerNorm(D_MODEL)
        self.fc1 = nn.Linear(D_MODEL, FFN)
        self.fc2 = nn.Linear(FFN, D_MODEL)
        self.final_layer_norm = nn.LayerNorm(D_MODEL)
        self.act = nn.GELU()

    def forward(self, x):
        x = x + self.self_attn(self.self_attn_layer_norm(x))
        return x + self.fc2(self.act(self.fc1(self.final_layer_norm(x))))


class WhisperEncoder(nn.Module):
    def __init__(self):
        super().__init__()
        self.conv1 = nn.Conv1d(N_MELS, D_MODEL, kernel_size=3, padding=1)
        self.conv2 = nn.Conv1d(D_MODEL, D_MODEL, kernel_size=3, stride=2, padding=1)
        self.embed_positions = nn.Embedding(POSITIONS, D_MODEL)
        with torch.no_grad():
            self.embed_positions.weight.copy_(sinusoids(POSITIONS, D_MODEL))
        self.layers = nn.ModuleList([WhisperEncoderLayer() for _ in range(LAYERS)])
        self.layer_norm = nn.LayerNorm(D_MODEL)
        self.act = nn.GELU()

    def forward(self, input_features):
        x = self.act(self.conv1(input_features))
        x = self.act(self.conv2(x))
        x = x.permute(0, 2, 1) + self.embed_positions.weight  # [B, 400, 384]
        for layer in self.layers:
            x = layer(x)
        return self.layer_norm(x)


class FullSizeSmartTurn(nn.Module):
    def __init__(self):
        super().__init__()
        self.encoder = WhisperEncoder()
        self.pool_attention = nn.Sequential(
            nn.Linear(D_MODEL, POOL_HIDDEN), nn.Tanh(), nn.Linear(POOL_HIDDEN, 1))
        self.classifier = nn.Sequential(
            nn.Linear(D_MODEL, CLS_HIDDEN[0]), nn.LayerNorm(CLS_HIDDEN[0]), nn.GELU(), nn.Dropout(0.1),
            nn.Linear(CLS_HIDDEN[0], CLS_HIDDEN[1]), nn.GELU(), nn.Linear(CLS_HIDDEN[1], 1))
        # As SmartTurnV3Model's initialization of its head.
        for m in list(self.pool_attention) + list(self.classifier):
            if isinstance(m, nn.Linear):
                m.weight.data.normal_(mean=0.0, std=0.1)
                m.bias.data.zero_()

    def logit(self, input_features):
        h = self.encoder(input_features)
        w = torch.softmax(self.pool_attention(h), dim=1)  # [B, 400, 1]
        pooled = torch.sum(h * w, dim=1)  # [B, 384]
        return self.classifier(pooled)  # [B, 1]

    def forward(self, input_features):
        return torch.sigmoid(self.logit(input_features)).reshape(-1, 1)


def pattern():
    """make_tiny_smart_turn.py's fixed pattern, shifted into the range of Whisper features
    ((log10 power + 4) / 4 lies in about [-1, 1.5])."""
    i = np.arange(N_MELS * N_FRAMES)
    return ((i % 97) / 97.0 - 0.5).astype(np.float32).reshape(1, N_MELS, N_FRAMES)


def standins_dir():
    """Where stand-ins go by default: beside the MNN builds, out of the model cache."""
    base = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    return os.path.join(base, "voice-agent", "standins")


def count(module):
    return sum(p.numel() for p in module.parameters())


def main():
    out_dir = sys.argv[1] if len(sys.argv) > 1 else standins_dir()
    os.makedirs(out_dir, exist_ok=True)
    path = os.path.join(out_dir, MODEL_FILE)

    torch.manual_seed(SEED)
    model = FullSizeSmartTurn().eval()
    x = torch.from_numpy(pattern())
    with torch.no_grad():
        # Centre the output: the pattern input gets logit 0 (p = 0.5), so other inputs give
        # probabilities spread around the middle instead of all at one end.
        model.classifier[-1].bias -= model.logit(x)[0, 0]
        p = float(model(x)[0, 0])

    parts = {
        "encoder conv front-end": count(model.encoder.conv1) + count(model.encoder.conv2),
        "encoder positions (fixed sinusoids)": model.encoder.embed_positions.weight.numel(),
        "encoder layers": count(model.encoder.layers),
        "encoder final LayerNorm": count(model.encoder.layer_norm),
        "attention pooling": count(model.pool_attention),
        "classifier": count(model.classifier),
    }
    total = count(model)
    assert total == sum(parts.values())

    torch.onnx.export(model, x, path, input_names=["input_features"], output_names=["logits"],
                      dynamic_axes={"input_features": {0: "batch"}, "logits": {0: "batch"}},
                      opset_version=OPSET, do_constant_folding=True)
    m = onnx.load(path)
    # Declare exactly the signature turn/smartturn checks (torch may leave the output's
    # second axis symbolic after the final reshape).
    set_dims(m.graph.input[0], ["batch", N_MELS, N_FRAMES])
    set_dims(m.graph.output[0], ["batch", 1])
    m.producer_name = "make_fullsize_smart_turn.py"
    for k, v in (("comment", "random-weight full-size stand-in for Smart Turn v3.2 (fp32); not a turn detector"),
                 ("architecture", "whisper-tiny encoder (384x4, 6 heads, ffn 1536, 400 positions) + attention pooling + MLP head"),
                 ("parameters", str(total)), ("seed", str(SEED))):
        prop = m.metadata_props.add()
        prop.key, prop.value = k, v
    onnx.checker.check_model(m)
    onnx.save(m, path)

    for name, n in parts.items():
        print("  %-38s %10d" % (name, n))
    print("parameters: %d (%.2f M); fp32 weights %.1f MiB" % (total, total / 1e6, total * 4 / 2**20))
    print("pattern input: p=%.6f" % p)
    print("wrote %s (%d bytes, %.1f MiB)" % (path, os.path.getsize(path), os.path.getsize(path) / 2**20))


if __name__ == "__main__":
    main()
