#!/usr/bin/env python3
"""Full-size random-weight stand-in for MOSS-TTS-Nano-100M (ONNX browser set) and its codec
decoder MOSS-Audio-Tokenizer-Nano, to measure memory and compute at true scale.

Writes, under OUT (the first argument, else $XDG_CACHE_HOME/voice-agent/standins, i.e.
~/.cache/voice-agent/standins; a model directory, not the model cache, where the manifest's
pinned sizes would make a stand-in look like a damaged download):

  MOSS-TTS-Nano-100M-ONNX/
    moss_tts_prefill.onnx                     \\ both graphs reference the same external file,
    moss_tts_decode_step.onnx                 /  same tensors at the same offsets
    moss_tts_global_shared.data               12 blocks + ln_f + text/audio embeddings (fp32)
    moss_tts_local_fixed_sampled_frame.onnx
    moss_tts_local_shared.data                local block + ln_f + own embeddings + heads
    tts_browser_onnx_meta.json, browser_poc_manifest.json (codec_meta ->
    ../MOSS-Audio-Tokenizer-Nano-ONNX/codec_browser_onnx_meta.json), tokenizer.model (a copy of
    tts/spm/testdata/tokenizer.model, as make_tiny_moss.py)
  MOSS-Audio-Tokenizer-Nano-ONNX/
    moss_audio_tokenizer_decode_step.onnx
    moss_audio_tokenizer_decode_shared.data
    codec_browser_onnx_meta.json

Signatures, file names and every metadata key are make_tiny_moss.py's (docs/moss-tts-nano-onnx.md);
only the sizes and the inside of the graphs differ. Use it as

    voice-agent tts "Hello there, how are you today?" --out x.wav --model-dir OUT

Architecture (scripts/models/FULLSIZE.md section 3 is the source for every size):

  global (prefill + decode step): GPT-2 style pre-LN blocks with RoPE (no wpe): ln_1,
    attn.c_attn (768 -> 3 x 768, bias), attn.c_proj, ln_2, mlp.fc_in (768 -> 3072),
    mlp.fc_out, all with bias, GELU (tanh); 12 blocks, 768 wide, 12 heads x 64; final ln_f.
    Row embedding = text_embedding(16384 x 768)[col 0] + sum over the 16 codebooks of
    audio_embeddings[k](1025 x 768)[col k+1] (1024 = pad). RoPE base 10000 on positions
    cumsum(attention_mask) - 1 (prefill) and past_valid_lengths (decode step). KV caches are
    [b, seq, 12, 64], present_* = concat(past_*, new) along dim 1 (exact length), as the export.
    110,234,112 params -> moss_tts_global_shared.data.
  local fixed-sampled frame: a 1-layer local transformer of the same block (17 positions:
    global_hidden, the assistant text token, codes 0..14), its own ln_f, own copies of the text
    and audio embeddings, text_lm_head (768 -> 16384) and 16 audio_lm_heads (768 -> 1024), no
    head bias; the 17 positions are unrolled with an in-graph KV cache, and sampling
    (repetition penalty 1.2, temperature 0.8, top-k 25, top-p 0.95, inverse CDF on
    audio_random_u) happens inside, as in the export. 57,433,344 params -> moss_tts_local_shared.data.
  codec decode step (estimates, FULLSIZE.md): RVQ 16 codebooks x 1024 (dim CODEC_CB_DIM, each
    with an output projection to 256), then 4 streaming transformer modules of 4 + 2 + 2 + 4
    layers (d_model 256, 4 heads x 64, FFN 1024, RoPE, layer scale, KV contexts 500/800/1200/1600)
    at 12.5, 25, 50 and 100 Hz (a Linear 256 -> 512 "patch" upsampling x2 between modules), a
    final Linear 256 -> 2 x 480: 3840 samples per channel per frame, 48 kHz stereo. The streaming
    state is the tiny set's: transformer_offset_0..3, per layer attn_offset_i,
    attn_cached_keys_i / _values_i [1, 4, ctx, 64] and attn_cached_positions_i [1, ctx] (-1 =
    empty); the outputs keep the last ctx entries (symbolic dims, as in the real export).
    CODEC_CB_DIM is the free parameter chosen so the total is about the published
    44,198,912 B (11.05 M fp32 params).

The end of audio: should_continue = assistant_random_u <= sigmoid(text_logit[assistant slot] -
text_logit[audio_end] + CONTINUE_BIAS - STOP_DECAY * seen / 16), seen = the cells set in
repetition_seen_mask (about the frames generated so far), the same mechanism as the tiny set,
tuned so a chunk ends after some 20-60 frames (1.6-4.8 s; the torch loop below gave 26, 28, 31,
the Go synthesizer 24 for "Hello there, how are you today?" and 55 for a 29-word sentence)
instead of running to the 375-frame cap. It does not depend on the text's length.

Every tensor is re-randomized (layer norms and biases too), because torch's exporter merges
initializers with equal values (the de-duplication trap), and no attention mask is built with
torch.where on Python scalars (the exporter makes those float64 and promotes the biases it meets
to float64 initializers; export() asserts there are none). The data files are written once per
set and both graphs of a set are rewritten to point into them. Fixed seed; the output is
byte-reproducible.

Run (from the repository root; Debian: apt-get install -y python3-numpy python3-onnx
python3-torch; use /usr/bin/python3; peak ~3.2 GB of memory; ~1.5 min to export plus ~1.5 min for
the calibration loop, which MOSS_CALIBRATE=0 skips, on 2 cores):

    /usr/bin/python3 scripts/models/make_fullsize_moss.py [OUT]
"""
import hashlib
import io
import json
import math
import os
import shutil
import sys

import numpy as np
import onnx
import torch
import torch.nn.functional as F
from torch import nn

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from make_fullsize_smart_turn import standins_dir  # noqa: E402  (one helper for every generator)
import moss_set  # noqa: E402
from moss_set import (AUDIO_PAD, CB, CHANNELS, CODEC_HDIM, CODEC_HEADS, HDIM, HEADS, HID, IDS,  # noqa: E402
                      LAYERS, NVQ, REP_PENALTY, ROW, TEMPERATURE, TOP_K, TOP_P, VOCAB)

ROOT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..")
OPSET = 17
SEED = 20261201

TTS_DIR = "MOSS-TTS-Nano-100M-ONNX"
CODEC_DIR = "MOSS-Audio-Tokenizer-Nano-ONNX"
GLOBAL_DATA = "moss_tts_global_shared.data"
LOCAL_DATA = "moss_tts_local_shared.data"
CODEC_DATA = "moss_audio_tokenizer_decode_shared.data"
PUBLISHED = {GLOBAL_DATA: 440_813_568, LOCAL_DATA: 229_678_080, CODEC_DATA: 44_198_912}
EXTERNAL_THRESHOLD = 1024  # bytes; smaller tensors stay inline (onnx.save_model's default)

# TTS (FULLSIZE.md section 3, model_config).
FFN = 3072
LOCAL_LAYERS = 1
LN_EPS = 1e-5
ROPE_BASE = 10000.0
VOICE_PROMPT_FRAMES = 80  # guess: ~6.4 s of reference audio per builtin voice

CONTINUE_BIAS = 7.0
STOP_DECAY = 0.25


# Codec (FULLSIZE.md: contexts, heads and frame size from the codec meta; widths estimated).
DOWNSAMPLE = 3840
CODEC_LAYERS = 12
CODEC_CONTEXTS = [500, 500, 500, 500, 800, 800, 1200, 1200, 1600, 1600, 1600, 1600]
CODEC_MODULES = [4, 2, 2, 4]  # layers per transformer module (transformer_offset_0..3)
CODEC_D = CODEC_HEADS * CODEC_HDIM  # 256
CODEC_FFN = 1024
CODEC_CB_DIM = 46  # free parameter: total ~11.05 M
CODEC_PATCH = DOWNSAMPLE // 2 ** (len(CODEC_MODULES) - 1)  # 480 samples per 100 Hz step



# ---------------------------------------------------------------------------------------------
# TTS modules

def rope_tables(pos, dim, base):
    """pos float [..., S] -> cos, sin [..., S, dim] (rotate-half layout)."""
    inv = torch.exp(torch.arange(0, dim, 2, dtype=torch.float32) * (-math.log(base) / dim))
    ang = pos.unsqueeze(-1) * inv
    ang = torch.cat([ang, ang], dim=-1)
    return ang.cos(), ang.sin()


def mask_bias(ok):
    """Additive attention bias, 0 where ok, -1e9 elsewhere. (torch.where with Python scalars
    exports double constants, and the exporter's type promotion then turns the biases into
    float64 initializers.)"""
    return (ok.to(torch.float32) - 1.0) * 1e9


def rope(x, cos, sin):
    h = x.shape[-1] // 2
    return x * cos + torch.cat([-x[..., h:], x[..., :h]], dim=-1) * sin


class GPT2Attention(nn.Module):
    def __init__(self):
        super().__init__()
        self.c_attn = nn.Linear(HID, 3 * HID)
        self.c_proj = nn.Linear(HID, HID)

    def forward(self, x, cos, sin, bias, past_k=None, past_v=None):
        """x [b,S,768]; cos/sin [b,S,1,64]; bias additive [b,1,S|1,T]; caches [b,P,12,64]."""
        q, k, v = self.c_attn(x).split(HID, dim=2)
        shp = (x.shape[0], x.shape[1], HEADS, HDIM)
        q = rope(q.reshape(shp), cos, sin)
        k = rope(k.reshape(shp), cos, sin)
        v = v.reshape(shp)
        if past_k is not None:
            k = torch.cat([past_k, k], dim=1)
            v = torch.cat([past_v, v], dim=1)
        att = torch.matmul(q.transpose(1, 2), k.permute(0, 2, 3, 1)) * (HDIM ** -0.5)
        if bias is not None:
            att = att + bias
        att = torch.softmax(att, dim=-1)
        o = torch.matmul(att, v.transpose(1, 2)).transpose(1, 2)
        return self.c_proj(o.reshape(x.shape[0], x.shape[1], HID)), k, v


class GPT2MLP(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc_in = nn.Linear(HID, FFN)
        self.fc_out = nn.Linear(FFN, HID)
        self.act = nn.GELU(approximate="tanh")

    def forward(self, x):
        return self.fc_out(self.act(self.fc_in(x)))


class GPT2Block(nn.Module):
    def __init__(self):
        super().__init__()
        self.ln_1 = nn.LayerNorm(HID, eps=LN_EPS)
        self.attn = GPT2Attention()
        self.ln_2 = nn.LayerNorm(HID, eps=LN_EPS)
        self.mlp = GPT2MLP()

    def forward(self, x, cos, sin, bias, past_k=None, past_v=None):
        a, k, v = self.attn(self.ln_1(x), cos, sin, bias, past_k, past_v)
        x = x + a
        return x + self.mlp(self.ln_2(x)), k, v


class Embeddings(nn.Module):
    """text_embedding and the 16 audio_embeddings (vocab 1025 each, 1024 = pad)."""

    def __init__(self):
        super().__init__()
        self.text_embedding = nn.Embedding(VOCAB, HID)
        self.audio_embeddings = nn.ModuleList([nn.Embedding(CB + 1, HID) for _ in range(NVQ)])
        self.register_buffer("col_off", torch.arange(NVQ, dtype=torch.long) * (CB + 1), persistent=False)

    def audio_table(self):
        # One [16 * 1025, 768] table (folded into one initializer by the exporter).
        return torch.cat([e.weight for e in self.audio_embeddings], dim=0)

    def rows(self, ids):
        ids = ids.long()
        x = self.text_embedding(ids[:, :, 0])
        return x + F.embedding(ids[:, :, 1:] + self.col_off, self.audio_table()).sum(dim=2)


class GlobalTransformer(nn.Module):
    def __init__(self):
        super().__init__()
        self.emb = Embeddings()
        self.h = nn.ModuleList([GPT2Block() for _ in range(LAYERS)])
        self.ln_f = nn.LayerNorm(HID, eps=LN_EPS)

    def run(self, x, pos, bias, past=None):
        cos, sin = rope_tables(pos, HDIM, ROPE_BASE)
        cos, sin = cos.unsqueeze(2), sin.unsqueeze(2)  # [b,S,1,64]
        presents = []
        for i, blk in enumerate(self.h):
            pk = pv = None
            if past is not None:
                pk, pv = past[2 * i], past[2 * i + 1]
            x, k, v = blk(x, cos, sin, bias, pk, pv)
            presents += [k, v]
        return self.ln_f(x), presents


class Prefill(nn.Module):
    def __init__(self, core):
        super().__init__()
        self.core = core

    def forward(self, input_ids, attention_mask):
        m = attention_mask.float()
        pos = (torch.cumsum(m, dim=1) - 1.0).clamp(min=0.0)  # [b,S]
        s = torch.arange(input_ids.shape[1])
        causal = s.unsqueeze(0) <= s.unsqueeze(1)  # [S(q), S(k)]
        ok = causal.unsqueeze(0) & (m > 0).unsqueeze(1)  # [b,S,S]
        bias = mask_bias(ok).unsqueeze(1)
        h, presents = self.core.run(self.core.emb.rows(input_ids), pos, bias)
        return tuple([h] + presents)


class DecodeStep(nn.Module):
    def __init__(self, core):
        super().__init__()
        self.core = core

    def forward(self, input_ids, past_valid_lengths, *past):
        L = past_valid_lengths.long()  # [b]
        pos = L.float().unsqueeze(1)  # [b,1]
        P = past[0].shape[1]
        j = torch.arange(P + 1)
        ok = (j.unsqueeze(0) < L.unsqueeze(1)) | (j == P).unsqueeze(0)  # [b,P+1]
        bias = mask_bias(ok).unsqueeze(1).unsqueeze(1)  # [b,1,1,P+1]
        h, presents = self.core.run(self.core.emb.rows(input_ids), pos, bias, list(past))
        return tuple([h] + presents)


class LocalFrame(nn.Module):
    """The 1-layer local transformer unrolled over 17 positions with in-graph sampling."""

    def __init__(self):
        super().__init__()
        self.emb = Embeddings()
        self.h = nn.ModuleList([GPT2Block() for _ in range(LOCAL_LAYERS)])
        self.ln_f = nn.LayerNorm(HID, eps=LN_EPS)
        self.text_lm_head = nn.Linear(HID, VOCAB, bias=False)
        self.audio_lm_heads = nn.ModuleList([nn.Linear(HID, CB, bias=False) for _ in range(NVQ)])

    def forward(self, global_hidden, repetition_seen_mask, assistant_random_u, audio_random_u):
        past = [None] * (2 * LOCAL_LAYERS)
        table = self.emb.audio_table()

        def step(x, p):
            cos, sin = rope_tables(torch.tensor([float(p)]), HDIM, ROPE_BASE)
            cos, sin = cos.reshape(1, 1, 1, HDIM), sin.reshape(1, 1, 1, HDIM)
            x = x.unsqueeze(1)  # [b,1,768]
            for i, blk in enumerate(self.h):
                x, past[2 * i], past[2 * i + 1] = blk(x, cos, sin, None, past[2 * i], past[2 * i + 1])
            return self.ln_f(x[:, 0])

        h = step(global_hidden, 0)
        tl = self.text_lm_head(h)  # [b,16384]
        slot, end = IDS["audio_assistant_slot_token_id"], IDS["audio_end_token_id"]
        seen_frames = repetition_seen_mask.float().sum(dim=(1, 2)) / NVQ  # [b]
        p = torch.sigmoid(tl[:, slot] - tl[:, end] + CONTINUE_BIAS - STOP_DECAY * seen_frames)
        cont = assistant_random_u <= p  # [b]
        text_tok = torch.where(cont, torch.full_like(cont, slot, dtype=torch.long),
                               torch.full_like(cont, end, dtype=torch.long))
        x = self.emb.text_embedding(text_tok)
        toks = []
        for k in range(NVQ):
            h = step(x, k + 1)
            tok = moss_set.sample(self.audio_lm_heads[k](h), repetition_seen_mask[:, k] > 0, audio_random_u[:, k], 1)
            toks.append(tok)
            x = F.embedding(tok + k * (CB + 1), table)
        frame = torch.stack(toks, dim=1).to(torch.int32)
        return cont.to(torch.int32).unsqueeze(-1), frame


# ---------------------------------------------------------------------------------------------
# Codec

class CodecLayer(nn.Module):
    def __init__(self, ctx):
        super().__init__()
        self.ctx = ctx
        self.norm1 = nn.LayerNorm(CODEC_D)
        self.in_proj = nn.Linear(CODEC_D, 3 * CODEC_D, bias=False)
        self.out_proj = nn.Linear(CODEC_D, CODEC_D, bias=False)
        self.layer_scale_1 = nn.Parameter(torch.empty(CODEC_D))
        self.norm2 = nn.LayerNorm(CODEC_D)
        self.linear1 = nn.Linear(CODEC_D, CODEC_FFN, bias=False)
        self.linear2 = nn.Linear(CODEC_FFN, CODEC_D, bias=False)
        self.layer_scale_2 = nn.Parameter(torch.empty(CODEC_D))

    def forward(self, x, cos, sin, off, keys, values, positions):
        """x [1,T,256]; cos/sin [T,64]; off [1]; keys/values [1,4,ctx,64]; positions [1,ctx]."""
        T = x.shape[1]
        qkv = self.in_proj(self.norm1(x)).reshape(x.shape[0], T, 3, CODEC_HEADS, CODEC_HDIM)
        q = rope(qkv[:, :, 0].transpose(1, 2), cos, sin)  # [1,4,T,64]
        k = rope(qkv[:, :, 1].transpose(1, 2), cos, sin)
        v = qkv[:, :, 2].transpose(1, 2)
        pn = (off.unsqueeze(1) + torch.arange(T, dtype=torch.int32).unsqueeze(0)).to(torch.int32)  # [1,T]
        K = torch.cat([keys, k], dim=2)
        V = torch.cat([values, v], dim=2)
        P = torch.cat([positions, pn], dim=1)  # [1,ctx+T]
        qp, kp = pn.unsqueeze(2), P.unsqueeze(1)  # [1,T,1], [1,1,ctx+T]
        ok = (kp >= 0) & (kp <= qp) & (qp - kp < self.ctx)
        att = torch.matmul(q, K.transpose(2, 3)) * (CODEC_HDIM ** -0.5) + mask_bias(ok).unsqueeze(1)
        o = torch.matmul(torch.softmax(att, dim=-1), V).transpose(1, 2).reshape(x.shape[0], T, CODEC_D)
        x = x + self.layer_scale_1 * self.out_proj(o)
        x = x + self.layer_scale_2 * self.linear2(F.gelu(self.linear1(self.norm2(x))))
        c = self.ctx
        return x, (off + T).to(torch.int32), K[:, :, -c:], V[:, :, -c:], P[:, -c:]


class RVQLayer(nn.Module):
    def __init__(self):
        super().__init__()
        self.codebook = nn.Embedding(CB, CODEC_CB_DIM)
        self.out_proj = nn.Linear(CODEC_CB_DIM, CODEC_D)


class CodecDecodeStep(nn.Module):
    def __init__(self):
        super().__init__()
        self.quantizer = nn.ModuleList([RVQLayer() for _ in range(NVQ)])
        layers, i = [], 0
        for n in CODEC_MODULES:
            layers.append(nn.ModuleList([CodecLayer(CODEC_CONTEXTS[i + j]) for j in range(n)]))
            i += n
        self.transformers = nn.ModuleList(layers)
        self.norms = nn.ModuleList([nn.LayerNorm(CODEC_D) for _ in CODEC_MODULES])
        self.upsample = nn.ModuleList([nn.Linear(CODEC_D, 2 * CODEC_D) for _ in CODEC_MODULES[1:]])
        self.head = nn.Linear(CODEC_D, CHANNELS * CODEC_PATCH)

    def forward(self, audio_codes, audio_code_lengths, t0, t1, t2, t3, *attn):
        codes = audio_codes.long()
        x = self.quantizer[0].out_proj(self.quantizer[0].codebook(codes[:, :, 0]))
        for k in range(1, NVQ):
            x = x + self.quantizer[k].out_proj(self.quantizer[k].codebook(codes[:, :, k]))
        t_out, a_out = [], []
        li = 0
        for m, (layers, toff) in enumerate(zip(self.transformers, (t0, t1, t2, t3))):
            if m > 0:
                x = self.upsample[m - 1](x).reshape(x.shape[0], 2 * x.shape[1], CODEC_D)
            T = x.shape[1]
            cos, sin = rope_tables((toff + torch.arange(T, dtype=torch.int32)).float(), CODEC_HDIM, ROPE_BASE)
            for layer in layers:
                x, *st = layer(x, cos, sin, *attn[4 * li:4 * li + 4])
                a_out += st
                li += 1
            t_out.append((toff + T).to(torch.int32))
            x = self.norms[m](x)
        y = self.head(x)  # [1,8n,960]
        n8 = y.shape[1]
        audio = y.reshape(1, n8, CHANNELS, CODEC_PATCH).permute(0, 2, 1, 3).reshape(1, CHANNELS, n8 * CODEC_PATCH)
        audio_lengths = (audio_code_lengths * DOWNSAMPLE).to(torch.int32)
        return tuple([audio, audio_lengths] + t_out + a_out)


# ---------------------------------------------------------------------------------------------
# weights

def randomize(module, gen):
    """Every tensor its own random values (GPT-2-like scales), so that no two initializers are
    equal and the exporter's de-duplication cannot merge them."""
    for name, p in sorted(module.named_parameters()):
        leaf = name.rsplit(".", 1)[-1]
        with torch.no_grad():
            noise = torch.randn(p.shape, generator=gen)
            if "norm" in name or "ln_" in name:
                p.copy_((1.0 + 0.02 * noise) if leaf == "weight" else 0.02 * noise)
            elif "layer_scale" in name:
                p.copy_(0.1 + 0.01 * noise)
            elif leaf == "bias":
                p.copy_(0.01 * noise)
            elif "c_proj" in name or "fc_out" in name:
                p.copy_(noise * (0.02 / math.sqrt(2 * LAYERS)))
            elif name.startswith("head."):
                p.copy_(noise * 0.006)  # codec output ~0.1 rms
            else:
                p.copy_(noise * 0.02)


def count(module):
    return sum(p.numel() for p in module.parameters())


# ---------------------------------------------------------------------------------------------
# export and shared external data

def export(model, args, in_names, out_names, dyn):
    f = io.BytesIO()
    torch.onnx.export(model, args, f, input_names=in_names, output_names=out_names,
                      dynamic_axes=dyn, opset_version=OPSET, do_constant_folding=True)
    m = onnx.load_from_string(f.getvalue())
    onnx.checker.check_model(m)
    doubles = [t.name for t in m.graph.initializer if t.data_type == onnx.TensorProto.DOUBLE]
    assert not doubles, "float64 initializers (a Python scalar promoted the graph): %s" % doubles[:5]
    return m


def write_shared(out_dir, data_name, graphs):
    """graphs: [(file name, ModelProto, metadata)]. Writes every initializer of EXTERNAL_THRESHOLD
    bytes or more once into data_name (tensors with equal dtype, dims and bytes are stored once,
    so graphs that share weights point at the same offsets) and the graphs referencing it."""
    where = {}
    with open(os.path.join(out_dir, data_name), "wb") as f:
        for _, m, _ in graphs:
            for t in m.graph.initializer:
                if not t.HasField("raw_data") or len(t.raw_data) < EXTERNAL_THRESHOLD:
                    continue
                key = (t.data_type, tuple(t.dims), hashlib.sha256(t.raw_data).digest())
                if key not in where:
                    where[key] = (f.tell(), len(t.raw_data))
                    f.write(t.raw_data)
                off, n = where[key]
                t.ClearField("raw_data")
                t.data_location = onnx.TensorProto.EXTERNAL
                del t.external_data[:]
                for k, v in (("location", data_name), ("offset", str(off)), ("length", str(n))):
                    e = t.external_data.add()
                    e.key, e.value = k, v
    for name, m, meta in graphs:
        m.producer_name = "make_fullsize_moss.py"
        for k, v in meta.items():
            prop = m.metadata_props.add()
            prop.key, prop.value = k, v
        path = os.path.join(out_dir, name)
        with open(path, "wb") as f:
            f.write(m.SerializeToString())
        onnx.checker.check_model(path)
    return os.path.getsize(os.path.join(out_dir, data_name))





def main():
    torch.set_num_threads(1)
    out_root = sys.argv[1] if len(sys.argv) > 1 else standins_dir()
    tts_dir = os.path.join(out_root, TTS_DIR)
    codec_dir = os.path.join(out_root, CODEC_DIR)
    os.makedirs(tts_dir, exist_ok=True)
    os.makedirs(codec_dir, exist_ok=True)

    torch.manual_seed(SEED)
    gen = torch.Generator().manual_seed(SEED)
    core = GlobalTransformer().eval()
    local = LocalFrame().eval()
    codec = CodecDecodeStep().eval()
    for mod in (core, local, codec):
        randomize(mod, gen)
    prefill, decode = Prefill(core).eval(), DecodeStep(core).eval()

    g = moss_set.graph_names(CODEC_LAYERS)

    def meta(what, params):
        return {"comment": "random-weight full-size stand-in for %s (fp32); not a speech model" % what,
                "parameters": str(params), "seed": str(SEED)}

    sizes = {}
    with torch.no_grad():
        ex_ids = torch.full((1, 5, ROW), AUDIO_PAD, dtype=torch.int32)
        ex_ids[:, :, 0] = 4
        dyn = {"input_ids": {0: "batch", 1: "seq"}, "attention_mask": {0: "batch", 1: "seq"},
               "global_hidden": {0: "batch", 1: "seq"}}
        dyn.update({n: {0: "batch", 1: "seq"} for n in g.kv_present})
        m_prefill = export(prefill, (ex_ids, torch.ones(1, 5, dtype=torch.int32)), g.prefill_in, g.prefill_out, dyn)
        past = [torch.randn(1, 5, HEADS, HDIM, generator=gen) for _ in range(2 * LAYERS)]
        dyn = {"input_ids": {0: "batch"}, "past_valid_lengths": {0: "batch"}, "global_hidden": {0: "batch"}}
        dyn.update({n: {0: "batch", 1: "past_seq"} for n in g.kv_past})
        dyn.update({n: {0: "batch", 1: "total_seq"} for n in g.kv_present})
        m_decode = export(decode, (ex_ids[:, :1], torch.tensor([5], dtype=torch.int32), *past),
                          g.decode_in, g.decode_out, dyn)
        sizes[GLOBAL_DATA] = write_shared(tts_dir, GLOBAL_DATA, [
            (g.files["prefill"], m_prefill, meta("MOSS-TTS-Nano prefill", count(core))),
            (g.files["decode_step"], m_decode, meta("MOSS-TTS-Nano decode step", count(core)))])
        del m_prefill, m_decode

        dyn = {n: {0: "batch"} for n in g.local_in + g.local_out}
        m_local = export(local, (torch.randn(1, HID, generator=gen), torch.zeros(1, NVQ, CB, dtype=torch.int32),
                                 torch.tensor([0.5]), torch.rand(1, NVQ, generator=gen)), g.local_in, g.local_out, dyn)
        sizes[LOCAL_DATA] = write_shared(tts_dir, LOCAL_DATA, [
            (g.files["local_fixed_sampled_frame"], m_local, meta("MOSS-TTS-Nano local frame", count(local)))])
        del m_local

        dyn = {"audio_codes": {1: "num_frames"}, "audio": {2: "num_samples"}}
        m_codec = export(codec, (torch.zeros(1, 2, NVQ, dtype=torch.int32), torch.tensor([2], dtype=torch.int32),
                                 *moss_set.codec_initial_state(CODEC_CONTEXTS)), g.codec_in, g.codec_out, dyn)
        sizes[CODEC_DATA] = write_shared(codec_dir, CODEC_DATA, [
            (g.codec_file, m_codec, meta("MOSS-Audio-Tokenizer-Nano decode step", count(codec)))])
        del m_codec

    # ---- metadata (make_tiny_moss.py's keys) ----
    templates, voices = moss_set.write_meta(tts_dir, codec_dir, "../%s/codec_browser_onnx_meta.json" % CODEC_DIR, g,
                                                VOICE_PROMPT_FRAMES, CODEC_CONTEXTS, DOWNSAMPLE, OPSET)
    tok_src = moss_set.tokenizer_model()

    # ---- report ----
    g_blocks = count(core.h)
    parts = [
        ("global: 12 blocks", g_blocks),
        ("global: ln_f", count(core.ln_f)),
        ("global: text embedding", core.emb.text_embedding.weight.numel()),
        ("global: 16 audio embeddings", count(core.emb.audio_embeddings)),
        ("local: 1 block", count(local.h)),
        ("local: ln_f", count(local.ln_f)),
        ("local: text + audio embeddings", count(local.emb)),
        ("local: text head", count(local.text_lm_head)),
        ("local: 16 audio heads", count(local.audio_lm_heads)),
        ("codec: RVQ codebooks + projections", count(codec.quantizer)),
        ("codec: 12 transformer layers", count(codec.transformers)),
        ("codec: norms, upsampling, head", count(codec.norms) + count(codec.upsample) + count(codec.head)),
    ]
    for name, n in parts:
        print("  %-38s %12d" % (name, n))
    for what, mod, data in (("global (prefill + decode step)", core, GLOBAL_DATA),
                            ("local frame", local, LOCAL_DATA), ("codec decode step", codec, CODEC_DATA)):
        n = count(mod)
        print("%-32s %11d params (%.2f M) -> %s %d B (published %d B, %+.3f %%)" % (
            what, n, n / 1e6, data, sizes[data], PUBLISHED[data], 100.0 * (sizes[data] - PUBLISHED[data]) / PUBLISHED[data]))
    for d in (tts_dir, codec_dir):
        for name in sorted(os.listdir(d)):
            print("  %-60s %12d" % (os.path.join(os.path.basename(d), name), os.path.getsize(os.path.join(d, name))))

    # ---- calibration: frames per chunk of the torch reference loop (numpy uniforms, not the Go
    # synthesizer's PCG draws, so the counts differ but not their spread); MOSS_CALIBRATE=0 skips it ----
    if os.environ.get("MOSS_CALIBRATE", "1") != "0":
        try:
            import sentencepiece as spm
            text_ids = [int(x) for x in spm.SentencePieceProcessor(model_file=tok_src).encode(
                "Hello there, how are you today?")]
        except ImportError:  # only the row count matters here
            text_ids = [int(x) for x in np.random.default_rng(0).integers(10, 1000, 10)]
        rows = moss_set.prompt_rows(templates, voices[0], text_ids)
        with torch.no_grad():
            runs = [moss_set.run_chunk(prefill, decode, local, rows, np.random.default_rng(s)) for s in range(3)]
            out = codec(torch.tensor([runs[0][0][:2]], dtype=torch.int32), torch.tensor([2], dtype=torch.int32),
                        *moss_set.codec_initial_state(CODEC_CONTEXTS))
        print("calibration (%d rows): frames per chunk for numpy seeds 0-2: %s; codec rms %.3f, %d samples/channel for 2 frames" % (
            len(rows), [len(frames) for frames, _ in runs], float(out[0].pow(2).mean().sqrt()), int(out[1][0])))


if __name__ == "__main__":
    main()
