#!/usr/bin/env python3
"""A small MOSS-TTS-Nano set with the full-size stand-in's attention, for the shared-KV rewrite's tests.

Writes tts/moss/testdata/attention-tts/: moss_tts_prefill.onnx and moss_tts_decode_step.onnx
(sharing moss_tts_global_shared.data), moss_tts_local_fixed_sampled_frame.onnx (weights inline),
the set's JSON files (its codec is ../tiny-codec) and the test tokenizer. The graphs are
make_fullsize_moss.py's Prefill, DecodeStep and LocalFrame, exported the same way, at a small
size: 2 layers of 2 heads of 8 (ONNX Runtime's GroupQueryAttention takes head sizes in
multiples of 8), 16 wide, a text vocabulary of 1536 (the test tokenizer has 800 pieces; the
audio pad, 1024, is a row's text id too). Its decode step's KV caches grow by a Concat that the
attention reads transposed, as the full-size stand-in's do, so it is what
quantize.SharedKVAttention rewrites and what tts/moss checks the rewrite against. Its mask is
upstream's rather than the full-size stand-in's additive bias: the scores filled with the
dtype's least value (masked_fill, a Where in the graph) for keys past past_valid_lengths, as
OpenMOSS/MOSS-TTS-Nano onnx/export_moss_tts_browser_onnx.py:212-221 (@42b4645) writes it, so
the tests see both forms the rewrite takes. (The tiny set's decode step has no attention: the rewrite must refuse it, and
the synthesizer keep it as it is.)

Regenerate (from the repository root; Debian: python3-torch python3-onnx python3-numpy):

    /usr/bin/python3 scripts/models/make_attention_tts.py

A fixed seed: a rerun writes the same bytes.
"""
import os
import sys
import tempfile

import torch

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import moss_set  # noqa: E402

SIZES = dict(HID=16, LAYERS=2, HEADS=2, HDIM=8, VOCAB=1536)
moss_set.__dict__.update(SIZES)
moss_set.KV_NAMES = [f"{kind}_{i}" for i in range(SIZES["LAYERS"]) for kind in ("key", "value")]
import make_fullsize_moss as full  # noqa: E402

full.__dict__.update(SIZES, FFN=32)

class UpstreamMaskDecodeStep(full.DecodeStep):
    """The decode step with upstream's mask: keys at positions up to past_valid_lengths, the rest
    masked_fill'ed with float32's least value before the Softmax."""

    def forward(self, input_ids, past_valid_lengths, *past):
        lengths = past_valid_lengths.long().view(-1, 1, 1, 1)
        keys = torch.arange(past[0].shape[1] + 1).view(1, 1, 1, -1)
        mask = (keys < lengths + 1) & (keys <= lengths)
        h, presents = self.core.run(self.core.emb.rows(input_ids), past_valid_lengths.float().unsqueeze(1), mask, list(past))
        return tuple([h] + presents)


def masked_attention(forward):
    """GPT2Attention.forward taking a boolean mask as upstream applies it, or a bias as before."""

    def attend(self, x, cos, sin, mask, past_k=None, past_v=None):
        if mask is None or mask.dtype != torch.bool:
            return forward(self, x, cos, sin, mask, past_k, past_v)
        q, k, v = self.c_attn(x).split(full.HID, dim=2)
        shp = (x.shape[0], x.shape[1], full.HEADS, full.HDIM)
        q = full.rope(q.reshape(shp), cos, sin)
        k = full.rope(k.reshape(shp), cos, sin)
        v = v.reshape(shp)
        k = torch.cat([past_k, k], dim=1)
        v = torch.cat([past_v, v], dim=1)
        att = torch.matmul(q.transpose(1, 2), k.permute(0, 2, 3, 1)) * (full.HDIM ** -0.5)
        att = torch.softmax(att.masked_fill(~mask, torch.finfo(att.dtype).min), dim=-1)
        o = torch.matmul(att, v.transpose(1, 2)).transpose(1, 2)
        return self.c_proj(o.reshape(x.shape[0], x.shape[1], full.HID)), k, v

    return attend


full.GPT2Attention.forward = masked_attention(full.GPT2Attention.forward)

ROOT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..")
OUT = os.path.join(ROOT, "tts", "moss", "testdata", "attention-tts")
DATA = "moss_tts_global_shared.data"
VOICE_FRAMES = 6
SEED = 20261206


def main():
    torch.manual_seed(SEED)
    gen = torch.Generator().manual_seed(SEED)
    core, local = full.GlobalTransformer().eval(), full.LocalFrame().eval()
    for mod in (core, local):
        full.randomize(mod, gen)
    prefill, decode = full.Prefill(core).eval(), UpstreamMaskDecodeStep(core).eval()
    g = moss_set.graph_names(len(full.CODEC_CONTEXTS))
    os.makedirs(OUT, exist_ok=True)
    meta = {"comment": "random-weight small stand-in with the full-size attention; not a speech model",
            "seed": str(SEED)}
    heads, hdim, hid = SIZES["HEADS"], SIZES["HDIM"], SIZES["HID"]
    with torch.no_grad():
        ids = torch.full((1, 5, moss_set.ROW), moss_set.AUDIO_PAD, dtype=torch.int32)
        ids[:, :, 0] = 4
        dyn = {"input_ids": {0: "batch", 1: "seq"}, "attention_mask": {0: "batch", 1: "seq"},
               "global_hidden": {0: "batch", 1: "seq"}}
        dyn.update({n: {0: "batch", 1: "seq"} for n in g.kv_present})
        m_prefill = full.export(prefill, (ids, torch.ones(1, 5, dtype=torch.int32)), g.prefill_in, g.prefill_out, dyn)
        past = [torch.randn(1, 5, heads, hdim, generator=gen) for _ in range(len(g.kv_past))]
        dyn = {"input_ids": {0: "batch"}, "past_valid_lengths": {0: "batch"}, "global_hidden": {0: "batch"}}
        dyn.update({n: {0: "batch", 1: "past_seq"} for n in g.kv_past})
        dyn.update({n: {0: "batch", 1: "total_seq"} for n in g.kv_present})
        m_decode = full.export(decode, (ids[:, :1], torch.tensor([5], dtype=torch.int32), *past),
                               g.decode_in, g.decode_out, dyn)
        full.write_shared(OUT, DATA, [(g.files["prefill"], m_prefill, meta), (g.files["decode_step"], m_decode, meta)])
        dyn = {n: {0: "batch"} for n in g.local_in + g.local_out}
        m_local = full.export(local, (torch.randn(1, hid, generator=gen), torch.zeros(1, moss_set.NVQ, moss_set.CB, dtype=torch.int32),
                                      torch.tensor([0.5]), torch.rand(1, moss_set.NVQ, generator=gen)), g.local_in, g.local_out, dyn)
        for k, v in meta.items():
            prop = m_local.metadata_props.add()
            prop.key, prop.value = k, v
        with open(os.path.join(OUT, g.files["local_fixed_sampled_frame"]), "wb") as f:
            f.write(m_local.SerializeToString())
    with tempfile.TemporaryDirectory() as codec_dir:  # the codec is tiny-codec's; its meta stays
        moss_set.write_meta(OUT, codec_dir, "../tiny-codec/codec_browser_onnx_meta.json", g, VOICE_FRAMES,
                            full.CODEC_CONTEXTS, full.DOWNSAMPLE, full.OPSET)
    for name in sorted(os.listdir(OUT)):
        print("  %-45s %9d" % (name, os.path.getsize(os.path.join(OUT, name))))


if __name__ == "__main__":
    main()
