#!/usr/bin/env python3
"""Golden fixtures for package asr/fbank (Kaldi 80-bin log-mel filterbank).

The reference is torchaudio.compliance.kaldi.fbank (Debian's
python3-torchaudio 0.13.1), called with the X-ASR options spelled out in
FBANK_OPTS below: torchaudio's defaults except dither=0, snip_edges=False,
num_mel_bins=80 and high_freq=-400 (energy_floor=0 is also passed; it only
matters with use_energy, which is off). These are the options X-ASR's own
streaming script gives kaldifeat (Gilgamesh-J/X-ASR
X-ASR-zh-en/zipformer/onnx_pretrained-streaming.py:410-417: dither 0,
snip_edges False, 16 kHz, 80 bins, high_freq -400; kaldifeat's low_freq
default is 20), what lhotse's FbankConfig trains with, and sherpa-onnx's
FeatureExtractorConfig defaults (k2-fsa/sherpa-onnx
sherpa-onnx/csrc/features.h:28-38). The case speech_nyquist keeps the
filterbank up to Nyquist (high_freq=0), so a second range is pinned too. Samples are floats in [-1, 1], not int16-scaled,
as sherpa-onnx (normalize_samples=true) and icefall/lhotse feed them.

Cases (all 16 kHz mono):

  speech       ~2.2 s of espeak-ng speech ("Turn on the kitchen lights,
               please.", voice en-us, 22050 Hz) resampled to 16 kHz with
               torchaudio.functional.resample and quantized to int16; the
               features are computed from the int16 samples / 32768, exactly
               what the Go test feeds (it reads the same .wav).
  speech_400   400 samples (torchaudio's minimum length) of the speech at
               sample offset 12000: every frame touches a reflected edge.
  speech_1234  1234 samples of the speech at offset 20000 (n % 160 != 0).
  speech_nyquist  the speech with high_freq=0 (Nyquist) instead of -400.
  silence      1 s of digital silence (all zeros): every bin is log(FLT_EPSILON).
  noise        0.5 s of white Gaussian noise, std 0.003 (about -50 dBFS),
               torch.Generator seed 20240611, stored as float32 (not quantized).

Files written to asr/fbank/testdata/ (gzip with mtime 0, so a rerun with the
same espeak-ng/torch versions is byte-identical):

  speech_16k.wav          int16 PCM, mono, 16 kHz (the speech* inputs)
  noise_16k.f32.gz        float32 little-endian samples (the noise input)
  fbank_<case>.f32.gz     reference features, float32 little-endian,
                          frames x 80, row-major (out[t*80+m])
  fbank_<case>_f64.f32.gz the same computed by torchaudio in float64 (input
                          samples, arithmetic and mel banks; stored as
                          float32): the Go code computes in float64, so it
                          matches these to ~1e-6, while the float32
                          reference differs from both by up to ~4e-4 in
                          low-energy bins (float32 rounding of the mel
                          weights and the FFT)
  fbank_golden.json       index: options, per case the options it overrides, the input (file, offset,
                          samples), frame count, input checksums, feature stats

Regenerate (from the repository root; needs Debian python3-torchaudio,
python3-numpy and espeak-ng):

    apt-get install -y python3-torchaudio python3-numpy espeak-ng
    /usr/bin/python3 scripts/models/fbank_golden.py

then run `go test ./asr/fbank`. A different espeak-ng version produces a
different speech waveform; that is fine, the test reads the stored input.
"""
import gzip
import json
import os
import subprocess
import tempfile
import wave

import numpy as np
import torch
import torchaudio
import torchaudio.compliance.kaldi as kaldi

SR = 16000
NUM_BINS = 80
SPEECH_TEXT = "Turn on the kitchen lights, please."
NOISE_SEED = 20240611
NOISE_STD = 0.003

FBANK_OPTS = dict(
    sample_frequency=16000.0,
    frame_length=25.0,
    frame_shift=10.0,
    window_type="povey",
    dither=0.0,
    snip_edges=False,
    preemphasis_coefficient=0.97,
    remove_dc_offset=True,
    round_to_power_of_two=True,
    num_mel_bins=NUM_BINS,
    low_freq=20.0,
    high_freq=-400.0,
    use_energy=False,
    use_log_fbank=True,
    use_power=True,
    energy_floor=0.0,
    raw_energy=True,
    htk_compat=False,
    subtract_mean=False,
    vtln_warp=1.0,
)

OUT_DIR = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "asr", "fbank", "testdata")


def read_wav_int16(path):
    with wave.open(path, "rb") as w:
        assert w.getnchannels() == 1 and w.getsampwidth() == 2, (w.getnchannels(), w.getsampwidth())
        rate = w.getframerate()
        data = np.frombuffer(w.readframes(w.getnframes()), dtype="<i2")
    return data, rate


def write_wav_int16(path, pcm, rate):
    with wave.open(path, "wb") as w:
        w.setnchannels(1)
        w.setsampwidth(2)
        w.setframerate(rate)
        w.writeframes(pcm.astype("<i2").tobytes())


def speech_int16():
    """espeak-ng at its native 22050 Hz -> 16 kHz float -> int16."""
    with tempfile.TemporaryDirectory() as tmp:
        path = os.path.join(tmp, "speech.wav")
        subprocess.run(["espeak-ng", "-v", "en-us", "-w", path, SPEECH_TEXT], check=True)
        raw, rate = read_wav_int16(path)
    assert rate == 22050, rate
    x = torch.from_numpy(raw.astype(np.float32) / 32768.0).unsqueeze(0)
    y = torchaudio.functional.resample(x, rate, SR)[0].numpy().astype(np.float64)
    return np.clip(np.round(y * 32768.0), -32768, 32767).astype(np.int16)


def noise_f32():
    g = torch.Generator().manual_seed(NOISE_SEED)
    return (torch.randn(SR // 2, generator=g, dtype=torch.float32) * NOISE_STD).numpy()


def fbank(pcm_f32, dtype=torch.float32, **overrides):
    """kaldi.fbank of the float32 samples; dtype float64 runs the whole
    computation, mel banks included (they follow torch's default dtype), in
    double precision. overrides replace FBANK_OPTS entries."""
    prev = torch.get_default_dtype()
    torch.set_default_dtype(dtype)
    try:
        x = torch.from_numpy(np.ascontiguousarray(pcm_f32, dtype=np.float32)).to(dtype).unsqueeze(0)
        with torch.no_grad():
            f = kaldi.fbank(x, **dict(FBANK_OPTS, **overrides))
    finally:
        torch.set_default_dtype(prev)
    assert f.dtype == dtype, f.dtype
    f = f.numpy().astype(np.float32)
    n = len(pcm_f32)
    assert f.shape == ((n + 80) // 160, NUM_BINS), (f.shape, n)
    return f


def write_gz(name, data):
    with open(os.path.join(OUT_DIR, name), "wb") as fh:
        fh.write(gzip.compress(data, compresslevel=9, mtime=0))


def espeak_version():
    out = subprocess.run(["espeak-ng", "--version"], check=True, capture_output=True, text=True).stdout
    return out.strip().split(" Data at")[0].strip()


def main():
    os.makedirs(OUT_DIR, exist_ok=True)
    speech = speech_int16()
    write_wav_int16(os.path.join(OUT_DIR, "speech_16k.wav"), speech, SR)
    speech_f32 = speech.astype(np.float32) / np.float32(32768.0)
    noise = noise_f32()
    write_gz("noise_16k.f32.gz", noise.astype("<f4").tobytes())

    cases = [
        # name, input file, offset, samples, pcm, options over FBANK_OPTS
        ("speech", "speech_16k.wav", 0, len(speech_f32), speech_f32, {}),
        ("speech_400", "speech_16k.wav", 12000, 400, speech_f32[12000:12400], {}),
        ("speech_1234", "speech_16k.wav", 20000, 1234, speech_f32[20000:21234], {}),
        ("speech_nyquist", "speech_16k.wav", 0, len(speech_f32), speech_f32, {"high_freq": 0.0}),
        ("silence", "", 0, SR, np.zeros(SR, dtype=np.float32), {}),
        ("noise", "noise_16k.f32.gz", 0, len(noise), noise, {}),
    ]
    index = {
        "reference": "torchaudio %s torchaudio.compliance.kaldi.fbank; torch %s; %s"
        % (torchaudio.__version__, torch.__version__, espeak_version()),
        "regenerate": "/usr/bin/python3 scripts/models/fbank_golden.py",
        "options": FBANK_OPTS,
        "layout": "features (file: torchaudio in float32, file_f64: in float64): float32 little-endian, frames x 80, out[t*80+m], gzip; "
        "speech_16k.wav: int16 mono 16 kHz, samples used as int16/32768; "
        "noise_16k.f32.gz: float32 little-endian samples; silence: zeros, no file",
        "cases": [],
    }
    for name, infile, offset, samples, pcm, overrides in cases:
        assert len(pcm) == samples
        feats = fbank(pcm, **overrides)
        fname = "fbank_%s.f32.gz" % name
        write_gz(fname, feats.astype("<f4").tobytes())
        feats64 = fbank(pcm, torch.float64, **overrides)
        fname64 = "fbank_%s_f64.f32.gz" % name
        write_gz(fname64, feats64.astype("<f4").tobytes())
        index["cases"].append({
            "name": name,
            "input": infile,
            "offset": offset,
            "samples": samples,
            "options": overrides,
            "frames": int(feats.shape[0]),
            "input_sum": float(np.sum(pcm, dtype=np.float64)),
            "input_sum_squares": float(np.sum(pcm.astype(np.float64) ** 2)),
            "file": fname,
            "file_f64": fname64,
            "max_abs_f32_vs_f64": float(np.abs(feats - feats64).max()),
            "min": float(feats.min()),
            "max": float(feats.max()),
            "mean": float(feats.mean()),
        })
        print("%-12s %6d samples -> %4d frames, min %.4f max %.4f mean %.4f, |f32 - f64| <= %.2g -> %s"
              % (name, samples, feats.shape[0], feats.min(), feats.max(), feats.mean(),
                 np.abs(feats - feats64).max(), fname))
    with open(os.path.join(OUT_DIR, "fbank_golden.json"), "w") as fh:
        json.dump(index, fh, indent=1)
        fh.write("\n")


if __name__ == "__main__":
    main()
