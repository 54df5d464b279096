"""What every MOSS-TTS-Nano stand-in set shares, whatever its size, as tts/moss reads it.

Used by make_tiny_moss.py and make_fullsize_moss.py: the codec's signature and initial state, the
synthesizer's loop on the torch modules (for golden values and calibration), and the set's JSON
files: tts_browser_onnx_meta.json (file names, model config, graph signatures),
browser_poc_manifest.json (prompt templates, builtin voices, generation defaults) and
codec_browser_onnx_meta.json (codec config, streaming caches), plus a copy of the test
SentencePiece model as tokenizer.model.

The real model's sizes and ids are here; the generators size the rest their own way.
"""
import json
import os
import shutil
import types

import numpy as np
import torch

# The real model's sizes, ids and sampling defaults (scripts/models/FULLSIZE.md section 3), which
# every stand-in keeps; each generator sets its own widths and codec contexts.
ROW = 17  # a row: the text token and 16 audio codes
NVQ = 16
CB = 1024
AUDIO_PAD = 1024
VOCAB = 16384
HID = 768
LAYERS = 12
HEADS = 12
HDIM = 64
TEMPERATURE = 0.8
TOP_P = 0.95
TOP_K = 25
REP_PENALTY = 1.2
U_MAX = 0.99999994
IDS = dict(pad_token_id=3, im_start_token_id=4, im_end_token_id=5, audio_start_token_id=6,
           audio_end_token_id=7, audio_user_slot_token_id=8, audio_assistant_slot_token_id=9)
SAMPLE_RATE = 48000
CHANNELS = 2
CODEC_HEADS = 4
CODEC_HDIM = 64
KV_NAMES = [f"{kind}_{i}" for i in range(LAYERS) for kind in ("key", "value")]


def sample(logits, seen, u, dim):
    """The fixed-sampled-frame graph's sampling, on the last axis of logits (codes): repetition
    penalty where seen, temperature, top-k then top-p, and the code the uniform u picks from
    the kept probabilities; dim is the last axis' index, for the exported graph's gather."""
    lg = torch.where(seen, torch.where(logits > 0, logits / REP_PENALTY, logits * REP_PENALTY), logits)
    lg = lg / TEMPERATURE
    vals, idx = torch.topk(lg, TOP_K, dim=-1)  # sorted descending
    probs = torch.softmax(vals, dim=-1)
    cum = torch.cumsum(probs, dim=-1)
    keep = (cum - probs) < TOP_P
    probs = probs * keep.float()
    cum = torch.cumsum(probs, dim=-1)
    thresh = u.unsqueeze(-1) * cum.narrow(dim, TOP_K - 1, 1)
    pick = (cum <= thresh).long().sum(dim=-1, keepdim=True).clamp(max=TOP_K - 1)
    return torch.gather(idx, dim, pick).squeeze(-1)


def graph_names(codec_layers):
    """The set's file names and each graph's input and output names, as the published browser
    set has them."""
    kv_present = [f"present_{n}" for n in KV_NAMES]
    kv_past = [f"past_{n}" for n in KV_NAMES]
    codec_in, codec_out = codec_names(codec_layers)
    return types.SimpleNamespace(
        files={"prefill": "moss_tts_prefill.onnx", "decode_step": "moss_tts_decode_step.onnx",
               "local_fixed_sampled_frame": "moss_tts_local_fixed_sampled_frame.onnx"},
        codec_file="moss_audio_tokenizer_decode_step.onnx",
        kv_present=kv_present, kv_past=kv_past,
        prefill_in=["input_ids", "attention_mask"], prefill_out=["global_hidden"] + kv_present,
        decode_in=["input_ids", "past_valid_lengths"] + kv_past, decode_out=["global_hidden"] + kv_present,
        local_in=["global_hidden", "repetition_seen_mask", "assistant_random_u", "audio_random_u"],
        local_out=["should_continue", "frame_token_ids"],
        codec_in=codec_in, codec_out=codec_out)


def codec_names(layers):
    """The codec decode step's input and output names, with layers attention caches."""
    ins = ["audio_codes", "audio_code_lengths"] + [f"transformer_offset_{k}" for k in range(4)]
    outs = ["audio", "audio_lengths"] + [f"transformer_offset_out_{k}" for k in range(4)]
    for i in range(layers):
        ins += [f"attn_offset_{i}", f"attn_cached_keys_{i}", f"attn_cached_values_{i}", f"attn_cached_positions_{i}"]
        outs += [f"attn_offset_out_{i}", f"attn_cached_keys_out_{i}", f"attn_cached_values_out_{i}",
                 f"attn_cached_positions_out_{i}"]
    return ins, outs


def codec_initial_state(contexts):
    """The codec's state before the first frame, one attention cache per context: offsets 0,
    empty caches (positions -1)."""
    st = [torch.zeros(1, dtype=torch.int32) for _ in range(4)]
    for ctx in contexts:
        st += [torch.zeros(1, dtype=torch.int32), torch.zeros(1, CODEC_HEADS, ctx, CODEC_HDIM),
               torch.zeros(1, CODEC_HEADS, ctx, CODEC_HDIM), torch.full((1, ctx), -1, dtype=torch.int32)]
    return st


def prompt_rows(templates, voice, text_ids):
    """The prefill's rows for text_ids said in voice (a builtin voice's entry), as the
    synthesizer lays them out: the user prompt, the voice's audio codes, the text, then the
    assistant's prompt."""
    pad = [AUDIO_PAD] * (ROW - 1)
    rows = [[t] + pad for t in templates["user_prompt_prefix_token_ids"] + [IDS["audio_start_token_id"]]]
    rows += [[IDS["audio_user_slot_token_id"]] + fr for fr in voice["prompt_audio_codes"]]
    rows += [[t] + pad for t in [IDS["audio_end_token_id"]] + templates["user_prompt_after_reference_token_ids"]
             + text_ids + templates["assistant_prompt_prefix_token_ids"] + [IDS["audio_start_token_id"]]]
    return rows


def run_chunk(prefill, decode, local, rows, rng, max_frames=375):
    """The synthesizer's loop (docs/moss-tts-nano-onnx.md) on the torch modules: the frames of
    one chunk of text and the uniforms drawn for each."""
    ids = torch.tensor(np.array(rows, dtype=np.int32)).unsqueeze(0)
    out = prefill(ids, torch.ones(1, ids.shape[1], dtype=torch.int32))
    gh, past, length = out[0][:, -1, :], list(out[1:]), ids.shape[1]
    seen = torch.zeros(1, NVQ, CB, dtype=torch.int32)
    frames, uniforms = [], []
    for _ in range(max_frames):
        u = np.clip(rng.random(17), 0.0, U_MAX).astype(np.float32)
        uniforms.append([float(x) for x in u])
        cont, tok = local(gh, seen, torch.tensor(u[:1]), torch.tensor(u[1:]).unsqueeze(0))
        if int(cont[0, 0]) == 0:
            break
        codes = [int(x) for x in tok[0]]
        frames.append(codes)
        for ch, code in enumerate(codes):
            seen[0, ch, code] = 1
        row = torch.tensor([[[IDS["audio_assistant_slot_token_id"]] + codes]], dtype=torch.int32)
        out = decode(row, torch.tensor([length], dtype=torch.int32), *past)
        gh, past, length = out[0][:, 0, :], list(out[1:]), length + 1
    return frames, uniforms


def write_meta(tts_dir, codec_dir, codec_meta_rel, g, voice_frames, codec_contexts, downsample, opset):
    """Writes the set's JSON files; returns the prompt templates and builtin voices.

    g is graph_names' answer; voice_frames the length of each builtin voice's prompt;
    codec_contexts the codec's attention contexts, downsample its samples per frame and channel.
    """
    model_config = dict(n_vq=NVQ, row_width=ROW, hidden_size=HID, global_layers=LAYERS,
                        global_heads=HEADS, head_dim=HDIM, vocab_size=VOCAB,
                        audio_pad_token_id=AUDIO_PAD, **IDS)
    tts_meta = {
        "format_version": 1,
        "files": g.files,
        "model_config": model_config,
        "onnx": {
            "opset": opset,
            "prefill_input_names": g.prefill_in,
            "prefill_output_names": g.prefill_out,
            "decode_input_names": g.decode_in,
            "decode_output_names": g.decode_out,
            "local_fixed_sampled_frame_input_names": g.local_in,
            "local_fixed_sampled_frame_output_names": g.local_out,
            "fixed_sampled_frame_constants": {
                "audio_temperature": TEMPERATURE, "audio_top_p": TOP_P, "audio_top_k": TOP_K,
                "audio_repetition_penalty": REP_PENALTY,
            },
        },
    }
    prng = np.random.default_rng(7)
    templates = {
        "user_prompt_prefix_token_ids": [int(x) for x in prng.integers(10, VOCAB, 13)],
        "user_prompt_after_reference_token_ids": [int(x) for x in prng.integers(10, VOCAB, 56)],
        "assistant_prompt_prefix_token_ids": [int(x) for x in prng.integers(10, VOCAB, 6)],
    }
    voices = []
    for name in ("Junhao", "Ava"):
        codes = prng.integers(0, CB, (voice_frames, NVQ))
        voices.append({"voice": name, "display_name": name,
                       "prompt_audio_codes": [[int(x) for x in fr] for fr in codes]})
    manifest = {
        "format_version": 1,
        "model_files": {"tts_meta": "tts_browser_onnx_meta.json",
                        "codec_meta": codec_meta_rel,
                        "tokenizer_model": "tokenizer.model"},
        "tts_config": {"n_vq": NVQ, "row_width": ROW, "sample_rate": SAMPLE_RATE, "channels": CHANNELS},
        "prompt_templates": templates,
        "generation_defaults": {"max_new_frames": 375, "audio_temperature": TEMPERATURE,
                                "audio_top_p": TOP_P, "audio_top_k": TOP_K,
                                "audio_repetition_penalty": REP_PENALTY, "seed": 1234},
        "builtin_voices": voices,
        "text_samples": [],
    }
    caches = []
    for i, ctx in enumerate(codec_contexts):
        caches.append({
            "index": i, "layer_index": i, "context": ctx, "num_heads": CODEC_HEADS, "head_dim": CODEC_HDIM,
            "cache_shape": [1, CODEC_HEADS, ctx, CODEC_HDIM], "positions_shape": [1, ctx],
            "offset_input_name": f"attn_offset_{i}", "offset_output_name": f"attn_offset_out_{i}",
            "cached_keys_input_name": f"attn_cached_keys_{i}", "cached_keys_output_name": f"attn_cached_keys_out_{i}",
            "cached_values_input_name": f"attn_cached_values_{i}",
            "cached_values_output_name": f"attn_cached_values_out_{i}",
            "cached_positions_input_name": f"attn_cached_positions_{i}",
            "cached_positions_output_name": f"attn_cached_positions_out_{i}",
            "cache_dtype": "float32", "positions_dtype": "int32",
        })
    codec_meta = {
        "format_version": 1,
        "codec_config": {"sample_rate": SAMPLE_RATE, "channels": CHANNELS, "downsample_rate": downsample,
                         "num_quantizers": NVQ},
        "files": {"decode_step": g.codec_file},
        "onnx": {"opset": opset, "decode_step_input_names": g.codec_in,
                 "decode_step_output_names": g.codec_out},
        "streaming_decode": {
            "transformer_offsets": [{"index": k, "input_name": f"transformer_offset_{k}",
                                     "output_name": f"transformer_offset_out_{k}", "shape": [1], "dtype": "int32"}
                                    for k in range(4)],
            "attention_caches": caches,
        },
    }
    for path, obj in ((os.path.join(tts_dir, "tts_browser_onnx_meta.json"), tts_meta),
                      (os.path.join(tts_dir, "browser_poc_manifest.json"), manifest),
                      (os.path.join(codec_dir, "codec_browser_onnx_meta.json"), codec_meta)):
        with open(path, "w") as f:
            json.dump(obj, f, indent=1)
            f.write("\n")
    shutil.copyfile(tokenizer_model(), os.path.join(tts_dir, "tokenizer.model"))
    return templates, voices


def tokenizer_model():
    """The test SentencePiece model every stand-in set ships."""
    return os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "tts", "spm", "testdata",
                        "tokenizer.model")
