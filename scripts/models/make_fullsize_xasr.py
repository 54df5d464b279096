#!/usr/bin/env python3
"""Full-size random-weight stand-in for the X-ASR zh-en streaming 160 ms zipformer2 transducer,
to measure memory and compute at true scale.

Writes, under OUT/xasr-zh-en-streaming-160ms/ (OUT is the first argument, else
$XDG_CACHE_HOME/voice-agent/standins, i.e. ~/.cache/voice-agent/standins: a model directory, used as
`voice-agent asr ... --model-dir OUT`; not the model cache, where the manifest's pinned sizes would
make a stand-in look like a damaged download of the real model):

  encoder-160ms.onnx  the streaming encoder with the signature of icefall's
                      zipformer/export-onnx-streaming.py (OnnxEncoder): input `x` f32 [N, 29, 80],
                      per layer i = 0..18 `cached_key_i`, `cached_nonlin_attn_i`, `cached_val1_i`,
                      `cached_val2_i`, `cached_conv1_i`, `cached_conv2_i`, then `embed_states`
                      f32 [N, 128, 3, 19] and `processed_lens` i64 [N]; outputs `encoder_out` f32
                      [N, 4, 512] (encoder_proj 768 -> 512 folded in) and `new_<name>` for every
                      state input, all computed by the streaming forward (the caches are shifted
                      by the chunk's new frames, new_processed_lens = processed_lens + 8). The
                      declared output shapes are forced to the input shapes (only N symbolic), as
                      make_tiny_xasr.py's finish() does. Metadata as the export writes it (with
                      model_author/comment naming this script).
  decoder-160ms.onnx  `y` i64 [N, 2] -> `decoder_out` f32 [N, 512]: Embedding(5000, 512) (-1 embeds
                      to zeros), Conv1d(512, 512, k=2, groups=128, no bias), ReLU, decoder_proj
                      Linear(512, 512); scripted and exported as icefall does (torch.jit.script).
                      Metadata context_size=2, vocab_size=5000.
  joiner-160ms.onnx   `encoder_out`, `decoder_out` f32 [N, 512] -> `logit` f32 [N, 5000]:
                      output_linear(tanh(enc + dec)). Metadata joiner_dim=512. The blank logit's
                      bias is calibrated so that 25-45% of the encoder frames of real speech
                      features (asr/fbank/testdata/fbank_speech.f32.gz) emit a token (27% at
                      seed 20250612), so the decoder path is exercised.
  tokens.txt          a copy of asr/xasr/testdata/tokens.txt (X-ASR's real 5000-piece table).

Architecture (scripts/models/FULLSIZE.md section 2 gives the sources: X-ASR's README/train.py,
icefall's zipformer recipe, sherpa-onnx's export-streaming.sh):

  encoder_embed  Conv2dSubsampling: Conv2d(1,8,3,pad (0,1)) SwooshR, Conv2d(8,32,3,stride 2)
                 SwooshR, Conv2d(32,128,3,stride (1,2)) SwooshR -> [N,128,11,19]; ConvNeXt
                 (depthwise 7x7 with 3 cached left frames = embed_states, 1x1 128->384 SwooshL,
                 1x1 384->128, residual) -> 8 frames; Linear(19*128, 192), BiasNorm.  611,953 params
  encoder        Zipformer2, 6 stacks:
                   layers            2,   2,    4,    5,    4,   2   (19)
                   encoder_dim     192, 256,  512,  768,  512, 256
                   feedforward_dim 512, 768, 1536, 2048, 1536, 768
                   downsampling      1,   2,    4,    8,    4,   2   (+ output downsampling 2)
                   num_heads         4,   4,    4,    8,    4,   4
                   cnn kernel       31,  31,   15,   15,   15,  31
                   left context    256, 128,   64,   32,   64, 128   frames at each stack's rate
                 query/key head dim 32, value head dim 12, pos head dim 4, pos_dim 48.
                 Each layer (Zipformer2EncoderLayer.streaming_forward): self_attn_weights
                 (in_proj to q,k,p; rel-pos scores from CompactRelPositionalEncoding through
                 linear_pos, gathered from relative to absolute offsets; keys cached; the not yet
                 filled part of the left context masked from processed_lens), feed_forward1
                 (d -> 3/4 ff -> d, SwooshL), nonlin_attention (in_proj d -> 3 x 3d/4, tanh gate,
                 head-0 attention weights over cached+new, out_proj), self_attn1 (values cached),
                 conv_module1 (in_proj d -> 2d, GLU-style sigmoid gate, chunk-causal depthwise conv:
                 causal half-kernel conv over the kernel//2 cached frames + chunkwise conv scaled by
                 chunkwise_conv_scale, SwooshR, out_proj), feed_forward2 (d -> ff -> d),
                 bypass_mid, self_attn2, conv_module2, feed_forward3 (d -> 5/4 ff -> d), BiasNorm,
                 bypass. Stacks 1..5 are wrapped in SimpleDownsample (softmax-weighted sum) /
                 SimpleUpsample (repeat) / out_combiner bypass; channels between stacks are
                 truncated or zero-padded (convert_num_channels); the output takes each channel
                 range from the latest stack that has it (768 wide), then SimpleDownsample(2):
                 8 -> 4 frames.  146,855,113 params
  encoder_proj   Linear(768, 512), folded into the encoder.  393,728 params
  decoder        2,564,096 + decoder_proj 262,656 = 2,826,752 params
  joiner         output_linear Linear(512, 5000) = 2,565,000 params

The script prints the counts per part and per stack and compares them with FULLSIZE.md's (they are
equal: every parameter of X-ASR's model exists here with its real shape and name, including the
unused per-layer `bypass_scale` icefall keeps, which, as in the real export, is not in the ONNX
file).

Compact inference-only re-implementation, not icefall's code: no Balancer/Whiten/ScheduledFloat/
dropout/layer skipping (they are identities at inference and have no parameters). Where this differs
from the real graph:
  - SwooshL/SwooshR are written softplus(x - 4) - 0.08x - 0.035 and softplus(x - 1) - 0.08x -
    0.313261687 (the real ONNX spells softplus as max + log1p(exp(-|d|))); same values, fewer nodes.
  - The conv modules' masked_fill with the chunk's all-zero padding mask (a no-op in the streaming
    export) is left out.
  - The padding mask of the left context is built as processed_lens <= [255..0, -1 x 8] (the
    real export: arange, <=, cast, flip, concat with zeros); same mask.
  Matmul shapes, attention/conv/cache shapes and thus FLOPs are the real ones. The weights are
  random (fixed seed, every parameter drawn separately: zipformer2 deep-copies its layers, and equal
  initializers would be de-duplicated by the exporter, shrinking the file), so the output is not
  speech recognition, only the right cost.

Sizes: decoder-160ms.onnx 11,309,084 B and joiner-160ms.onnx 10,260,467 B, exactly the published
sizes (same module names, scripted decoder, metadata and producer as icefall's export with torch
1.13). encoder-160ms.onnx is 590,551,661 B, 2,415,392 B (0.41 %) below the published 592,967,053 B:
its initializers hold 147,239,098 floats, 621,696 fewer than the parameters, mostly because the
exporter's constant folding turns each chunkwise_conv_scale [2, C, kernel] into the [C, chunk] scale
the 160 ms chunk uses (-612,352 floats in all) and drops the unused bypass_scale (-9,344); what the
real file holds instead is not known here (it could not be read). The graph has 439 MatMul nodes, as
FULLSIZE.md counts on the real export, and 5,669 nodes in all.

Checked (2 cores): `voice-agent asr` on asr/fbank/testdata/speech_16k.wav emits exactly the tokens
this script's torch greedy search prints for the full windows (then a few more from the padded
tail), so the ONNX graph and its state feedback match the torch streaming computation.

Run (from the repository root; Debian: apt-get install -y python3-numpy python3-onnx python3-torch;
use /usr/bin/python3; 3-5 minutes and 3.8 GB peak RSS on 2 cores, byte-reproducible):

    /usr/bin/python3 scripts/models/make_fullsize_xasr.py [OUT]
    go run ./cmd/voice-agent asr test/testdata/demo.wav --model-dir ~/.cache/voice-agent/standins --json
"""
import gzip
import hashlib
import math
import os
import shutil
import sys
import time

import numpy as np
import onnx
import torch
from torch import nn

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from make_tiny_xasr import set_dims  # noqa: E402  (one helper for every generator)

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.join(HERE, "..", "..")
OPSET = 13  # X-ASR's export (export-onnx-streaming.py opset_version = 13)
SEED = 20250612
MODEL_DIR = "xasr-zh-en-streaming-160ms"

# Real X-ASR 160 ms configuration (FULLSIZE.md section 2).
FEAT = 80
CHUNK = 8  # frames after the 2x subsampling of the front end
DECODE_CHUNK_LEN = 2 * CHUNK  # 16
T = DECODE_CHUNK_LEN + 7 + 2 * 3  # 29
LEFT_CONTEXT_FRAMES = 256
NUM_LAYERS = [2, 2, 4, 5, 4, 2]
ENCODER_DIMS = [192, 256, 512, 768, 512, 256]
FEEDFORWARD_DIMS = [512, 768, 1536, 2048, 1536, 768]
UNMASKED_DIMS = [192, 192, 256, 320, 256, 192]  # training-time feature masking only; metadata-free
DOWNSAMPLING = [1, 2, 4, 8, 4, 2]
OUTPUT_DOWNSAMPLING = 2
NUM_HEADS = [4, 4, 4, 8, 4, 4]
QUERY_HEAD_DIM = 32
VALUE_HEAD_DIM = 12
POS_HEAD_DIM = 4
POS_DIM = 48
KERNELS = [31, 31, 15, 15, 15, 31]
LEFT_CONTEXT = [LEFT_CONTEXT_FRAMES // d for d in DOWNSAMPLING]
JOINER_DIM = 512
DECODER_DIM = 512
VOCAB = 5000
CONTEXT = 2
EMBED_CHANNELS = (8, 32, 128)
EMBED_FREQ = ((FEAT - 1) // 2 - 1) // 2  # 19
EMBED_LEFT_PAD = 3  # ConvNeXt kernel (7, 7)
OUT_FRAMES = CHUNK // OUTPUT_DOWNSAMPLING  # 4
UNK = 4015  # <unk> in X-ASR's tokens.txt

# FULLSIZE.md's counts (from X-ASR's own code).
EXPECTED = {
    "encoder_embed": 611_953,
    "encoder": 146_855_113,
    "encoder_proj": 393_728,
    "encoder total": 147_860_794,
    "decoder": 2_826_752,
    "joiner": 2_565_000,
}
EXPECTED_STACKS_M = [2.12, 3.91, 29.55, 77.83, 29.55, 3.91]
PUBLISHED = {"encoder-160ms.onnx": 592_967_053, "decoder-160ms.onnx": 11_309_084,
             "joiner-160ms.onnx": 10_260_467}


def swoosh_l(x):
    return nn.functional.softplus(x - 4.0) - 0.08 * x - 0.035


def swoosh_r(x):
    return nn.functional.softplus(x - 1.0) - 0.08 * x - 0.313261687


def rnd(*shape, std=0.1, mean=0.0):
    """A fresh random parameter (every one different: see the de-duplication note above)."""
    return nn.Parameter(torch.randn(tuple(shape)) * std + mean)


def linear(n_in, n_out, bias=True, scale=1.0):
    """nn.Linear with torch's default random init, optionally scaled down like icefall's
    ScaledLinear(initial_scale=...) so that the residual branches start small."""
    m = nn.Linear(n_in, n_out, bias=bias)
    with torch.no_grad():
        m.weight.mul_(scale)
        if bias:
            m.bias.mul_(scale)
    return m


class BiasNorm(nn.Module):
    """x * exp(log_scale) / rms(x - bias) over the channel axis (icefall's BiasNorm)."""

    def __init__(self, dim):
        super().__init__()
        self.log_scale = rnd(std=0.1)
        self.bias = rnd(dim, std=0.1)

    def forward(self, x):
        scales = torch.mean((x - self.bias) ** 2, dim=-1, keepdim=True) ** -0.5 * self.log_scale.exp()
        return x * scales


class Bypass(nn.Module):
    """src_orig + (src - src_orig) * bypass_scale (icefall's BypassModule at inference)."""

    def __init__(self, dim):
        super().__init__()
        self.bypass_scale = rnd(dim, std=0.05, mean=0.5)

    def forward(self, src_orig, src):
        return src_orig + (src - src_orig) * self.bypass_scale


class ActivationLinear(nn.Module):
    """icefall's ActivationDropoutAndLinear at inference: activation, then a Linear whose
    parameters are `weight` and `bias` directly on this module."""

    def __init__(self, n_in, n_out, activation, scale):
        super().__init__()
        lin = linear(n_in, n_out, scale=scale)
        self.weight, self.bias = lin.weight, lin.bias
        self.activation = activation

    def forward(self, x):
        return nn.functional.linear(self.activation(x), self.weight, self.bias)


def rel_pos_emb(left, seq, dim=POS_DIM):
    """CompactRelPositionalEncoding's embedding for relative offsets -(left+seq-1) .. seq-1
    ([left + 2 seq - 1, dim]): atan of a log-compressed offset, then cos/sin at frequencies
    1..dim/2, the last channel 1 (a bias)."""
    x = np.arange(-(left + seq - 1), seq, dtype=np.float64)[:, None]
    c = math.sqrt(dim)
    xc = c * np.sign(x) * (np.log(np.abs(x) + c) - math.log(c))
    xa = np.arctan(xc / (dim / (2 * math.pi)))
    freqs = 1 + np.arange(dim // 2, dtype=np.float64)
    pe = np.zeros((x.shape[0], dim), dtype=np.float64)
    pe[:, 0::2] = np.cos(xa * freqs)
    pe[:, 1::2] = np.sin(xa * freqs)
    pe[:, -1] = 1.0
    return torch.from_numpy(pe.astype(np.float32)).unsqueeze(0)


class RelPositionMultiheadAttentionWeights(nn.Module):
    def __init__(self, dim, heads, left, seq):
        super().__init__()
        self.heads, self.left, self.seq = heads, left, seq
        self.in_proj = linear(dim, (2 * QUERY_HEAD_DIM + POS_HEAD_DIM) * heads, scale=QUERY_HEAD_DIM ** -0.25)
        self.linear_pos = linear(POS_DIM, heads * POS_HEAD_DIM, bias=False)
        # pos_scores[.., i, n] (relative offset n) -> [.., i, j] (key j): n = seq - 1 - i + j.
        k_len = left + seq
        idx = (seq - 1 - np.arange(seq))[:, None] + np.arange(k_len)[None, :]
        self.register_buffer("gather_index", torch.from_numpy(idx).reshape(1, 1, seq, k_len), persistent=False)

    def forward(self, x, pos_emb, cached_key, key_padding_mask):
        h, left, seq = self.heads, self.left, self.seq
        qd = QUERY_HEAD_DIM * h
        x = self.in_proj(x)  # (seq, N, 2 qd + h pos_head_dim)
        q, k, p = x[..., :qd], x[..., qd:2 * qd], x[..., 2 * qd:]
        k = torch.cat([cached_key, k], dim=0)
        new_key = k[-left:]
        k_len = left + seq
        q = q.reshape(seq, -1, h, QUERY_HEAD_DIM).permute(2, 1, 0, 3)  # (h, N, seq, qhd)
        p = p.reshape(seq, -1, h, POS_HEAD_DIM).permute(2, 1, 0, 3)  # (h, N, seq, phd)
        k = k.reshape(k_len, -1, h, QUERY_HEAD_DIM).permute(2, 1, 3, 0)  # (h, N, qhd, k_len)
        scores = torch.matmul(q, k)
        pos = self.linear_pos(pos_emb)  # constant: folded at export
        pos = pos.reshape(-1, left + 2 * seq - 1, h, POS_HEAD_DIM).permute(2, 0, 3, 1)
        pos_scores = torch.matmul(p, pos)  # (h, N, seq, left + 2 seq - 1)
        pos_scores = torch.gather(pos_scores, 3, self.gather_index.expand_as(scores))
        scores = scores + pos_scores
        scores = scores.masked_fill(key_padding_mask.unsqueeze(1), -1000.0)
        return scores.softmax(dim=-1), new_key


class SelfAttention(nn.Module):
    def __init__(self, dim, heads, left, seq):
        super().__init__()
        self.heads, self.left, self.seq = heads, left, seq
        self.in_proj = linear(dim, heads * VALUE_HEAD_DIM)
        self.out_proj = linear(heads * VALUE_HEAD_DIM, dim, scale=0.25)

    def forward(self, x, attn_weights, cached_val):
        v = torch.cat([cached_val, self.in_proj(x)], dim=0)  # (left + seq, N, h vhd)
        new_val = v[-self.left:]
        v = v.reshape(self.left + self.seq, -1, self.heads, VALUE_HEAD_DIM).permute(2, 1, 0, 3)
        o = torch.matmul(attn_weights, v)  # (h, N, seq, vhd)
        o = o.permute(2, 1, 0, 3).reshape(self.seq, -1, self.heads * VALUE_HEAD_DIM)
        return self.out_proj(o), new_val


class FeedforwardModule(nn.Module):
    def __init__(self, dim, ff):
        super().__init__()
        self.in_proj = linear(dim, ff)
        self.out_proj = ActivationLinear(ff, dim, swoosh_l, scale=0.25)

    def forward(self, x):
        return self.out_proj(self.in_proj(x))


class NonlinAttention(nn.Module):
    def __init__(self, dim, left, seq):
        super().__init__()
        self.hidden, self.left, self.seq = 3 * dim // 4, left, seq
        self.in_proj = linear(dim, 3 * self.hidden)
        self.out_proj = linear(self.hidden, dim, scale=0.25)

    def forward(self, x, attn_weights, cached_x):
        s, x, y = self.in_proj(x).chunk(3, dim=2)
        x = x * torch.tanh(s)
        x = x.reshape(self.seq, -1, 1, self.hidden).permute(2, 1, 0, 3)  # (1, N, seq, hidden)
        x = torch.cat([cached_x, x], dim=2)
        new_x = x[:, :, -self.left:]
        x = torch.matmul(attn_weights, x)  # head 0's weights: (1, N, seq, hidden)
        x = x.permute(2, 1, 0, 3).reshape(self.seq, -1, self.hidden)
        return self.out_proj(x * y), new_x


class ChunkCausalDepthwiseConv1d(nn.Module):
    def __init__(self, dim, kernel, seq):
        super().__init__()
        self.left_pad = kernel // 2
        self.causal_conv = nn.Conv1d(dim, dim, (kernel + 1) // 2, groups=dim)
        self.chunkwise_conv = nn.Conv1d(dim, dim, kernel, padding=kernel // 2, groups=dim)
        self.chunkwise_conv_scale = rnd(2, dim, kernel, std=0.1)
        self.seq = seq

    def forward(self, x, cache):
        x = torch.cat([cache, x], dim=2)  # (N, C, left_pad + seq)
        new_cache = x[..., -self.left_pad:]
        x_causal = self.causal_conv(x)
        x_chunk = self.chunkwise_conv(x[..., self.left_pad:])
        seq = self.seq  # < kernel in every stack: edges cut to the chunk (constant-folded)
        scale = 1.0 + self.chunkwise_conv_scale[0][:, :seq] + self.chunkwise_conv_scale[1][:, -seq:]
        return x_chunk * scale + x_causal, new_cache


class ConvolutionModule(nn.Module):
    def __init__(self, dim, kernel, seq):
        super().__init__()
        self.in_proj = linear(dim, 2 * dim)
        self.depthwise_conv = ChunkCausalDepthwiseConv1d(dim, kernel, seq)
        self.out_proj = ActivationLinear(dim, dim, swoosh_r, scale=0.25)

    def forward(self, x, cache):
        x, s = self.in_proj(x).chunk(2, dim=2)
        x = (x * torch.sigmoid(s)).permute(1, 2, 0)  # (N, C, seq)
        x, new_cache = self.depthwise_conv(x, cache)
        return self.out_proj(x.permute(2, 0, 1)), new_cache


class Zipformer2EncoderLayer(nn.Module):
    def __init__(self, dim, ff, heads, kernel, left, seq):
        super().__init__()
        self.bypass = Bypass(dim)
        self.bypass_mid = Bypass(dim)
        self.self_attn_weights = RelPositionMultiheadAttentionWeights(dim, heads, left, seq)
        self.self_attn1 = SelfAttention(dim, heads, left, seq)
        self.self_attn2 = SelfAttention(dim, heads, left, seq)
        self.feed_forward1 = FeedforwardModule(dim, ff * 3 // 4)
        self.feed_forward2 = FeedforwardModule(dim, ff)
        self.feed_forward3 = FeedforwardModule(dim, ff * 5 // 4)
        self.nonlin_attention = NonlinAttention(dim, left, seq)
        self.conv_module1 = ConvolutionModule(dim, kernel, seq)
        self.conv_module2 = ConvolutionModule(dim, kernel, seq)
        # Unused by icefall's forward ("TODO: remove it") but a parameter of the real model.
        self.bypass_scale = rnd(dim, std=0.05, mean=0.5)
        self.norm = BiasNorm(dim)

    def forward(self, src, pos_emb, mask, cached_key, cached_nonlin_attn, cached_val1, cached_val2,
                cached_conv1, cached_conv2):
        src_orig = src
        attn_weights, cached_key = self.self_attn_weights(src, pos_emb, cached_key, mask)
        src = src + self.feed_forward1(src)
        na, cached_nonlin_attn = self.nonlin_attention(src, attn_weights[0:1], cached_nonlin_attn)
        src = src + na
        sa, cached_val1 = self.self_attn1(src, attn_weights, cached_val1)
        src = src + sa
        conv, cached_conv1 = self.conv_module1(src, cached_conv1)
        src = src + conv
        src = src + self.feed_forward2(src)
        src = self.bypass_mid(src_orig, src)
        sa, cached_val2 = self.self_attn2(src, attn_weights, cached_val2)
        src = src + sa
        conv, cached_conv2 = self.conv_module2(src, cached_conv2)
        src = src + conv
        src = src + self.feed_forward3(src)
        src = self.bypass(src_orig, self.norm(src))
        return src, [cached_key, cached_nonlin_attn, cached_val1, cached_val2, cached_conv1, cached_conv2]


class Zipformer2Encoder(nn.Module):
    """One stack at its own frame rate; its relative positional embedding is a constant."""

    def __init__(self, s):
        super().__init__()
        seq = CHUNK // DOWNSAMPLING[s]
        self.num_layers = NUM_LAYERS[s]
        self.register_buffer("pos_emb", rel_pos_emb(LEFT_CONTEXT[s], seq), persistent=False)
        self.layers = nn.ModuleList([
            Zipformer2EncoderLayer(ENCODER_DIMS[s], FEEDFORWARD_DIMS[s], NUM_HEADS[s], KERNELS[s],
                                   LEFT_CONTEXT[s], seq) for _ in range(NUM_LAYERS[s])])

    def forward(self, x, states, mask):
        new = []
        for i, layer in enumerate(self.layers):
            x, st = layer(x, self.pos_emb, mask, *states[6 * i:6 * i + 6])
            new += st
        return x, new


class SimpleDownsample(nn.Module):
    """Softmax(bias)-weighted sum of each group of `ds` frames (seq divides exactly here)."""

    def __init__(self, ds):
        super().__init__()
        self.ds = ds
        self.bias = rnd(ds, std=0.1)

    def forward(self, x):
        seq, _, c = x.shape
        x = x.reshape(seq // self.ds, self.ds, -1, c)
        w = self.bias.softmax(dim=0).unsqueeze(-1).unsqueeze(-1)
        return (x * w).sum(dim=1)


class DownsampledZipformer2Encoder(nn.Module):
    def __init__(self, s):
        super().__init__()
        self.ds = DOWNSAMPLING[s]
        self.downsample = SimpleDownsample(self.ds)
        self.encoder = Zipformer2Encoder(s)
        self.num_layers = self.encoder.num_layers
        self.out_combiner = Bypass(ENCODER_DIMS[s])

    def forward(self, x, states, mask):
        y, new = self.encoder(self.downsample(x), states, mask)
        seq, _, c = y.shape  # SimpleUpsample: repeat each frame ds times
        y = y.unsqueeze(1).expand(-1, self.ds, -1, -1).reshape(seq * self.ds, -1, c)
        return self.out_combiner(x, y), new


class Zipformer2(nn.Module):
    def __init__(self):
        super().__init__()
        self.encoders = nn.ModuleList([
            Zipformer2Encoder(s) if DOWNSAMPLING[s] == 1 else DownsampledZipformer2Encoder(s)
            for s in range(len(NUM_LAYERS))])
        self.downsample_output = SimpleDownsample(OUTPUT_DOWNSAMPLING)

    def forward(self, x, states, mask):
        """x: (CHUNK, N, 192); mask: bool (N, left + CHUNK), True = not yet filled."""
        outputs, new, offset, width = [], [], 0, ENCODER_DIMS[0]
        for s, module in enumerate(self.encoders):
            d = ENCODER_DIMS[s]
            if width >= d:  # convert_num_channels: truncate, or pad with zeros
                x = x[..., :d]
            else:
                x = torch.cat([x, torch.zeros_like(x[..., :1]).expand(-1, -1, d - width)], dim=-1)
            width = d
            n = module.num_layers
            x, st = module(x, states[6 * offset:6 * (offset + n)], mask[:, ::DOWNSAMPLING[s]])
            offset += n
            outputs.append(x)
            new += st
        # Each channel range from the latest stack that has it.
        pieces, cur = [outputs[-1]], ENCODER_DIMS[-1]
        for s in range(len(outputs) - 2, -1, -1):
            if ENCODER_DIMS[s] > cur:
                pieces.append(outputs[s][..., cur:ENCODER_DIMS[s]])
                cur = ENCODER_DIMS[s]
        return self.downsample_output(torch.cat(pieces, dim=-1)), new


class ConvNeXt(nn.Module):
    def __init__(self, c=EMBED_CHANNELS[2]):
        super().__init__()
        self.depthwise_conv = nn.Conv2d(c, c, (7, 7), padding=(3, 3), groups=c)
        self.pointwise_conv1 = nn.Conv2d(c, 3 * c, 1)
        self.pointwise_conv2 = nn.Conv2d(3 * c, c, 1)
        with torch.no_grad():
            self.pointwise_conv2.weight.mul_(0.25)
            self.pointwise_conv2.bias.mul_(0.25)

    def forward(self, x, cache):
        t = x.shape[2] - EMBED_LEFT_PAD
        bypass = x[:, :, :t]
        x = torch.cat([cache, x], dim=2)
        new_cache = x[:, :, t:t + EMBED_LEFT_PAD]
        x = nn.functional.conv2d(x, self.depthwise_conv.weight, self.depthwise_conv.bias,
                                 padding=(0, 3), groups=self.depthwise_conv.groups)
        x = self.pointwise_conv2(swoosh_l(self.pointwise_conv1(x)))
        return bypass + x, new_cache


class Conv2dSubsampling(nn.Module):
    def __init__(self):
        super().__init__()
        c1, c2, c3 = EMBED_CHANNELS
        # Indices 0, 3, 6 as in icefall's nn.Sequential (ScaleGrad/Balancer/SwooshR in between).
        self.conv = nn.ModuleDict({
            "0": nn.Conv2d(1, c1, 3, padding=(0, 1)),
            "3": nn.Conv2d(c1, c2, 3, stride=2),
            "6": nn.Conv2d(c2, c3, 3, stride=(1, 2)),
        })
        self.convnext = ConvNeXt()
        self.out = linear(EMBED_FREQ * c3, ENCODER_DIMS[0])
        self.out_norm = BiasNorm(ENCODER_DIMS[0])

    def forward(self, x, cache):
        x = x.unsqueeze(1)  # (N, 1, T, 80)
        for k in ("0", "3", "6"):
            x = swoosh_r(self.conv[k](x))
        x, new_cache = self.convnext(x, cache)  # (N, 128, 8, 19)
        n, c, t, f = x.shape
        x = x.transpose(1, 2).reshape(-1, t, c * f)
        return self.out_norm(self.out(x)), new_cache


class OnnxEncoder(nn.Module):
    def __init__(self):
        super().__init__()
        self.encoder_embed = Conv2dSubsampling()
        self.encoder = Zipformer2()
        self.encoder_proj = linear(max(ENCODER_DIMS), JOINER_DIM)
        left = LEFT_CONTEXT_FRAMES
        rev = np.concatenate([np.arange(left - 1, -1, -1), np.full(CHUNK, -1)])
        self.register_buffer("mask_positions", torch.from_numpy(rev).reshape(1, -1), persistent=False)

    def forward(self, x, *states):
        layer_states, embed_states, processed_lens = states[:-2], states[-2], states[-1]
        x, new_embed = self.encoder_embed(x, embed_states)  # (N, 8, 192)
        # Left-context frames not yet filled (fewer than `left` frames processed) are masked.
        mask = processed_lens.unsqueeze(1) <= self.mask_positions  # (N, left + CHUNK)
        out, new = self.encoder(x.permute(1, 0, 2), list(layer_states), mask)
        out = self.encoder_proj(out.permute(1, 0, 2))  # (N, 4, 512)
        return (out, *new, new_embed, processed_lens + CHUNK)


class Decoder(nn.Module):
    """icefall's stateless Decoder at inference (need_pad=False): TorchScript-compatible."""

    def __init__(self):
        super().__init__()
        self.embedding = nn.Embedding(VOCAB, DECODER_DIM)
        self.conv = nn.Conv1d(DECODER_DIM, DECODER_DIM, CONTEXT, padding=0, groups=DECODER_DIM // 4, bias=False)
        self.context_size = CONTEXT
        self.vocab_size = VOCAB

    def forward(self, y: torch.Tensor) -> torch.Tensor:
        y = y.to(torch.int64)
        embedding_out = self.embedding(y.clamp(min=0)) * (y >= 0).unsqueeze(-1)
        embedding_out = embedding_out.permute(0, 2, 1)
        embedding_out = self.conv(embedding_out)
        embedding_out = embedding_out.permute(0, 2, 1)
        return nn.functional.relu(embedding_out)


class OnnxDecoder(nn.Module):
    def __init__(self):
        super().__init__()
        self.decoder = Decoder()
        self.decoder_proj = nn.Linear(DECODER_DIM, JOINER_DIM)

    def forward(self, y: torch.Tensor) -> torch.Tensor:
        decoder_output = self.decoder(y)
        decoder_output = decoder_output.squeeze(1)
        return self.decoder_proj(decoder_output)


class OnnxJoiner(nn.Module):
    def __init__(self):
        super().__init__()
        self.output_linear = nn.Linear(JOINER_DIM, VOCAB)

    def forward(self, encoder_out: torch.Tensor, decoder_out: torch.Tensor) -> torch.Tensor:
        logit = encoder_out + decoder_out
        return self.output_linear(torch.tanh(logit))


def cache_specs():
    """(name, shape with batch 1, batch axis), in the export's input order."""
    specs = []
    layer = 0
    for s, n in enumerate(NUM_LAYERS):
        left, dim, heads = LEFT_CONTEXT[s], ENCODER_DIMS[s], NUM_HEADS[s]
        for _ in range(n):
            i = layer
            specs += [
                ("cached_key_%d" % i, [left, 1, QUERY_HEAD_DIM * heads], 1),
                ("cached_nonlin_attn_%d" % i, [1, 1, left, 3 * dim // 4], 1),
                ("cached_val1_%d" % i, [left, 1, VALUE_HEAD_DIM * heads], 1),
                ("cached_val2_%d" % i, [left, 1, VALUE_HEAD_DIM * heads], 1),
                ("cached_conv1_%d" % i, [1, dim, KERNELS[s] // 2], 0),
                ("cached_conv2_%d" % i, [1, dim, KERNELS[s] // 2], 0),
            ]
            layer += 1
    specs.append(("embed_states", [1, EMBED_CHANNELS[2], EMBED_LEFT_PAD, EMBED_FREQ], 0))
    return specs


def init_states(specs):
    return [torch.zeros(*shape) for _, shape, _ in specs] + [torch.zeros(1, dtype=torch.int64)]


def speech_features():
    """Kaldi fbank (X-ASR options) of 2.2 s of real speech, from the asr/fbank golden files."""
    path = os.path.join(ROOT, "asr", "fbank", "testdata", "fbank_speech.f32.gz")
    with gzip.open(path, "rb") as fh:
        return np.frombuffer(fh.read(), dtype="<f4").reshape(-1, FEAT).copy()


@torch.no_grad()
def encode(enc, feats, specs):
    """Streaming encoder over full windows of T frames, advancing by decode_chunk_len."""
    states, frames = init_states(specs), []
    start = 0
    while start + T <= len(feats):
        x = torch.from_numpy(np.ascontiguousarray(feats[start:start + T])).unsqueeze(0)
        out = enc(x, *states)
        frames.append(out[0][0])
        states = list(out[1:])
        start += DECODE_CHUNK_LEN
    return torch.cat(frames), states


@torch.no_grad()
def greedy(frames, dec, join):
    """Greedy search as asr/xasr (and icefall): context [-1, blank], <unk> like blank, at most one
    symbol per frame. Returns the tokens and the smallest top-2 logit margin seen."""
    hyp = [-1] * (CONTEXT - 1) + [0]
    dec_out = dec(torch.tensor([hyp[-CONTEXT:]]))
    tokens, margin = [], float("inf")
    for t in range(frames.shape[0]):
        logit = join(frames[t:t + 1], dec_out)[0]
        top = torch.topk(logit, 2).values
        margin = min(margin, float(top[0] - top[1]))
        y = int(torch.argmax(logit))
        if y != 0 and y != UNK:
            tokens.append(y)
            hyp.append(y)
            dec_out = dec(torch.tensor([hyp[-CONTEXT:]]))
    return tokens, margin


def count(module):
    return sum(p.numel() for p in module.parameters())


def add_meta(m, meta):
    for k, v in meta.items():
        p = m.metadata_props.add()
        p.key, p.value = k, str(v)


def finish(path, meta, dims):
    """Force the declared shapes (only the batch axis symbolic), add the metadata, check, save.
    The producer stays torch's, as in the real export (its length counts in the file size)."""
    m = onnx.load(path)
    for vi in list(m.graph.input) + list(m.graph.output):
        set_dims(vi, dims[vi.name])
    add_meta(m, meta)
    onnx.checker.check_model(m)
    onnx.shape_inference.infer_shapes(m, strict_mode=True)
    onnx.save(m, path)
    return m


def duplicate_initializers(m, min_elems=1024):
    """Large initializers with identical contents (what the exporter would have merged)."""
    seen, dups = {}, []
    for t in m.graph.initializer:
        if int(np.prod(t.dims)) < min_elems:
            continue
        key = hashlib.sha256(t.raw_data).digest()
        if key in seen:
            dups.append((seen[key], t.name))
        else:
            seen[key] = t.name
    return dups


def main():
    t0 = time.time()
    torch.set_num_threads(1)
    out_root = sys.argv[1] if len(sys.argv) > 1 else standins_dir()
    out_dir = os.path.join(out_root, MODEL_DIR)
    os.makedirs(out_dir, exist_ok=True)

    torch.manual_seed(SEED)
    enc, dec, join = OnnxEncoder().eval(), OnnxDecoder().eval(), OnnxJoiner().eval()
    specs = cache_specs()

    # Parameter counts against FULLSIZE.md.
    stacks = [count(m) for m in enc.encoder.encoders]
    parts = [
        ("encoder_embed", count(enc.encoder_embed), EXPECTED["encoder_embed"]),
        *[("  stack %d (%d layers, d=%d)" % (s, NUM_LAYERS[s], ENCODER_DIMS[s]), n,
           "%.2f M" % EXPECTED_STACKS_M[s]) for s, n in enumerate(stacks)],
        ("  downsample_output", count(enc.encoder.downsample_output), ""),
        ("encoder (Zipformer2)", count(enc.encoder), EXPECTED["encoder"]),
        ("encoder_proj", count(enc.encoder_proj), EXPECTED["encoder_proj"]),
        ("encoder total", count(enc), EXPECTED["encoder total"]),
        ("decoder (+ decoder_proj)", count(dec), EXPECTED["decoder"]),
        ("joiner", count(join), EXPECTED["joiner"]),
    ]
    print("parameters                              here     FULLSIZE.md")
    for name, n, want in parts:
        mark = "" if want == "" or isinstance(want, str) or n == want else "   <-- differs"
        print("  %-32s %12s %12s%s" % (name, "{:,}".format(n), want if isinstance(want, str) else "{:,}".format(want), mark))
    for s, n in enumerate(stacks):
        assert round(n / 1e6, 2) == EXPECTED_STACKS_M[s], (s, n)
    for key, n in (("encoder_embed", count(enc.encoder_embed)), ("encoder", count(enc.encoder)),
                   ("encoder_proj", count(enc.encoder_proj)), ("encoder total", count(enc)),
                   ("decoder", count(dec)), ("joiner", count(join))):
        assert n == EXPECTED[key], (key, n, EXPECTED[key])
    total = count(enc) + count(dec) + count(join)
    print("  %-32s %12s" % ("set", "{:,}".format(total)))

    # Blank bias: about a third of the encoder frames of real speech should emit a token. Of the
    # biases that do, take the one whose decisions are farthest from a tie.
    t1 = time.time()
    frames, _ = encode(enc, speech_features(), specs)
    print("torch streaming encoder: %d chunks, %.3f s per chunk" % (frames.shape[0] // OUT_FRAMES,
                                                                  (time.time() - t1) / (frames.shape[0] / OUT_FRAMES)))
    best = None
    for bias in np.arange(-4.0, 8.0, 0.1):
        with torch.no_grad():
            join.output_linear.bias[0] = float(bias)
        tokens, margin = greedy(frames, dec, join)
        frac = len(tokens) / frames.shape[0]
        if 0.25 <= frac <= 0.45 and (best is None or margin > best[1]):
            best = (float(np.float32(bias)), margin, frac, tokens)
    assert best is not None, "no blank bias gives 25-45% emitting frames"
    with torch.no_grad():
        join.output_linear.bias[0] = best[0]
    print("blank bias %.2f: %.0f%% of %d frames emit (%d distinct tokens), min top-2 margin %.4f"
          % (best[0], 100 * best[2], frames.shape[0], len(set(best[3])), best[1]))
    print("torch greedy on asr/fbank/testdata/speech_16k.wav (full windows only): %s" % best[3])

    # Encoder.
    names = [n for n, _, _ in specs]
    x = torch.from_numpy(speech_features()[:T]).unsqueeze(0)
    states = init_states(specs)
    enc_path = os.path.join(out_dir, "encoder-160ms.onnx")
    dyn = {"x": {0: "N"}, "encoder_out": {0: "N"}, "processed_lens": {0: "N"}, "new_processed_lens": {0: "N"}}
    dims = {"x": ["N", T, FEAT], "encoder_out": ["N", OUT_FRAMES, JOINER_DIM],
            "processed_lens": ["N"], "new_processed_lens": ["N"]}
    for name, shape, b in specs:
        dyn[name] = dyn["new_" + name] = {b: "N"}
        d = list(shape)
        d[b] = "N"
        dims[name] = dims["new_" + name] = d
    t1 = time.time()
    with torch.no_grad():
        torch.onnx.export(enc, (x, *states), enc_path, input_names=["x"] + names + ["processed_lens"],
                          output_names=["encoder_out"] + ["new_" + n for n in names] + ["new_processed_lens"],
                          dynamic_axes=dyn, opset_version=OPSET, do_constant_folding=True)
    print("encoder exported in %.0f s" % (time.time() - t1))
    m = finish(enc_path, {
        "model_type": "zipformer2",
        "version": "1",
        "model_author": "make_fullsize_xasr.py (random weights)",
        "comment": "random-weight full-size stand-in for the X-ASR zh-en streaming zipformer2 (160 ms); not a recognizer",
        "decode_chunk_len": DECODE_CHUNK_LEN,
        "T": T,
        "num_encoder_layers": ",".join(map(str, NUM_LAYERS)),
        "encoder_dims": ",".join(map(str, ENCODER_DIMS)),
        "cnn_module_kernels": ",".join(map(str, KERNELS)),
        "left_context_len": ",".join(map(str, LEFT_CONTEXT)),
        "query_head_dims": ",".join([str(QUERY_HEAD_DIM)] * 6),
        "value_head_dims": ",".join([str(VALUE_HEAD_DIM)] * 6),
        "num_heads": ",".join(map(str, NUM_HEADS)),
    }, dims)
    ops = {}
    for node in m.graph.node:
        ops[node.op_type] = ops.get(node.op_type, 0) + 1
    weights = sum(int(np.prod(t.dims)) for t in m.graph.initializer if t.data_type == onnx.TensorProto.FLOAT)
    dups = duplicate_initializers(m)
    assert not dups, "duplicate initializers: %s" % dups[:5]
    assert "Identity" not in ops, "the exporter merged initializers"
    print("encoder graph: %d nodes (%d MatMul, %d Constant), %d initializers, %d float weights"
          % (len(m.graph.node), ops.get("MatMul", 0), ops.get("Constant", 0), len(m.graph.initializer), weights))
    del m

    # Decoder: scripted, as icefall exports it.
    dec_path = os.path.join(out_dir, "decoder-160ms.onnx")
    torch.onnx.export(torch.jit.script(dec), torch.zeros(1, CONTEXT, dtype=torch.int64), dec_path,
                      input_names=["y"], output_names=["decoder_out"],
                      dynamic_axes={"y": {0: "N"}, "decoder_out": {0: "N"}}, opset_version=OPSET)
    finish(dec_path, {"context_size": CONTEXT, "vocab_size": VOCAB},
           {"y": ["N", CONTEXT], "decoder_out": ["N", JOINER_DIM]})

    join_path = os.path.join(out_dir, "joiner-160ms.onnx")
    torch.onnx.export(join, (torch.zeros(1, JOINER_DIM), torch.zeros(1, JOINER_DIM)), join_path,
                      input_names=["encoder_out", "decoder_out"], output_names=["logit"],
                      dynamic_axes={"encoder_out": {0: "N"}, "decoder_out": {0: "N"}, "logit": {0: "N"}},
                      opset_version=OPSET)
    finish(join_path, {"joiner_dim": JOINER_DIM},
           {"encoder_out": ["N", JOINER_DIM], "decoder_out": ["N", JOINER_DIM], "logit": ["N", VOCAB]})

    shutil.copyfile(os.path.join(ROOT, "asr", "xasr", "testdata", "tokens.txt"), os.path.join(out_dir, "tokens.txt"))

    print("files                      bytes        published")
    for name in ("encoder-160ms.onnx", "decoder-160ms.onnx", "joiner-160ms.onnx", "tokens.txt"):
        size = os.path.getsize(os.path.join(out_dir, name))
        pub = PUBLISHED.get(name, 58_806)
        print("  %-20s %13s %13s  (%+d)" % (name, "{:,}".format(size), "{:,}".format(pub), size - pub))
    print("wrote %s in %.0f s" % (out_dir, time.time() - t0))


def standins_dir():
    """Where stand-ins go by default: beside the MNN builds, out of the model cache."""
    base = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    return os.path.join(base, "voice-agent", "standins")


if __name__ == "__main__":
    main()
