#!/usr/bin/env python3
"""A whole-path golden for turn/smartturn from upstream's own code: pipecat's
Smart Turn v3 preprocessing, run on the test signals, into the tiny model.

pipecat (pipecat-ai/pipecat at acead0507d7de44e216d24533964106ca1d1d044)
gives Smart Turn v3 its input in
src/pipecat/audio/turn/smart_turn/local_smart_turn_v3.py, _predict_endpoint
(lines 138-174): keep the last 8 s or left-pad to 8 s with zeros
(truncate_audio_to_last_n_seconds, 141-161), then its vendored, numpy-only
copy of the Whisper feature extractor, compute_whisper_log_mel_features(...,
do_normalize=True) (164; _whisper_features.py), run the ONNX model, and
decide `probability > 0.5` (174). pipecat-ai/smart-turn's inference.py does
the same through transformers' WhisperFeatureExtractor.

What cannot run here, and what stands in: the onnxruntime wheel and
transformers (neither is packaged by Debian 12; Debian's python3-onnx 1.12 has
no reference evaluator). _whisper_features.py is upstream's code itself,
loaded from the checkout given; truncate_audio_to_last_n_seconds is nested
inside _predict_endpoint and is written out below as it stands there; the
ONNX session is replaced by the torch module the tiny ONNX model is exported
from (make_tiny_smart_turn.py, same seed and calibration, so the same
weights).

Writes turn/smartturn/testdata/smart_turn_upstream_golden.json: per test
signal (whisper_features_golden.test_signal, 1 s, 5 s, 12 s) the largest
difference between pipecat's features and the committed feature golden, and
the tiny model's probability and decision on pipecat's features.

Regenerate (from the repository root; Debian python3-numpy, python3-torch,
python3-onnx; pipecat's file at that commit under PIPECAT_CHECKOUT, e.g. from
a bare mirror: mkdir -p /tmp/pipecat/src/pipecat/audio/turn/smart_turn; git
-C MIRROR show acead0507d7de44e216d24533964106ca1d1d044:src/pipecat/audio/turn/smart_turn/_whisper_features.py
> /tmp/pipecat/src/pipecat/audio/turn/smart_turn/_whisper_features.py):

    /usr/bin/python3 scripts/models/smart_turn_upstream_golden.py /tmp/pipecat

then run `go test ./turn/smartturn`.
"""
import gzip
import hashlib
import importlib.util
import json
import os
import sys

import numpy as np
import torch

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import make_tiny_smart_turn as tiny  # noqa: E402
import whisper_features_golden as wf  # noqa: E402

PIPECAT_COMMIT = "acead0507d7de44e216d24533964106ca1d1d044"
FEATURES_PATH = "src/pipecat/audio/turn/smart_turn/_whisper_features.py"
FEATURES_BLOB = "061accaa378ca0b4334b8dbe98fd89f0af56c3d1"  # git blob id at that commit
OUT = os.path.join(HERE, "..", "..", "turn", "smartturn", "testdata", "smart_turn_upstream_golden.json")


def git_blob_id(data):
    return hashlib.sha1(b"blob %d\0" % len(data) + data).hexdigest()


def load_upstream(checkout):
    path = os.path.join(checkout, FEATURES_PATH)
    with open(path, "rb") as fh:
        blob = git_blob_id(fh.read())
    if blob != FEATURES_BLOB:
        sys.exit("%s is not pipecat %s's (blob %s, expected %s)" % (path, PIPECAT_COMMIT, blob, FEATURES_BLOB))
    spec = importlib.util.spec_from_file_location("pipecat_whisper_features", path)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def truncate_audio_to_last_n_seconds(audio_array, n_seconds=8, sample_rate=16000):
    """local_smart_turn_v3.py:141-152, as it stands."""
    max_samples = n_seconds * sample_rate
    if len(audio_array) > max_samples:
        return audio_array[-max_samples:]
    elif len(audio_array) < max_samples:
        padding = max_samples - len(audio_array)
        return np.pad(audio_array, (padding, 0), mode="constant", constant_values=0)
    return audio_array


def committed_features(name):
    with gzip.open(os.path.join(wf.OUT_DIR, "whisper_features_%s.f32.gz" % name), "rb") as fh:
        return np.frombuffer(fh.read(), dtype="<f4").reshape(wf.N_MELS, wf.N_FRAMES)


def main():
    if len(sys.argv) != 2:
        sys.exit("usage: smart_turn_upstream_golden.py PIPECAT_CHECKOUT")
    upstream = load_upstream(sys.argv[1])
    model = tiny.calibrated_model(tiny.golden_inputs())
    golden = {
        "upstream": "pipecat-ai/pipecat %s local_smart_turn_v3.py _predict_endpoint, %s" % (PIPECAT_COMMIT, FEATURES_PATH),
        "model": "smart_turn_tiny.onnx (its torch module)",
        "regenerate": "/usr/bin/python3 scripts/models/smart_turn_upstream_golden.py PIPECAT_CHECKOUT",
        "cases": [],
    }
    for name, seconds in wf.CASES:
        pcm = wf.test_signal(seconds).astype(np.float32)
        feats = upstream.compute_whisper_log_mel_features(truncate_audio_to_last_n_seconds(pcm), do_normalize=True)
        feats = np.asarray(feats, dtype=np.float32)
        assert feats.shape == (wf.N_MELS, wf.N_FRAMES), feats.shape
        diff = float(np.abs(feats - committed_features(name)).max())
        with torch.no_grad():
            p = float(model(torch.from_numpy(feats).reshape(1, wf.N_MELS, wf.N_FRAMES))[0, 0])
        golden["cases"].append({"name": name, "seconds": seconds, "max_abs_vs_feature_golden": diff,
                                "probability": p, "prediction": 1 if p > 0.5 else 0})
        print("%s: |pipecat - feature golden| <= %.2g, p = %.6f" % (name, diff, p))
    with open(OUT, "w") as fh:
        json.dump(golden, fh, indent=1)
        fh.write("\n")


if __name__ == "__main__":
    main()
