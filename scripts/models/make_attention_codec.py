#!/usr/bin/env python3
"""A small codec decode step with the full-size stand-in's attention, for the ring rewrite's tests.

Writes tts/moss/testdata/attention-codec/: moss_audio_tokenizer_decode_step.onnx (weights inline)
and codec_browser_onnx_meta.json. The graph is make_fullsize_moss.py's CodecDecodeStep, exported
the same way, at a small size: 4 transformers of one layer each, 2 heads of 8, caches of
CONTEXTS positions. Its caches slide as the full-size stand-in's do (a Concat of the cached and
the new entries, which the attention reads under a mask by positions, and a Slice of the last
context entries for the next call), so it is what quantize.RingCaches rewrites and what
tts/moss checks the rewrite against. (The tiny set's codec, tiny-codec/, reads its caches
outside any attention: the rewrite must refuse it, and the synthesizer keep it as it is.)

Its codes and frame size are the tiny set's (16 codebooks of 1024, 480 samples a frame), so the
synthesizer can speak through it with tts/moss/testdata/tiny.

Regenerate (from the repository root; Debian: python3-torch python3-onnx):

    /usr/bin/python3 scripts/models/make_attention_codec.py

A fixed seed: a rerun writes the same bytes.
"""
import json
import os
import sys

import onnx
import torch

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import make_fullsize_moss as full  # noqa: E402
import moss_set  # noqa: E402

ROOT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..")
OUT = os.path.join(ROOT, "tts", "moss", "testdata", "attention-codec")
TINY_META = os.path.join(ROOT, "tts", "moss", "testdata", "tiny-codec", "codec_browser_onnx_meta.json")

CONTEXTS = [3, 5, 6, 9]  # one layer per transformer; frames add 1, 2, 4 and 8 entries
HEADS, HDIM = 2, 8
DOWNSAMPLE = 480
SEED = 20261205


def small():
    """Sets make_fullsize_moss's codec sizes to the small ones (its classes read them when built
    and run)."""
    full.CODEC_HEADS, full.CODEC_HDIM = HEADS, HDIM
    full.CODEC_D = HEADS * HDIM
    full.CODEC_FFN = 32
    full.CODEC_CB_DIM = 2
    full.CODEC_CONTEXTS = CONTEXTS
    full.CODEC_MODULES = [1, 1, 1, 1]
    full.CODEC_PATCH = DOWNSAMPLE // 2 ** (len(full.CODEC_MODULES) - 1)


def meta(g):
    with open(TINY_META) as f:
        m = json.load(f)
    m["codec_config"]["downsample_rate"] = DOWNSAMPLE
    m["onnx"]["decode_step_input_names"] = g.codec_in
    m["onnx"]["decode_step_output_names"] = g.codec_out
    caches = m["streaming_decode"]["attention_caches"][:len(CONTEXTS)]
    for c, ctx in zip(caches, CONTEXTS):
        c.update(context=ctx, num_heads=HEADS, head_dim=HDIM, cache_shape=[1, HEADS, ctx, HDIM],
                 positions_shape=[1, ctx])
    m["streaming_decode"]["attention_caches"] = caches
    return m


def main():
    small()
    torch.manual_seed(SEED)
    codec = full.CodecDecodeStep().eval()
    full.randomize(codec, torch.Generator().manual_seed(SEED))
    g = moss_set.graph_names(len(CONTEXTS))
    state = [torch.zeros(1, dtype=torch.int32) for _ in range(4)]
    for ctx in CONTEXTS:
        state += [torch.zeros(1, dtype=torch.int32), torch.zeros(1, HEADS, ctx, HDIM),
                  torch.zeros(1, HEADS, ctx, HDIM), torch.full((1, ctx), -1, dtype=torch.int32)]
    with torch.no_grad():
        m = full.export(codec, (torch.zeros(1, 2, moss_set.NVQ, dtype=torch.int32), torch.tensor([2], dtype=torch.int32),
                                *state), g.codec_in, g.codec_out,
                        {"audio_codes": {1: "num_frames"}, "audio": {2: "num_samples"}})
    m.producer_name = "make_attention_codec.py"
    os.makedirs(OUT, exist_ok=True)
    onnx.save_model(m, os.path.join(OUT, g.codec_file))
    with open(os.path.join(OUT, "codec_browser_onnx_meta.json"), "w") as f:
        json.dump(meta(g), f, indent=1)
        f.write("\n")
    print("%s: %d parameters, %d nodes" % (OUT, full.count(codec), len(m.graph.node)))


if __name__ == "__main__":
    main()
