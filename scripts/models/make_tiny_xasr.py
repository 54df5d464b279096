#!/usr/bin/env python3
"""Tiny random-weight stand-ins for the X-ASR zh-en streaming transducer, for asr/xasr tests.

Writes, under asr/xasr/testdata/:

  tiny/encoder.int8.onnx   streaming "zipformer2" encoder with X-ASR's exact signature (the
                           names, dtypes and ranks icefall's zipformer/export-onnx-streaming.py
                           produces; fp32 weights despite the name): inputs `x` f32 [N, 29, 80],
                           per layer i = 0..18 `cached_key_i`, `cached_nonlin_attn_i`,
                           `cached_val1_i`, `cached_val2_i`, `cached_conv1_i`, `cached_conv2_i`,
                           then `embed_states` f32 [N, 128, 3, 19] and `processed_lens` i64 [N];
                           outputs `encoder_out` f32 [N, 4, 16] and `new_<name>` for every cache
                           input (including `new_processed_lens`, as icefall does). Only the batch
                           axis is symbolic ("N"), at the position icefall puts it (axis 1 for
                           key/nonlin_attn/val caches, axis 0 for conv caches, embed_states,
                           processed_lens). Metadata as icefall writes it (model_type zipformer2,
                           T, decode_chunk_len, num_encoder_layers, encoder_dims, ...).
  tiny/decoder.onnx        `y` i64 [N, 2] -> `decoder_out` f32 [N, 16]; metadata context_size=2,
                           vocab_size=5000.
  tiny/joiner.int8.onnx    `encoder_out` f32 [N, 16], `decoder_out` f32 [N, 16] -> `logit` f32
                           [N, 5000]; the blank logit is biased so that roughly 40% of encoder
                           frames emit a token on the calibration signal.
  tiny/tokens.txt          not written here: the Go tests use testdata/tokens.txt (the real
                           X-ASR table) and copy it next to the models when they need it.
  encoder_wrong_input.onnx an encoder whose input is named `features` instead of `x`: New must
                           reject it with onnx.ErrModelMismatch.
  encoder_no_new_lens.onnx tiny/encoder.int8.onnx without the `new_processed_lens` output, for
                           the recognizer's fallback (it then advances processed_lens itself,
                           by decode_chunk_len / 2, which must decode exactly the same tokens).
  tiny_golden.json         token ids from the torch reference of the same model (greedy search,
                           windows of T frames advancing by decode_chunk_len, caches carried)
                           for a fixed feature pattern, so the Go test can check its windowing,
                           cache feeding and search against an independent implementation.
  tiny_audio_golden.json   the whole path from audio, as X-ASR's own streaming script runs it
                           (Gilgamesh-J/X-ASR X-ASR-zh-en/zipformer/onnx_pretrained-streaming.py,
                           main() at 470-540): the espeak-ng speech of asr/fbank/testdata plus
                           0.3 s of zeros, fed in 1 s pieces to a streaming fbank with the
                           script's options (410-417: dither 0, snip_edges False, 80 bins,
                           high_freq -400), full windows of T frames advancing by
                           decode_chunk_len, no input_finished, greedy search. That script
                           needs kaldifeat, k2 and the onnxruntime wheel, none of which Debian 12
                           packages; what stands in: torchaudio's kaldi.fbank (the same Kaldi
                           recipe; frames whose window lies inside the audio received, as an
                           online fbank gives them), the torch modules the ONNX files are
                           exported from, and the search of greedy() below (sherpa-onnx's
                           context [-1, blank] and <unk> as blank: what X-ASR's deployment,
                           sherpa_streaming_infer.py, runs). It also records the tokens the
                           same audio gives with a filterbank up to Nyquist, which differ.

The encoder is not a zipformer: it is a few small linear maps arranged so that every output
depends on `x` and on every cache, and every `new_*` cache depends on `x` and on the old cache.
So a recognizer that does not feed the new caches back, or feeds them to the wrong input, decodes
different tokens. new_processed_lens = processed_lens + 8 (the chunk length after the encoder's
2x subsampling, as in icefall).

Weights come from fixed seeds. Regenerate (from the repository root; Debian: apt-get install -y
python3-numpy python3-onnx python3-torch python3-torchaudio; use /usr/bin/python3):

    /usr/bin/python3 scripts/models/make_tiny_xasr.py

then run `go test ./asr/xasr`.
"""
import json
import math
import os

import numpy as np
import onnx
from onnx import TensorProto, helper
import torch
from torch import nn

HERE = os.path.dirname(os.path.abspath(__file__))
OUT_DIR = os.path.join(HERE, "..", "..", "asr", "xasr", "testdata")
TINY_DIR = os.path.join(OUT_DIR, "tiny")
OPSET = 13  # the X-ASR export's opset

# Real X-ASR 160 ms: chunk 8 (after 2x subsampling) -> decode_chunk_len 16, T = 16 + 13 = 29.
DECODE_CHUNK_LEN = 16
T = DECODE_CHUNK_LEN + 7 + 2 * 3
OUT_FRAMES = DECODE_CHUNK_LEN // 4  # 4 encoder frames per 160 ms
FEAT = 80
D = 16  # joiner dim (512 in the real model)
VOCAB = 5000
CONTEXT = 2

# zipformer2-like stacks (19 layers, as X-ASR has), with tiny dimensions.
NUM_LAYERS = [2, 2, 4, 5, 4, 2]
ENCODER_DIMS = [8, 8, 12, 16, 12, 8]
DOWNSAMPLING = [1, 2, 4, 8, 4, 2]
LEFT_CONTEXT_FRAMES = 8
LEFT_CONTEXT = [LEFT_CONTEXT_FRAMES // d for d in DOWNSAMPLING]
QUERY_HEAD_DIMS = [4] * 6
VALUE_HEAD_DIMS = [2] * 6
NUM_HEADS = [2, 2, 2, 2, 2, 2]
KERNELS = [5, 5, 3, 3, 3, 5]


def cache_specs():
    """(name, shape with batch 1, batch axis), in icefall's input order."""
    specs = []
    layer = 0
    for s, n in enumerate(NUM_LAYERS):
        left, dim = LEFT_CONTEXT[s], ENCODER_DIMS[s]
        key_dim = QUERY_HEAD_DIMS[s] * NUM_HEADS[s]
        value_dim = VALUE_HEAD_DIMS[s] * NUM_HEADS[s]
        for _ in range(n):
            i = layer
            specs += [
                ("cached_key_%d" % i, [left, 1, key_dim], 1),
                ("cached_nonlin_attn_%d" % i, [1, 1, left, 3 * dim // 4], 1),
                ("cached_val1_%d" % i, [left, 1, value_dim], 1),
                ("cached_val2_%d" % i, [left, 1, value_dim], 1),
                ("cached_conv1_%d" % i, [1, dim, KERNELS[s] // 2], 0),
                ("cached_conv2_%d" % i, [1, dim, KERNELS[s] // 2], 0),
            ]
            layer += 1
    specs.append(("embed_states", [1, 128, 3, 19], 0))
    return specs


class TinyEncoder(nn.Module):
    def __init__(self, specs):
        super().__init__()
        self.specs = specs
        n = len(specs)
        self.proj = nn.Linear(FEAT, D)
        self.look = nn.Linear(D, D)
        # Summary pattern (encoder_out <- cache), update pattern and offset (new cache <- x, cache).
        self.R = nn.ParameterList([nn.Parameter(torch.randn(*shape) / math.sqrt(np.prod(shape))) for _, shape, _ in specs])
        self.P = nn.ParameterList([nn.Parameter(torch.randn(*shape) * 0.5) for _, shape, _ in specs])
        self.Q = nn.ParameterList([nn.Parameter(torch.randn(*shape) * 0.5) for _, shape, _ in specs])
        self.U = nn.Parameter(torch.randn(n, D) / math.sqrt(D))
        self.V = nn.Parameter(torch.randn(n, D) / math.sqrt(n))
        self.w_pl = nn.Parameter(torch.randn(D) * 0.5)

    def forward(self, x, *states):
        caches, processed_lens = states[:-1], states[-1]
        z = torch.tanh(self.proj((x + 8.0) / 6.0))  # [N, T, D]
        main = z[:, :DECODE_CHUNK_LEN].reshape(-1, OUT_FRAMES, DECODE_CHUNK_LEN // OUT_FRAMES, D).mean(2)
        look = self.look(z[:, DECODE_CHUNK_LEN:].mean(1))  # the right context frames
        m = z.mean(1)  # [N, D]
        cache_vec = self.w_pl * torch.sin(processed_lens.to(torch.float32) * 0.05).unsqueeze(1)
        new = []
        for k, (c, (_, shape, b)) in enumerate(zip(caches, self.specs)):
            dims = [d for d in range(len(shape)) if d != b]
            s = torch.sum(c * self.R[k], dim=dims)  # [N]
            cache_vec = cache_vec + s.unsqueeze(1) * self.V[k]
            g_shape = [1] * len(shape)
            g_shape[b] = -1
            g = torch.matmul(m, self.U[k]).reshape(g_shape)
            new.append(torch.tanh(0.8 * c + g * self.P[k] + self.Q[k]))
        enc = torch.tanh(2.0 * main + 0.5 * look.unsqueeze(1) + cache_vec.unsqueeze(1))
        return (enc, *new, processed_lens + DECODE_CHUNK_LEN // 2)


class TinyDecoder(nn.Module):
    def __init__(self):
        super().__init__()
        self.emb = nn.Embedding(VOCAB, D)
        self.proj = nn.Linear(CONTEXT * D, D)

    def forward(self, y):
        # As icefall's stateless decoder: -1 (before the start of the
        # utterance) embeds to zeros.
        e = self.emb(y.clamp(min=0)) * (y >= 0).unsqueeze(-1)
        return torch.tanh(self.proj(e.reshape(-1, CONTEXT * D)))


class TinyJoiner(nn.Module):
    def __init__(self):
        super().__init__()
        self.out = nn.Linear(D, VOCAB)
        with torch.no_grad():
            self.out.weight.mul_(4.0)  # wider gaps between the top logits

    def forward(self, encoder_out, decoder_out):
        return self.out(torch.tanh(encoder_out + decoder_out))


UNK = 4015  # <unk> in X-ASR's tokens.txt


def init_states(specs):
    return [torch.zeros(*shape) for _, shape, _ in specs] + [torch.zeros(1, dtype=torch.int64)]


@torch.no_grad()
def greedy(enc, dec, join, feats):
    """The reference streaming decode: full windows only, caches carried, one symbol per frame.
    Returns the tokens and the smallest top-2 logit margin seen (argmax robustness)."""
    specs = enc.specs
    states = init_states(specs)
    # icefall's and sherpa-onnx's greedy search: context [-1, ..., -1, blank];
    # <unk> is treated like blank (not emitted, no decoder update).
    hyp = [-1] * (CONTEXT - 1) + [0]
    dec_out = dec(torch.tensor([hyp[-CONTEXT:]]))
    tokens, margin, frames = [], float("inf"), 0
    start = 0
    while start + T <= len(feats):
        x = torch.from_numpy(np.ascontiguousarray(feats[start:start + T], dtype=np.float32)).unsqueeze(0)
        out = enc(x, *states)
        eo, states = out[0], list(out[1:])
        for t in range(eo.shape[1]):
            logit = join(eo[:, t], dec_out)[0]
            top = torch.topk(logit, 2).values
            margin = min(margin, float(top[0] - top[1]))
            y = int(torch.argmax(logit))
            frames += 1
            if y != 0 and y != UNK:
                tokens.append(y)
                hyp.append(y)
                dec_out = dec(torch.tensor([hyp[-CONTEXT:]]))
        start += DECODE_CHUNK_LEN
    return tokens, margin, frames


def calibration_features():
    """Kaldi fbank (X-ASR options) of a chirp + noise signal with silent gaps."""
    import torchaudio.compliance.kaldi as kaldi
    sr = 16000
    rng = np.random.default_rng(7)
    t = np.arange(int(2.5 * sr)) / sr
    chirp = 0.3 * np.sin(2 * np.pi * (150 * t + 400 * t * t))
    pcm = np.concatenate([np.zeros(sr // 4), chirp, np.zeros(sr // 2), 0.2 * np.sin(2 * np.pi * 440 * t[:sr])])
    pcm = (pcm + 0.01 * rng.standard_normal(len(pcm))).astype(np.float32)
    f = kaldi.fbank(torch.from_numpy(pcm).unsqueeze(0), sample_frequency=16000.0, dither=0.0,
                    snip_edges=False, num_mel_bins=FEAT, energy_floor=0.0)
    return f.numpy()


def speech_pcm():
    """The espeak-ng speech asr/fbank's golden uses, int16 / 32768."""
    import wave
    with wave.open(os.path.join(HERE, "..", "..", "asr", "fbank", "testdata", "speech_16k.wav"), "rb") as w:
        assert w.getframerate() == 16000 and w.getnchannels() == 1 and w.getsampwidth() == 2
        return np.frombuffer(w.readframes(w.getnframes()), dtype="<i2").astype(np.float32) / np.float32(32768.0)


def streaming_features(pcm, high_freq):
    """The frames an online fbank has ready when pcm has arrived and input is not finished
    (snip_edges False: frame t needs samples up to t*160 + 279), computed in float64."""
    import torchaudio.compliance.kaldi as kaldi
    x = torch.from_numpy(pcm.astype(np.float64)).unsqueeze(0)
    prev = torch.get_default_dtype()
    torch.set_default_dtype(torch.float64)
    try:
        f = kaldi.fbank(x, sample_frequency=16000.0, dither=0.0, snip_edges=False, num_mel_bins=FEAT,
                        energy_floor=0.0, low_freq=20.0, high_freq=high_freq)
    finally:
        torch.set_default_dtype(prev)
    ready = (len(pcm) - 280) // 160 + 1
    return f.numpy()[:ready].astype(np.float32)


def audio_golden(enc, dec, join):
    pcm = np.concatenate([speech_pcm(), np.zeros(int(0.3 * 16000), dtype=np.float32)])
    tokens, margin, n = greedy(enc, dec, join, streaming_features(pcm, -400.0))
    nyquist, _, _ = greedy(enc, dec, join, streaming_features(pcm, 0.0))
    assert tokens != nyquist, "the tiny model decodes the same with either mel range: the golden has no teeth"
    golden = {
        "note": "the tiny model from audio, as X-ASR-zh-en/zipformer/onnx_pretrained-streaming.py decodes; "
                "regenerate with scripts/models/make_tiny_xasr.py",
        "audio": "asr/fbank/testdata/speech_16k.wav (int16 / 32768) + 0.3 s of zeros",
        "tail_padding_samples": int(0.3 * 16000),
        "encoder_frames": n,
        "tokens": tokens,
        "tokens_nyquist": nyquist,
        "min_top2_margin": margin,
    }
    print("audio golden: %d tokens (%d with a Nyquist filterbank), min margin %.4f" % (len(tokens), len(nyquist), margin))
    with open(os.path.join(OUT_DIR, "tiny_audio_golden.json"), "w") as fh:
        json.dump(golden, fh, indent=1)
        fh.write("\n")


def pattern_features(frames):
    """The golden input, also computed by the Go test:
    f[t][m] = 4 sin(0.3 t + 0.17 m) + 2 cos(0.011 t m) - 6 (float64, then float32)."""
    t = np.arange(frames, dtype=np.float64)[:, None]
    m = np.arange(FEAT, dtype=np.float64)[None, :]
    return (4 * np.sin(0.3 * t + 0.17 * m) + 2 * np.cos(0.011 * t * m) - 6).astype(np.float32)


def set_dims(vi, dims):
    shape = vi.type.tensor_type.shape
    del shape.dim[:]
    for d in dims:
        dim = shape.dim.add()
        if isinstance(d, str):
            dim.dim_param = d
        else:
            dim.dim_value = d


def finish(path, meta, dims):
    """Force the declared shapes (only the batch axis symbolic), add metadata, check, save."""
    m = onnx.load(path)
    for vi in list(m.graph.input) + list(m.graph.output):
        set_dims(vi, dims[vi.name])
    del m.metadata_props[:]
    for k, v in meta.items():
        p = m.metadata_props.add()
        p.key, p.value = k, str(v)
    m.producer_name = "make_tiny_xasr.py"
    onnx.checker.check_model(m)
    onnx.shape_inference.infer_shapes(m, strict_mode=True)
    onnx.save(m, path)
    print("wrote %s (%d bytes)" % (path, os.path.getsize(path)))


def batch_dims(shape, b):
    d = list(shape)
    d[b] = "N"
    return d


def wrong_input_encoder(path):
    x = helper.make_tensor_value_info("features", TensorProto.FLOAT, ["N", T, FEAT])
    y = helper.make_tensor_value_info("encoder_out", TensorProto.FLOAT, ["N", OUT_FRAMES, D])
    nodes = [helper.make_node("Slice", ["features", "starts", "ends", "axes"], ["s"]),
             helper.make_node("Slice", ["s", "zero", "dims", "axes2"], ["encoder_out"])]
    inits = [helper.make_tensor("starts", TensorProto.INT64, [1], [0]),
             helper.make_tensor("ends", TensorProto.INT64, [1], [OUT_FRAMES]),
             helper.make_tensor("axes", TensorProto.INT64, [1], [1]),
             helper.make_tensor("zero", TensorProto.INT64, [1], [0]),
             helper.make_tensor("dims", TensorProto.INT64, [1], [D]),
             helper.make_tensor("axes2", TensorProto.INT64, [1], [2])]
    graph = helper.make_graph(nodes, "wrong_input", [x], [y], inits)
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", OPSET)], producer_name="make_tiny_xasr.py")
    model.ir_version = 8
    p = model.metadata_props.add()
    p.key, p.value = "model_type", "zipformer2"
    onnx.checker.check_model(model)
    onnx.save(model, path)
    print("wrote %s (%d bytes)" % (path, os.path.getsize(path)))


def main():
    os.makedirs(TINY_DIR, exist_ok=True)
    torch.manual_seed(20250611)
    specs = cache_specs()
    enc, dec, join = TinyEncoder(specs).eval(), TinyDecoder().eval(), TinyJoiner().eval()

    # Calibrate the blank bias: 35-50% of encoder frames should emit a token on the calibration
    # signal. Of the biases that do, take the one whose decisions are farthest from a tie (a bias
    # right at a boundary makes some frame's blank and best token logits equal).
    feats = calibration_features()
    best = None
    for bias in np.arange(2.0, 8.0, 0.05):
        with torch.no_grad():
            join.out.bias[0] = float(bias)
        tokens, margin, frames = greedy(enc, dec, join, feats)
        frac = len(tokens) / frames
        if 0.35 <= frac <= 0.5 and (best is None or margin > best[1]):
            best = (float(bias), margin, frac, len(set(tokens)))
    assert best is not None, "no blank bias gives 35-50% emitting frames"
    with torch.no_grad():
        join.out.bias[0] = best[0]
    print("blank bias %.2f: %.0f%% of frames emit, %d distinct tokens, min top-2 margin %.4f"
          % (best[0], 100 * best[2], best[3], best[1]))

    names = [n for n, _, _ in specs]
    x = torch.from_numpy(pattern_features(T)).unsqueeze(0)
    states = init_states(specs)
    enc_path = os.path.join(TINY_DIR, "encoder.int8.onnx")
    dyn = {"x": {0: "N"}, "encoder_out": {0: "N"}, "processed_lens": {0: "N"}, "new_processed_lens": {0: "N"}}
    dims = {"x": ["N", T, FEAT], "encoder_out": ["N", OUT_FRAMES, D],
            "processed_lens": ["N"], "new_processed_lens": ["N"]}
    for name, shape, b in specs:
        dyn[name] = dyn["new_" + name] = {b: "N"}
        dims[name] = dims["new_" + name] = batch_dims(shape, b)
    torch.onnx.export(enc, (x, *states), enc_path, input_names=["x"] + names + ["processed_lens"],
                      output_names=["encoder_out"] + ["new_" + n for n in names] + ["new_processed_lens"],
                      dynamic_axes=dyn, opset_version=OPSET, do_constant_folding=True)
    finish(enc_path, {
        "model_type": "zipformer2",
        "version": "1",
        "model_author": "make_tiny_xasr.py (random weights)",
        "comment": "tiny random-weight stand-in for the X-ASR zh-en streaming zipformer2 (160 ms)",
        "decode_chunk_len": DECODE_CHUNK_LEN,
        "T": T,
        "num_encoder_layers": ",".join(map(str, NUM_LAYERS)),
        "encoder_dims": ",".join(map(str, ENCODER_DIMS)),
        "cnn_module_kernels": ",".join(map(str, KERNELS)),
        "left_context_len": ",".join(map(str, LEFT_CONTEXT)),
        "query_head_dims": ",".join(map(str, QUERY_HEAD_DIMS)),
        "value_head_dims": ",".join(map(str, VALUE_HEAD_DIMS)),
        "num_heads": ",".join(map(str, NUM_HEADS)),
    }, dims)

    dec_path = os.path.join(TINY_DIR, "decoder.onnx")
    torch.onnx.export(dec, torch.zeros(1, CONTEXT, dtype=torch.int64), dec_path, input_names=["y"],
                      output_names=["decoder_out"], dynamic_axes={"y": {0: "N"}, "decoder_out": {0: "N"}},
                      opset_version=OPSET, do_constant_folding=True)
    finish(dec_path, {"context_size": CONTEXT, "vocab_size": VOCAB}, {"y": ["N", CONTEXT], "decoder_out": ["N", D]})

    join_path = os.path.join(TINY_DIR, "joiner.int8.onnx")
    torch.onnx.export(join, (torch.zeros(1, D), torch.zeros(1, D)), join_path,
                      input_names=["encoder_out", "decoder_out"], output_names=["logit"],
                      dynamic_axes={"encoder_out": {0: "N"}, "decoder_out": {0: "N"}, "logit": {0: "N"}},
                      opset_version=OPSET, do_constant_folding=True)
    finish(join_path, {"joiner_dim": D}, {"encoder_out": ["N", D], "decoder_out": ["N", D], "logit": ["N", VOCAB]})

    wrong_input_encoder(os.path.join(OUT_DIR, "encoder_wrong_input.onnx"))

    m = onnx.load(enc_path)
    outs = [o for o in m.graph.output if o.name != "new_processed_lens"]
    del m.graph.output[:]
    m.graph.output.extend(outs)
    onnx.checker.check_model(m)
    no_lens = os.path.join(OUT_DIR, "encoder_no_new_lens.onnx")
    onnx.save(m, no_lens)
    print("wrote %s (%d bytes)" % (no_lens, os.path.getsize(no_lens)))

    frames = T + 9 * DECODE_CHUNK_LEN
    tokens, margin, n = greedy(enc, dec, join, pattern_features(frames))
    golden = {
        "note": "torch reference of the tiny model; regenerate with scripts/models/make_tiny_xasr.py",
        "features": "pattern: f[t][m] = 4 sin(0.3 t + 0.17 m) + 2 cos(0.011 t m) - 6, float64 then float32",
        "frames": frames,
        "encoder_frames": n,
        "tokens": tokens,
        "min_top2_margin": margin,
        "emit_fraction": len(tokens) / n,
    }
    print("golden: %d frames -> %d encoder frames, %d tokens, min margin %.4f" % (frames, n, len(tokens), margin))
    with open(os.path.join(OUT_DIR, "tiny_golden.json"), "w") as fh:
        json.dump(golden, fh, indent=1)
        fh.write("\n")
    audio_golden(enc, dec, join)


if __name__ == "__main__":
    main()
