#!/usr/bin/env python3
"""Tiny random-weight stand-ins for the MOSS-TTS-Nano ONNX set, for tts/moss tests.

Writes, under tts/moss/testdata/:

  tiny/moss_tts_prefill.onnx                     real names/dtypes/ranks (docs/moss-tts-nano-onnx.md)
  tiny/moss_tts_decode_step.onnx
  tiny/moss_tts_local_fixed_sampled_frame.onnx
  tiny/tts_browser_onnx_meta.json
  tiny/browser_poc_manifest.json                 codec_meta -> ../tiny-codec/codec_browser_onnx_meta.json
  tiny/tokenizer.model                           copy of tts/spm/testdata/tokenizer.model
  tiny-codec/moss_audio_tokenizer_decode_step.onnx
  tiny-codec/codec_browser_onnx_meta.json
  tiny_golden.json                               reference loop run with the same torch modules

The tiny set keeps the real static dims (row width 17, hidden 768, 12 layers x 12 heads x 64,
16 codes of 1024, 2 audio channels) but shrinks the codec attention-cache contexts
(CODEC_CONTEXTS) and the codec samples per frame (DOWNSAMPLE); both are declared in the codec
meta JSON, which is where the Go loader must read them from. Weights are inline (no .data).

Regenerate (from the repository root; Debian: apt-get install -y python3-numpy python3-onnx
python3-torch python3-sentencepiece; use /usr/bin/python3):

    /usr/bin/python3 scripts/models/make_tiny_moss.py [--testdata DIR]

Everything comes from fixed seeds; the golden JSON is rewritten together with the graphs, and a
rerun writes the same bytes (--testdata elsewhere and cmp -r to check). build_modules rebuilds
the torch modules without writing anything, for scripts/models/moss_upstream_golden.py.
As in the real export, the codec graph's cache outputs have symbolic dims
(Sliceattn_cached_keys_out_<i>_dim_2, ...); only the inputs carry the static contexts.
"""
import argparse
import json
import os
import types

import numpy as np
import onnx
import sentencepiece as spm
import torch
from torch import nn

import moss_set
from moss_set import (AUDIO_PAD, CB, CHANNELS, CODEC_HDIM, CODEC_HEADS, HDIM, HEADS, HID, LAYERS,
                      NVQ, REP_PENALTY, ROW, TEMPERATURE, TOP_K, TOP_P, VOCAB)

ROOT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..")
TD = os.path.join(ROOT, "tts", "moss", "testdata")
OPSET = 17

EMB = 4  # tiny embedding width

# continue iff assistant_random_u <= sigmoid(stop(global_hidden) - STOP_DECAY * seen/16), where
# seen = number of set cells in repetition_seen_mask (so the chance to continue falls as the chunk
# grows: sigmoid(4.5) ~ 0.989 at frame 0, ~0.92 by frame 7). With seed 1234 the first assistant
# uniform is 0.977, so a flat probability would stop at once; this decay gives ~5-20 frames.
CONTINUE_BIAS = 4.5
STOP_DECAY = 0.3

CODEC_CONTEXTS = [8, 8, 8, 8, 10, 10, 12, 12, 16, 16, 16, 16]
DOWNSAMPLE = 480  # samples per frame per channel (real: 3840)




class RowEmbed(nn.Module):
    """[b,S,17] int32 ids -> [b,S,EMB]: text column + 16 code columns (vocab 1025 each)."""

    def __init__(self):
        super().__init__()
        self.text = nn.Embedding(VOCAB, EMB)
        self.codes = nn.Embedding(NVQ * (CB + 1), EMB)
        self.register_buffer("col_off", torch.arange(NVQ, dtype=torch.long) * (CB + 1))

    def forward(self, ids):
        ids = ids.long()
        x = self.text(ids[:, :, 0])
        c = self.codes(ids[:, :, 1:] + self.col_off)  # [b,S,16,EMB]
        return x + c.sum(dim=2)


class KVHead(nn.Module):
    """[b,S,EMB] -> 24 tensors [b,S,12,64] (k0,v0,k1,v1,...)."""

    def __init__(self):
        super().__init__()
        self.proj = nn.Linear(EMB, HDIM)
        self.scale = nn.Parameter(torch.randn(2 * LAYERS, HEADS, HDIM))

    def forward(self, x):
        base = torch.tanh(self.proj(x)).unsqueeze(2)  # [b,S,1,64]
        return [base * self.scale[j] for j in range(2 * LAYERS)]


class Prefill(nn.Module):
    """Causal as the real global transformer is: row t's hidden state is what DecodeStep gives
    for row t with rows 0..t-1 as its past. So a KV cache prefilled over a prompt's first rows,
    continued by decode steps over the rest, gives the states one prefill over all rows gives
    (the synthesizer prefills the voice prompt once and steps through each chunk's text)."""

    def __init__(self):
        super().__init__()
        self.embed = RowEmbed()
        self.out = nn.Linear(EMB, HID)
        self.kv = KVHead()
        self.past_proj = nn.Linear(HDIM, HID)
        self.len_w = nn.Parameter(torch.randn(HID) * 0.05)

    def step(self, x, past_k0_sum, rows_before):
        """Row states from the embedded rows x, the sum over earlier rows of the layer-0 keys
        (averaged over heads) and how many rows came before."""
        L = rows_before.clamp(min=1.0).unsqueeze(-1)
        return torch.tanh(self.out(x) + self.past_proj(past_k0_sum / L) + L * 0.01 * self.len_w)

    def forward(self, input_ids, attention_mask):
        x = self.embed(input_ids) * attention_mask.float().unsqueeze(-1)
        kv = self.kv(x)
        k0 = kv[0].mean(dim=2)  # [b,S,64]
        before = torch.cumsum(k0, dim=1) - k0
        rows_before = torch.cumsum(torch.ones_like(attention_mask, dtype=torch.float32), dim=1) - 1.0
        return tuple([self.step(x, before, rows_before)] + kv)


class DecodeStep(nn.Module):
    def __init__(self, prefill):
        super().__init__()
        self.prefill = prefill

    def forward(self, input_ids, past_valid_lengths, *past):
        x = self.prefill.embed(input_ids)  # [b,1,EMB]
        pk0 = past[0].mean(dim=2).sum(dim=1, keepdim=True)  # [b,1,64]
        h = self.prefill.step(x, pk0, past_valid_lengths.float().unsqueeze(-1))
        new = self.prefill.kv(x)
        presents = [torch.cat([past[j], new[j]], dim=1) for j in range(2 * LAYERS)]
        return tuple([h] + presents)


class LocalFrame(nn.Module):
    def __init__(self):
        super().__init__()
        self.stop = nn.Linear(HID, 1)
        self.down = nn.Linear(HID, 8)
        self.logits = nn.Linear(8, NVQ * CB)

    def forward(self, global_hidden, repetition_seen_mask, assistant_random_u, audio_random_u):
        b = global_hidden.shape[0]
        seen_frames = repetition_seen_mask.float().sum(dim=(1, 2)).unsqueeze(-1) / NVQ  # [b,1]
        p = torch.sigmoid(self.stop(global_hidden) - STOP_DECAY * seen_frames)  # [b,1]
        cont = (assistant_random_u.unsqueeze(-1) <= p).to(torch.int32)
        lg = self.logits(torch.tanh(self.down(global_hidden))).reshape(b, NVQ, CB)
        tok = moss_set.sample(lg, repetition_seen_mask > 0, audio_random_u, 2).to(torch.int32)
        return cont, tok


class CodecStep(nn.Module):
    def __init__(self):
        super().__init__()
        self.emb = nn.Embedding(NVQ * CB, EMB)
        self.register_buffer("q_off", torch.arange(NVQ, dtype=torch.long) * CB)
        self.up = nn.Linear(EMB, CHANNELS * DOWNSAMPLE)
        self.kproj = nn.Parameter(torch.randn(LAYERS, EMB, CODEC_HEADS * CODEC_HDIM) * 0.5)
        self.vproj = nn.Parameter(torch.randn(LAYERS, EMB, CODEC_HEADS * CODEC_HDIM) * 0.5)

    def forward(self, audio_codes, audio_code_lengths, t0, t1, t2, t3, *attn):
        n1 = audio_codes.shape[1]
        e = self.emb(audio_codes.long() + self.q_off).sum(dim=2)  # [1,n,EMB]
        ones = torch.ones_like(audio_codes[:, :, 0])  # [1,n] int32
        n = ones.sum(dim=1)  # [1] int
        # carried-state term: mean of the layer-0 key cache and layer-11 value cache, plus
        # transformer_offset_0 (zero state -> 0; grows as frames are decoded)
        state = torch.tanh(5.0 * (attn[1].mean() + attn[4 * 11 + 2].mean()) + 0.05 * t0.float().sum())
        base = torch.tanh(self.up(e)).reshape(1, n1, CHANNELS, DOWNSAMPLE)
        audio = base.permute(0, 2, 1, 3).reshape(1, CHANNELS, n1 * DOWNSAMPLE) * 0.5 + 0.2 * state
        audio_lengths = (audio_code_lengths * DOWNSAMPLE).to(torch.int32)
        outs = [audio, audio_lengths]
        for t in (t0, t1, t2, t3):
            outs.append((t + n).to(torch.int32))
        for i in range(LAYERS):
            off, keys, values, pos = attn[4 * i:4 * i + 4]
            ctx = CODEC_CONTEXTS[i]
            shift = 0.01 * off.float().sum()
            kn = torch.tanh(e @ self.kproj[i] + shift).reshape(1, n1, CODEC_HEADS, CODEC_HDIM).permute(0, 2, 1, 3)
            vn = torch.tanh(e @ self.vproj[i] - shift).reshape(1, n1, CODEC_HEADS, CODEC_HDIM).permute(0, 2, 1, 3)
            pn = (off + torch.cumsum(ones, dim=1) - 1).to(torch.int32)
            outs.append((off + n).to(torch.int32))
            outs.append(torch.cat([keys, kn], dim=2)[:, :, -ctx:])
            outs.append(torch.cat([values, vn], dim=2)[:, :, -ctx:])
            outs.append(torch.cat([pos, pn], dim=1)[:, -ctx:])
        return tuple(outs)


def export(model, args, path, in_names, out_names, dyn):
    torch.onnx.export(model, args, path, input_names=in_names, output_names=out_names,
                      dynamic_axes=dyn, opset_version=OPSET, do_constant_folding=True)
    m = onnx.load(path)
    onnx.checker.check_model(m)
    return m


def build_modules():
    """The tiny set's torch modules, built from the fixed seed as main exports them: prefill,
    decode (the decode step, sharing prefill's weights), local (the fixed-sampled frame graph)
    and codec (the codec decode step). Writes nothing; scripts/models/moss_upstream_golden.py
    serves the graphs with these modules."""
    torch.manual_seed(20261130)
    prefill = Prefill().eval()
    decode = DecodeStep(prefill).eval()
    local = LocalFrame().eval()
    with torch.no_grad():
        local.stop.weight.mul_(0.3)
        local.stop.bias.fill_(CONTINUE_BIAS)
        local.logits.weight.mul_(8.0)
    codec = CodecStep().eval()
    return types.SimpleNamespace(prefill=prefill, decode=decode, local=local, codec=codec)


def export_graphs(m, tiny_dir, codec_dir):
    """Exports build_modules' modules m as the set's four graphs under tiny_dir and codec_dir.
    The example inputs come from torch's global generator, which main leaves where
    build_modules left it, so that the bytes written are the committed ones."""
    g = moss_set.graph_names(LAYERS)
    with torch.no_grad():
        ex_ids = torch.full((1, 5, ROW), AUDIO_PAD, dtype=torch.int32)
        ex_ids[:, :, 0] = 4
        dyn = {"input_ids": {0: "batch", 1: "seq"}, "attention_mask": {0: "batch", 1: "seq"},
               "global_hidden": {0: "batch", 1: "seq"}}
        dyn.update({n: {0: "batch", 1: "seq"} for n in g.kv_present})
        export(m.prefill, (ex_ids, torch.ones(1, 5, dtype=torch.int32)), os.path.join(tiny_dir, g.files["prefill"]),
               g.prefill_in, g.prefill_out, dyn)

        past = [torch.randn(1, 5, HEADS, HDIM) for _ in range(2 * LAYERS)]
        dyn = {"input_ids": {0: "batch"}, "past_valid_lengths": {0: "batch"}, "global_hidden": {0: "batch"}}
        dyn.update({n: {0: "batch", 1: "past_seq"} for n in g.kv_past})
        dyn.update({n: {0: "batch", 1: "total_seq"} for n in g.kv_present})
        export(m.decode, (ex_ids[:, :1], torch.tensor([5], dtype=torch.int32), *past),
               os.path.join(tiny_dir, g.files["decode_step"]), g.decode_in, g.decode_out, dyn)

        dyn = {n: {0: "batch"} for n in g.local_in + g.local_out}
        export(m.local, (torch.randn(1, HID), torch.zeros(1, NVQ, CB, dtype=torch.int32),
                         torch.tensor([0.5]), torch.rand(1, NVQ)),
               os.path.join(tiny_dir, g.files["local_fixed_sampled_frame"]), g.local_in, g.local_out, dyn)

        dyn = {"audio_codes": {1: "num_frames"}, "audio": {2: "num_samples"}}
        export(m.codec, (torch.zeros(1, 2, NVQ, dtype=torch.int32), torch.tensor([2], dtype=torch.int32),
                         *moss_set.codec_initial_state(CODEC_CONTEXTS)), os.path.join(codec_dir, g.codec_file),
               g.codec_in, g.codec_out, dyn)
    return g


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--testdata", default=TD,
                    help="where to write tiny/, tiny-codec/ and tiny_golden.json (default tts/moss/testdata)")
    td = ap.parse_args().testdata
    tiny_dir, codec_dir = os.path.join(td, "tiny"), os.path.join(td, "tiny-codec")
    os.makedirs(tiny_dir, exist_ok=True)
    os.makedirs(codec_dir, exist_ok=True)

    m = build_modules()
    prefill, decode, local, codec = m.prefill, m.decode, m.local, m.codec
    g = export_graphs(m, tiny_dir, codec_dir)

    # ---- metadata ----
    templates, voices = moss_set.write_meta(tiny_dir, codec_dir, "../tiny-codec/codec_browser_onnx_meta.json", g, 5,
                                            CODEC_CONTEXTS, DOWNSAMPLE, OPSET)
    tok_src = moss_set.tokenizer_model()

    # ---- golden: one request, voice Junhao, text "hello world" ----
    sp = spm.SentencePieceProcessor(model_file=tok_src)
    text = "hello world"
    text_ids = [int(x) for x in sp.encode(text)]
    assert all(0 <= t < VOCAB for t in text_ids)
    rows = moss_set.prompt_rows(templates, voices[0], text_ids)
    with torch.no_grad():
        frames, uniforms = moss_set.run_chunk(prefill, decode, local, rows, np.random.default_rng(1234))
        # calibration check: frames per chunk for other seeds
        calib = [len(moss_set.run_chunk(prefill, decode, local, rows, np.random.default_rng(s))[0]) for s in range(20)]
        state = moss_set.codec_initial_state(CODEC_CONTEXTS)
        chunks = []
        total = 0
        for fr in frames:
            out = codec(torch.tensor([[fr]], dtype=torch.int32), torch.tensor([1], dtype=torch.int32), *state)
            n = int(out[1][0])
            chunks.append(out[0][:, :, :n])
            total += n
            state = list(out[2:])
        audio = torch.cat(chunks, dim=2) if chunks else torch.zeros(1, CHANNELS, 0)
        # same frames decoded with a fresh state each call: must differ (state is carried)
        fresh = codec(torch.tensor([[frames[-1]]], dtype=torch.int32), torch.tensor([1], dtype=torch.int32),
                      *moss_set.codec_initial_state(CODEC_CONTEXTS))[0]
        carried_last = chunks[-1]
    golden = {
        "voice": "Junhao",
        "text": text,
        "text_token_ids": text_ids,
        "num_rows": len(rows),
        "seed": 1234,
        "uniforms_per_frame": uniforms,
        "num_frames": len(frames),
        "frame_token_ids": frames,
        "codec_frames_per_call": 1,
        "total_audio_samples_per_channel": total,
        "first16_channel0": [float(x) for x in audio[0, 0, :16]],
        "first16_channel1": [float(x) for x in audio[0, 1, :16]],
        "last_frame_first16_channel0": [float(x) for x in carried_last[0, 0, :16]],
        "last_frame_fresh_state_first16_channel0": [float(x) for x in fresh[0, 0, :16]],
        "calibration_frames_seeds_0_19": calib,
    }
    with open(os.path.join(td, "tiny_golden.json"), "w") as f:
        json.dump(golden, f, indent=1)
        f.write("\n")
    print("frames", len(frames), "calib", calib, "samples", total)


if __name__ == "__main__":
    main()
