#!/usr/bin/env python3
"""Golden fixtures for turn.WhisperFeatures (Smart Turn v3 input features).

An independent, deliberately plain numpy implementation of the recipe in
shared/MODELS.md ("Smart Turn v3.x"): float64 throughout, np.fft.rfft, the
Slaney mel filter bank written out. It writes, for 1 s, 5 s and 12 s test
signals, the full 80 x 800 feature matrix (mel-major, float32
little-endian, gzip-compressed with mtime 0 so reruns are byte-identical):

    turn/smartturn/testdata/whisper_features_{1s,5s,12s}.f32.gz
    turn/smartturn/testdata/whisper_features_golden.json   (index + input checksums)

The inputs are not stored: test_signal() below is a chirp plus noise from a
32-bit LCG, and turn/smartturn/internal/golden regenerates the same samples (keep
the two in step; the JSON's input checksums catch a drift).

Regenerate (from the repository root; needs only numpy, e.g. Debian
python3-numpy):

    /usr/bin/python3 scripts/models/whisper_features_golden.py

then run `go test ./turn/...`.
"""
import gzip
import json
import math
import os

import numpy as np

SR = 16000
N_SAMPLES = 8 * SR  # 128,000: the last 8 s
N_FFT = 400
HOP = 160
N_MELS = 80
N_FRAMES = 800

CASES = [("1s", 1.0), ("5s", 5.0), ("12s", 12.0)]

OUT_DIR = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "turn", "smartturn", "testdata")


def test_signal(seconds):
    """A deterministic test input, float32.

    x[i] = float32(env(t) * 0.5*sin(phase(t)) + 0.05*u[i]) with t = i/16000,
    a linear chirp 100 Hz -> 4000 Hz over the whole signal
    (phase = 2*pi*(f0*t + (f1-f0)*t^2/(2*T))), env(t) = 1 except exactly 0
    between 40% and 50% of the signal (a gap), and u[i] uniform noise in
    [-0.5, 0.5) from the LCG s = (1664525*s + 1013904223) mod 2^32, seed
    12345, u = s/2^32 - 0.5 (s updated before use).
    """
    n = int(round(seconds * SR))
    T = n / SR
    f0, f1 = 100.0, 4000.0
    s = 12345
    u = np.empty(n, dtype=np.float64)
    for i in range(n):
        s = (1664525 * s + 1013904223) & 0xFFFFFFFF
        u[i] = s / 4294967296.0 - 0.5
    i = np.arange(n, dtype=np.float64)
    t = i / SR
    phase = 2.0 * math.pi * (f0 * t + (f1 - f0) * t * t / (2.0 * T))
    env = np.ones(n)
    env[(i >= 0.4 * n) & (i < 0.5 * n)] = 0.0
    x = env * 0.5 * np.sin(phase) + 0.05 * u
    return x.astype(np.float32)


def hz_to_mel_slaney(f):
    f = np.asarray(f, dtype=np.float64)
    f_sp = 200.0 / 3.0
    min_log_hz = 1000.0
    min_log_mel = min_log_hz / f_sp
    logstep = math.log(6.4) / 27.0
    return np.where(f >= min_log_hz, min_log_mel + np.log(np.maximum(f, 1e-10) / min_log_hz) / logstep, f / f_sp)


def mel_to_hz_slaney(m):
    m = np.asarray(m, dtype=np.float64)
    f_sp = 200.0 / 3.0
    min_log_hz = 1000.0
    min_log_mel = min_log_hz / f_sp
    logstep = math.log(6.4) / 27.0
    return np.where(m >= min_log_mel, min_log_hz * np.exp(logstep * (m - min_log_mel)), f_sp * m)


def mel_filters():
    """80 x 201 triangular Slaney filters, 0-8000 Hz, Slaney area norm."""
    n_bins = N_FFT // 2 + 1
    fft_freqs = np.arange(n_bins) * (SR / N_FFT)  # 0, 40, ..., 8000 Hz
    mels = np.linspace(hz_to_mel_slaney(0.0), hz_to_mel_slaney(SR / 2), N_MELS + 2)
    f = mel_to_hz_slaney(mels)  # 82 filter edge frequencies
    fb = np.zeros((N_MELS, n_bins))
    for m in range(N_MELS):
        lo, mid, hi = f[m], f[m + 1], f[m + 2]
        for k in range(n_bins):
            up = (fft_freqs[k] - lo) / (mid - lo)
            down = (hi - fft_freqs[k]) / (hi - mid)
            fb[m, k] = max(0.0, min(up, down))
        fb[m] *= 2.0 / (hi - lo)
    return fb


def features(pcm):
    x = np.asarray(pcm, dtype=np.float64)
    # 1. last 8 s, left-padded with zeros
    x = x[-N_SAMPLES:]
    x = np.concatenate([np.zeros(N_SAMPLES - len(x)), x])
    # 2. normalize the whole padded buffer
    x = (x - x.mean()) / np.sqrt(x.var() + 1e-7)
    # 3. centered STFT: reflect-pad n_fft/2 each side
    x = np.pad(x, N_FFT // 2, mode="reflect")
    # 4. periodic Hann, power spectrum
    n = np.arange(N_FFT)
    window = 0.5 - 0.5 * np.cos(2.0 * math.pi * n / N_FFT)
    n_frames = 1 + (len(x) - N_FFT) // HOP  # 801
    frames = np.stack([x[i * HOP : i * HOP + N_FFT] for i in range(n_frames)])
    power = np.abs(np.fft.rfft(frames * window, axis=1)) ** 2  # [801, 201]
    # 5. mel
    mel = mel_filters() @ power.T  # [80, 801]
    # 6. log10, drop the last frame
    logmel = np.log10(np.maximum(mel, 1e-10))[:, :-1]
    # 7. dynamic range and scaling
    logmel = np.maximum(logmel, logmel.max() - 8.0)
    return (logmel + 4.0) / 4.0


def main():
    os.makedirs(OUT_DIR, exist_ok=True)
    index = {"recipe": "shared/MODELS.md Smart Turn v3.x; regenerate with scripts/models/whisper_features_golden.py",
             "layout": "float32 little-endian, 80 x 800, out[m*800+t], gzip", "cases": []}
    for name, seconds in CASES:
        pcm = test_signal(seconds)
        feats = features(pcm)
        assert feats.shape == (N_MELS, N_FRAMES), feats.shape
        fname = "whisper_features_%s.f32.gz" % name
        data = feats.astype("<f4").tobytes()
        with open(os.path.join(OUT_DIR, fname), "wb") as fh:
            fh.write(gzip.compress(data, compresslevel=9, mtime=0))
        index["cases"].append({
            "name": name,
            "seconds": seconds,
            "samples": int(len(pcm)),
            "input_sum": float(np.sum(pcm, dtype=np.float64)),
            "input_sum_squares": float(np.sum(pcm.astype(np.float64) ** 2)),
            "file": fname,
            "min": float(feats.min()),
            "max": float(feats.max()),
            "mean": float(feats.mean()),
        })
        print("%s: %d samples, features min %.4f max %.4f mean %.4f -> %s"
              % (name, len(pcm), feats.min(), feats.max(), feats.mean(), fname))
    with open(os.path.join(OUT_DIR, "whisper_features_golden.json"), "w") as fh:
        json.dump(index, fh, indent=1)
        fh.write("\n")


if __name__ == "__main__":
    main()
