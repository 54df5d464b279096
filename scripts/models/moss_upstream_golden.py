#!/usr/bin/env python3
"""A whole-path golden for tts/moss from upstream's own runtime: OpenMOSS/MOSS-TTS-Nano's
OnnxTtsRuntime.synthesize, run unmodified on the tiny stand-in set, seed 1234.

Upstream is OpenMOSS/MOSS-TTS-Nano at commit 42b46456f414b66e7e1df72bd88180322e243b40. This
script imports onnx_tts_runtime (OnnxTtsRuntime.synthesize, synthesize_single_chunk, the text
preparation and splitting) and, through it, ort_cpu_runtime (OrtCpuRuntime: request rows,
generate_audio_frames with its seeded numpy generator, run_local_fixed_sampled_frame, and
CodecStreamingDecodeSession with _resolve_stream_decode_frame_budget), text_normalization_pipeline
and tts_robust_normalizer_single_script from a checkout given on the command line, after
checking that each file is that commit's (git blob id). It then synthesizes the texts in CASES
with tts/moss/testdata/tiny and tiny-codec and writes tts/moss/testdata/upstream_runtime_golden.json,
which TestUpstreamRuntimeGolden (tts/moss) must match: per request the prepared text, the
chunks, and per chunk the token ids, the prefill rows (a checksum and their text column), the
17 uniforms upstream fed the local-frame graph for every frame (the stop frame's too), the
frames, the codec calls and a summary of each chunk's audio, and the silence between chunks.

Each request runs twice, in the two ways upstream decodes audio:

- "streaming" (synthesize(streaming=True), onnx_tts_runtime.py:546-594): frames go to the codec
  as they come, in calls of _resolve_stream_decode_frame_budget's size (ort_cpu_runtime.py:245),
  which depends on how far the audio decoded so far runs ahead of the wall clock. The runtime
  modules' `time` is replaced by a clock that reads one second later at every read, so that
  decoding never gets the 0.20 s ahead that a second frame per call needs (:251): every call
  decodes one frame (TestUpstreamRuntimeGolden: codecBatch 1).
- "full_decode_fallback" (synthesize(streaming=False), the default, :536-544): upstream decodes a
  chunk's frames with the codec's full-decode graph, which the tiny set does not have, so
  decode_full_audio fails and decode_full_audio_safe (:500) falls back to the streaming
  session, 8 frames per call from a fresh state (codecBatch 8).

What stands in for what upstream needs but Debian 12 lacks, or the tiny set lacks:

- onnxruntime (no Python wheel here; python3-onnx 1.12 has no reference evaluator): a stub
  module whose InferenceSession(path) serves the graph at path with the torch module it was
  exported from (make_tiny_moss.build_modules, same seed; before anything runs, the modules are
  exported again and must give the committed .onnx files byte for byte). Input and output
  names, element types and static dims are read from the .onnx file (onnx.load); run(None,
  feeds) checks the feeds against them, as ONNX Runtime does, and returns numpy outputs in the
  graph's output order. Graphs upstream opens but the tiny set lacks (local_decoder, the codec's
  encode and decode_full) get sessions that fail when run (ONNX Runtime would fail to open
  them); only decode_full is ever run, in the fallback above.
- torchaudio: an empty module (only _load_reference_audio uses it; the voices are builtin).
  torch, numpy and sentencepiece are Debian's.
- WeTextProcessing: not packaged; requests are prepared with enable_wetext=False (normalize_tts_text
  once), as moss_text_golden.py does; the texts below hold no numbers or symbols for it to read.
- The tiny set's metadata carries what tts/moss reads, not everything upstream reads: the
  manifest lacks tts_config's token ids (they are in tts_browser_onnx_meta.json's model_config,
  where tts/moss reads them) and generation_defaults.do_sample, the TTS meta lacks
  model_config.audio_codebook_sizes and files.local_decoder, the codec meta lacks files.encode,
  files.decode_full and attention_caches[].offset_shape. upstream_view() copies the set into a
  temporary directory and adds those keys with the set's own values (ids copied from
  model_config, do_sample true, codebook sizes 16 x 1024, offset_shape [1], file names of graphs
  that are absent); the graphs and tokenizer.model are links to the committed files. The
  tokenizer is the manifest's (model_files.tokenizer_model: the tiny set's test model), loaded
  by OnnxTtsRuntime.__init__ itself.

Regenerate (from the repository root; Debian python3-torch, python3-numpy, python3-onnx,
python3-sentencepiece). The mirror's git archive can fail on LFS blobs, so extract just the
files needed:

    mkdir -p /tmp/moss-up/moss_tts_nano
    for f in onnx_tts_runtime.py ort_cpu_runtime.py text_normalization_pipeline.py \\
             tts_robust_normalizer_single_script.py moss_tts_nano/__init__.py moss_tts_nano/defaults.py; do
        git -C /work/.mirror/OpenMOSS+MOSS-TTS-Nano/repo show 42b46456f414b66e7e1df72bd88180322e243b40:$f > /tmp/moss-up/$f
    done
    /usr/bin/python3 scripts/models/moss_upstream_golden.py /tmp/moss-up

then run `go test ./tts/moss -run TestUpstreamRuntimeGolden`.
"""
import argparse
import hashlib
import json
import os
import sys
import tempfile
import types

import numpy as np
import onnx
import torch

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import make_tiny_moss as tiny  # noqa: E402

ROOT = os.path.dirname(os.path.dirname(HERE))
TD = os.path.join(ROOT, "tts", "moss", "testdata")
OUT = os.path.join(TD, "upstream_runtime_golden.json")

COMMIT = "42b46456f414b66e7e1df72bd88180322e243b40"
BLOBS = {
    "onnx_tts_runtime.py": "c6b1d70cbcaa52cf51de138612ac2d0c6bec3435",
    "ort_cpu_runtime.py": "0b9e5d2c95b0e20d7044123b2e4515f1a76f96a6",
    "text_normalization_pipeline.py": "f755d7fc47e296f46ffcfd0dc53075e70af6d812",
    "tts_robust_normalizer_single_script.py": "014b3575332cd9522b8beee11056f9e3718e0e0d",
    "moss_tts_nano/__init__.py": "a05eb9abb93a3c0a4e3f1ef478fe80d1793cee90",
    "moss_tts_nano/defaults.py": "aaae6252c213ba1b6c1a5a6f604bc6c33472722f",
}

SEED = 1234  # OrtCpuRuntime's own (ort_cpu_runtime.py:345), passed to synthesize as app_onnx.py does
HEAD = 4  # samples kept from the start of every frame's audio, per channel

MAX_NEW_FRAMES = 375  # the manifest's generation_defaults.max_new_frames
EN_LONG = ("The weather is nice today, so we will go for a long walk in the park after lunch. "
           "Tomorrow it will rain all day, so please take an umbrella with you when you go out.")
ZH_LONG = "今天天气很好，我们吃完午饭以后去公园散步，顺便买一点水果回家吧。明天会下一整天的雨，出门的时候记得带伞，路上注意安全。"
# (name, text, voice, max_new_frames). The long texts are two chunks with the tiny tokenizer at
# upstream's budget of 75 tokens (onnx_tts_runtime.py:607); the capped case ends every chunk at
# max_new_frames (ort_cpu_runtime.py:687) before the graph stops it, so no stop frame is drawn.
CASES = [
    ("en-one-chunk", "hello world", "Ava", MAX_NEW_FRAMES),
    ("en-two-chunks", EN_LONG, "Ava", MAX_NEW_FRAMES),
    ("zh-one-chunk", "今天天气很好", "Junhao", MAX_NEW_FRAMES),
    ("zh-two-chunks", ZH_LONG, "Junhao", MAX_NEW_FRAMES),
    ("en-two-chunks-capped", EN_LONG, "Ava", 5),
]
MODES = [("streaming", True, 1), ("full_decode_fallback", False, 8)]  # name, streaming, frames per codec call

ONNX_DTYPES = {onnx.TensorProto.FLOAT: np.float32, onnx.TensorProto.INT32: np.int32, onnx.TensorProto.INT64: np.int64}
ORT_TYPES = {np.float32: "tensor(float)", np.int32: "tensor(int32)", np.int64: "tensor(int64)"}


def git_blob_id(path):
    with open(path, "rb") as f:
        data = f.read()
    return hashlib.sha1(b"blob %d\0" % len(data) + data).hexdigest()


# ---- the onnxruntime stand-in ----

SERVED = {}  # real path of a committed graph -> (graph key, torch module)
EVENTS = []  # (graph key, what it was fed and gave), in the order upstream ran the graphs


class NodeArg:
    """onnxruntime.NodeArg: a graph input's or output's name, type and shape."""

    def __init__(self, vi):
        t = vi.type.tensor_type
        self.name = vi.name
        self.dtype = ONNX_DTYPES[t.elem_type]
        self.type = ORT_TYPES[self.dtype]
        self.shape = [d.dim_value if d.HasField("dim_value") else (d.dim_param or None) for d in t.shape.dim]


class InferenceSession:
    """onnxruntime.InferenceSession over the torch module the graph at path was exported from."""

    def __init__(self, path, sess_options=None, providers=None, **_):
        self.path = os.path.realpath(str(path))
        served = SERVED.get(self.path)
        self.key, self.module = served if served else (None, None)
        self.inputs, self.outputs = [], []
        if self.module is None:
            if os.path.exists(self.path):
                raise RuntimeError(f"stub onnxruntime: no torch module for {path}")
            return  # a graph the tiny set lacks: fails when run
        graph = onnx.load(self.path).graph
        inits = {i.name for i in graph.initializer}
        self.inputs = [NodeArg(vi) for vi in graph.input if vi.name not in inits]
        self.outputs = [NodeArg(vi) for vi in graph.output]

    def get_inputs(self):
        return list(self.inputs)

    def get_outputs(self):
        return list(self.outputs)

    def get_providers(self):
        return ["CPUExecutionProvider"]

    def run(self, output_names, input_feed, run_options=None):
        if self.module is None:
            EVENTS.append(("absent", {"path": self.path}))
            raise RuntimeError(f"stub onnxruntime: the tiny set has no graph {os.path.basename(self.path)}")
        names = [a.name for a in self.inputs]
        if set(input_feed) != set(names):
            raise ValueError(f"{self.key}: fed {sorted(input_feed)}, the graph takes {names}")
        args = []
        for a in self.inputs:
            x = np.asarray(input_feed[a.name])
            if x.dtype != a.dtype or x.ndim != len(a.shape):
                raise ValueError(f"{self.key}: {a.name} is {x.dtype}{list(x.shape)}, the graph takes {a.type}{a.shape}")
            for have, want in zip(x.shape, a.shape):
                if isinstance(want, int) and want != have:
                    raise ValueError(f"{self.key}: {a.name} has shape {list(x.shape)}, the graph takes {a.shape}")
            args.append(torch.from_numpy(np.array(x, copy=True)))
        with torch.no_grad():
            outs = self.module(*args)
        outs = [o.numpy() for o in outs]
        if len(outs) != len(self.outputs):
            raise ValueError(f"{self.key}: {len(outs)} outputs, the graph has {len(self.outputs)}")
        for o, a in zip(outs, self.outputs):
            if o.dtype != a.dtype or o.ndim != len(a.shape):
                raise ValueError(f"{self.key}: output {a.name} is {o.dtype}{list(o.shape)}, the graph gives {a.type}{a.shape}")
        EVENTS.append((self.key, {"feeds": {k: np.array(v, copy=True) for k, v in input_feed.items()}, "outs": outs}))
        if output_names is None:
            return outs
        by_name = dict(zip([a.name for a in self.outputs], outs))
        return [by_name[n] for n in output_names]


def stub_onnxruntime():
    ort = types.ModuleType("onnxruntime")
    ort.InferenceSession = InferenceSession
    ort.NodeArg = NodeArg
    ort.SessionOptions = lambda: types.SimpleNamespace()
    ort.GraphOptimizationLevel = types.SimpleNamespace(ORT_ENABLE_ALL=99)
    ort.get_available_providers = lambda: ["CPUExecutionProvider"]
    return ort


class SlowClock:
    """perf_counter for the runtime modules: one second later at every read."""

    def __init__(self):
        self.t = 0.0

    def perf_counter(self):
        self.t += 1.0
        return self.t


def load_upstream(root):
    for rel, blob in BLOBS.items():
        path = os.path.join(root, rel)
        if not os.path.exists(path):
            sys.exit(f"{path} is missing; extract it from {COMMIT} (see the docstring)")
        got = git_blob_id(path)
        if got != blob:
            sys.exit(f"{rel}: blob {got}, not the one at {COMMIT} ({blob}); pass a checkout of that commit")
    sys.modules["onnxruntime"] = stub_onnxruntime()
    sys.modules["torchaudio"] = types.ModuleType("torchaudio")
    sys.path.insert(0, root)
    import onnx_tts_runtime
    import ort_cpu_runtime

    for name, mod in (("onnx_tts_runtime", onnx_tts_runtime), ("ort_cpu_runtime", ort_cpu_runtime)):
        if not os.path.realpath(mod.__file__).startswith(os.path.realpath(root) + os.sep):
            sys.exit(f"{name} was imported from {mod.__file__}, not from {root}")
    return onnx_tts_runtime, ort_cpu_runtime


# ---- the tiny set, as upstream reads it ----

def serve_tiny():
    """Builds the tiny set's torch modules, checks they export to the committed graphs byte for
    byte, and registers them with the stub."""
    m = tiny.build_modules()
    committed = {"prefill": os.path.join(TD, "tiny", "moss_tts_prefill.onnx"),
                 "decode": os.path.join(TD, "tiny", "moss_tts_decode_step.onnx"),
                 "local": os.path.join(TD, "tiny", "moss_tts_local_fixed_sampled_frame.onnx"),
                 "codec": os.path.join(TD, "tiny-codec", "moss_audio_tokenizer_decode_step.onnx")}
    with tempfile.TemporaryDirectory() as tmp:
        tiny.export_graphs(m, tmp, tmp)
        for key, path in committed.items():
            with open(os.path.join(tmp, os.path.basename(path)), "rb") as f:
                again = f.read()
            with open(path, "rb") as f:
                if f.read() != again:
                    sys.exit(f"{path} is not what make_tiny_moss.build_modules exports; regenerate the tiny set")
    for key, path in committed.items():
        SERVED[os.path.realpath(path)] = (key, getattr(m, key))


def upstream_view(tmp):
    """A copy of the tiny set with the metadata keys upstream reads and the set lacks (see the
    docstring); returns the TTS directory and what was added."""
    tts, codec = os.path.join(tmp, "tiny"), os.path.join(tmp, "tiny-codec")
    os.makedirs(tts)
    os.makedirs(codec)
    for d, names in ((tts, ["moss_tts_prefill.onnx", "moss_tts_decode_step.onnx",
                            "moss_tts_local_fixed_sampled_frame.onnx", "tokenizer.model"]),
                     (codec, ["moss_audio_tokenizer_decode_step.onnx"])):
        for n in names:
            os.symlink(os.path.join(TD, os.path.basename(d), n), os.path.join(d, n))
    load = lambda *p: json.load(open(os.path.join(TD, *p), encoding="utf-8"))  # noqa: E731
    man = load("tiny", "browser_poc_manifest.json")
    meta = load("tiny", "tts_browser_onnx_meta.json")
    cmeta = load("tiny-codec", "codec_browser_onnx_meta.json")
    added = []

    def add(obj, where, key, value):
        if key not in obj:
            obj[key] = value
            added.append(f"{where}.{key}")

    mc = meta["model_config"]
    for key in ("audio_pad_token_id", "audio_start_token_id", "audio_end_token_id",
                "audio_user_slot_token_id", "audio_assistant_slot_token_id"):
        add(man["tts_config"], "browser_poc_manifest.json tts_config", key, mc[key])
    add(man["generation_defaults"], "browser_poc_manifest.json generation_defaults", "do_sample", True)
    add(mc, "tts_browser_onnx_meta.json model_config", "audio_codebook_sizes", [tiny.CB] * tiny.NVQ)
    add(meta["files"], "tts_browser_onnx_meta.json files", "local_decoder", "moss_tts_local_decoder.onnx")
    add(cmeta["files"], "codec_browser_onnx_meta.json files", "encode", "moss_audio_tokenizer_encode.onnx")
    add(cmeta["files"], "codec_browser_onnx_meta.json files", "decode_full", "moss_audio_tokenizer_decode_full.onnx")
    for spec in cmeta["streaming_decode"]["attention_caches"]:
        if "offset_shape" not in spec:
            spec["offset_shape"] = [1]
    added.append("codec_browser_onnx_meta.json streaming_decode.attention_caches[].offset_shape")
    for path, obj in ((os.path.join(tts, "browser_poc_manifest.json"), man),
                      (os.path.join(tts, "tts_browser_onnx_meta.json"), meta),
                      (os.path.join(codec, "codec_browser_onnx_meta.json"), cmeta)):
        with open(path, "w", encoding="utf-8") as f:
            json.dump(obj, f)
    return tts, added


# ---- one request through upstream's synthesize ----

def f32(xs):
    return [float(x) for x in np.asarray(xs, dtype=np.float32).reshape(-1)]


def split_events(events):
    """Upstream's graph runs for one request, cut into chunks at every prefill."""
    chunks = []
    for key, ev in events:
        if key == "prefill":
            chunks.append([])
        if not chunks:
            raise RuntimeError(f"{key} ran before any prefill")
        chunks[-1].append((key, ev))
    return chunks


def synthesize(rt, text, voice, max_frames, streaming, out_wav):
    EVENTS.clear()
    # max_new_frames is passed every time: synthesize keeps it in the manifest for later calls (:613)
    result = rt.synthesize(text=text, voice=voice, output_audio_path=out_wav, streaming=streaming,
                           max_new_frames=max_frames, enable_wetext=False, enable_normalize_tts_text=True,
                           seed=SEED)
    return result, split_events(list(EVENTS))


def chunk_record(cr, events, max_frames):
    """A chunk's generation: rows, uniforms, frames (the same whichever way it is decoded)."""
    prefill = events[0][1]
    ids = prefill["feeds"]["input_ids"]
    assert ids.dtype == np.int32 and ids.shape[0] == 1 and ids.shape[2] == tiny.ROW, ids.shape
    assert (prefill["feeds"]["attention_mask"] == 1).all()
    uniforms, pvl = [], []
    for key, ev in events:
        if key == "local":
            fd = ev["feeds"]
            uniforms.append(f32(fd["assistant_random_u"]) + f32(fd["audio_random_u"]))
        elif key == "decode":
            pvl.append(int(ev["feeds"]["past_valid_lengths"][0]))
    frames = [[int(x) for x in f] for f in cr["generated_frames"]]
    n = ids.shape[1]
    # past_valid_lengths counts the rows before the one stepped (ort_cpu_runtime.py:678, 809, 817)
    assert pvl == list(range(n, n + len(frames))), (pvl, n, len(frames))
    # one draw of 17 per frame, plus the frame that stopped the chunk (unless max_new_frames ended it)
    assert len(uniforms) == len(frames) + (0 if len(frames) == max_frames else 1), (len(uniforms), len(frames))
    return {
        "text": cr["text"],
        "token_ids": [int(x) for x in cr["text_token_ids"]],
        "prefill_rows": int(n),
        "prefill_input_ids_sha256": hashlib.sha256(ids.astype("<i4").tobytes()).hexdigest(),
        "prefill_text_column": [int(x) for x in ids[0, :, 0]],
        "first_past_valid_length": pvl[0] if pvl else None,
        "uniforms": uniforms,
        "frames": frames,
    }


def audio_record(cr, events, spf):
    """A chunk's decode: codec calls and a summary of its audio."""
    calls, pieces = [], []
    for key, ev in events:
        if key == "codec":
            codes = ev["feeds"]["audio_codes"]
            n = int(ev["outs"][1].reshape(-1)[0])
            calls.append(int(codes.shape[1]))
            pieces.append(ev["outs"][0][0, :, :n])
    wave = np.asarray(cr["waveform"], dtype=np.float32)  # [samples, channels]
    decoded = np.concatenate(pieces, axis=1).T if pieces else np.zeros((0, tiny.CHANNELS), np.float32)
    assert np.array_equal(wave, decoded), "the chunk's waveform is not its codec calls' audio"
    frames = len(cr["generated_frames"])
    assert sum(calls) == frames and wave.shape[0] == frames * spf, (calls, frames, wave.shape)
    return {
        "codec_frames_per_call": calls,
        "samples": int(wave.shape[0]),
        "rms": [float(np.sqrt(np.mean(wave[:, c].astype(np.float64) ** 2))) if len(wave) else 0.0
                for c in range(wave.shape[1])],
        "sum": [float(np.sum(wave[:, c].astype(np.float64))) for c in range(wave.shape[1])],
        # per frame: its first HEAD samples of channel 0, then of channel 1
        "frame_heads": [f32(wave[i * spf:i * spf + HEAD, 0]) + f32(wave[i * spf:i * spf + HEAD, 1])
                        for i in range(frames)],
        "tail": [f32(wave[-HEAD:, c]) for c in range(wave.shape[1])],
    }


def run_case(rt, name, text, voice, max_frames, tmp):
    spf = int(rt.codec_meta["codec_config"]["downsample_rate"])
    rate = int(rt.codec_meta["codec_config"]["sample_rate"])
    case, decodes = None, []
    for mode, streaming, per_call in MODES:
        result, evs = synthesize(rt, text, voice, max_frames, streaming, os.path.join(tmp, f"{name}-{mode}.wav"))
        assert int(rt.manifest["generation_defaults"]["max_new_frames"]) == max_frames
        crs = result["chunk_results"]
        chunk_events = [[(k, e) for k, e in ch if k != "absent"] for ch in evs]
        assert len(chunk_events) == len(crs) == len(result["text_chunks"]), (len(chunk_events), len(crs))
        chunks = [chunk_record(cr, ev, max_frames) for cr, ev in zip(crs, chunk_events)]
        absent = sum(1 for ch in evs for k, _ in ch if k == "absent")
        if streaming:
            assert absent == 0
        else:  # decode_full tried once per chunk with frames, then the fallback
            assert absent == sum(1 for c in chunks if c["frames"]), absent
        audio = [audio_record(cr, ev, spf) for cr, ev in zip(crs, chunk_events)]
        for a in audio:
            calls = a["codec_frames_per_call"]
            assert all(c == per_call for c in calls[:-1]) and (not calls or calls[-1] <= per_call), (mode, calls)
        pauses = [max(0, int(round(rate * rt.estimate_voice_clone_inter_chunk_pause_seconds(c)))) for c in result["text_chunks"][:-1]]
        total = sum(a["samples"] for a in audio) + sum(pauses)
        assert result["waveform"].shape == (total, tiny.CHANNELS), (result["waveform"].shape, total)
        this = {
            "name": name,
            "text": text,
            "voice": voice,
            "max_new_frames": max_frames,
            "prepared_text": result["prepared_texts"]["text"],
            "text_chunks": list(result["text_chunks"]),
            "pause_samples": pauses,
            "total_samples": total,
            "chunks": chunks,
        }
        if case is None:
            case = this
        elif this != case:
            raise AssertionError(f"{name}: {mode} generated differently from {MODES[0][0]}")
        decodes.append({"mode": mode, "streaming": streaming, "chunks": audio})
        print(f"{name} {mode}: chunks {[len(c['frames']) for c in chunks]} frames, "
              f"codec calls {[a['codec_frames_per_call'] for a in audio]}, {total} samples")
    case["decodes"] = decodes
    return case


def dump(obj, ind=0):
    """JSON with a list of numbers on one line."""
    pad = " " * ind
    if isinstance(obj, dict):
        items = [f'{pad} {json.dumps(k)}: {dump(v, ind + 1)}' for k, v in obj.items()]
        return "{\n" + ",\n".join(items) + "\n" + pad + "}"
    if isinstance(obj, list) and obj and not all(isinstance(x, (int, float, str, type(None))) for x in obj):
        return "[\n" + ",\n".join(pad + " " + dump(x, ind + 1) for x in obj) + "\n" + pad + "]"
    return json.dumps(obj, ensure_ascii=False)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("upstream", help=f"a checkout of OpenMOSS/MOSS-TTS-Nano at {COMMIT} (at least the files in BLOBS)")
    ap.add_argument("--out", default=OUT)
    args = ap.parse_args()

    rt_mod, ort_mod = load_upstream(os.path.abspath(args.upstream))
    serve_tiny()
    clock = SlowClock()
    rt_mod.time = ort_mod.time = types.SimpleNamespace(perf_counter=clock.perf_counter)
    with tempfile.TemporaryDirectory() as tmp:
        tts_dir, added = upstream_view(tmp)
        rt = rt_mod.OnnxTtsRuntime(model_dir=tts_dir, output_dir=os.path.join(tmp, "out"))
        assert set(rt.sessions) >= {"prefill", "decode", "local_fixed_sampled_frame", "codec_decode_step"}
        assert rt.manifest["generation_defaults"]["sample_mode"] == ort_mod.SAMPLE_MODE_FIXED
        assert int(rt.manifest["generation_defaults"]["max_new_frames"]) == MAX_NEW_FRAMES
        cases = [run_case(rt, *case, tmp) for case in CASES]
    golden = {
        "upstream": f"OpenMOSS/MOSS-TTS-Nano@{COMMIT} onnx_tts_runtime.OnnxTtsRuntime.synthesize "
                    f"(enable_wetext=False, seed={SEED}), ort_cpu_runtime.OrtCpuRuntime",
        "model": "tts/moss/testdata/tiny and tiny-codec, served by their torch modules (make_tiny_moss.build_modules)",
        "metadata_added_for_upstream": added,
        "regenerate": "/usr/bin/python3 scripts/models/moss_upstream_golden.py UPSTREAM_CHECKOUT",
        "seed": SEED,
        "samples_per_frame": int(rt.codec_meta["codec_config"]["downsample_rate"]),
        "frame_head_samples": HEAD,
        "modes": {m: {"streaming": s, "codec_frames_per_call": n} for m, s, n in MODES},
        "cases": cases,
    }
    with open(args.out, "w", encoding="utf-8") as f:
        f.write(dump(golden))
        f.write("\n")
    print(f"wrote {args.out}")


if __name__ == "__main__":
    main()
