#!/usr/bin/env python3
"""Full-size random-weight stand-in for MNN-Pocket-0.3B (INT4), in MNN's own LLM format.

Writes OUT/mnn-pocket-0.3b-int4/, where OUT is the first positional argument, else
$XDG_CACHE_HOME/voice-agent/standins (~/.cache/voice-agent/standins): config.json,
llm_config.json, llm.mnn, llm.mnn.weight, tokenizer.txt -- the file set of a real MNN LLM export
with tied embeddings (no embeddings_bf16.bin; llm_config.json carries `tie_embeddings`, which
points into llm.mnn.weight). Used as `voice-agent ... --llm-model-dir OUT/mnn-pocket-0.3b-int4`.
Not the model cache: there the manifest's pinned sizes would make a stand-in look like a damaged
download of the real model.

The numbers are scripts/models/FULLSIZE.md section 4 (MNN-Pocket report + the GGUF metadata of
the published model): a Qwen3 decoder, 28 layers, hidden 896, 14 heads sharing 2 KV heads, head
dim 64, RMSNorm on q and k, SwiGLU MLP 2560, vocabulary 65,536, tied embedding / LM head, RoPE
theta 1e6, RMS eps 1e-6, max positions 40960. 302,830,976 parameters. Exported W4 asymmetric,
blocks of 64, fp16 scales (llmexport's defaults: --quant_bit 4 --quant_block 64 --scale_bit 16,
lm_head the same as the other linears): about 170.5 MB of weights.

How: MNN's own exporter, transformers/llm/export/llmexport.py from the pinned MNN source, run
in this process on a Qwen3 model built here (Hugging Face module and parameter names, so
llmexport's ModelMapper `qwen3` entry applies unchanged), then MNN's MNNConvert built from the
same source (flags as llmexport passes them: --transformerFuse --saveExternalData
--allowCustomOp, the C4 fusions, weight rebuild in Python with its 4-bit quantizer). llmexport
imports `transformers` (and tqdm, yaspin, packaging, safetensors), none of which is installed
here; a minimal stand-in of exactly the API it calls is put into sys.modules for the export
(see install_shims) -- it only hands llmexport this model, its config and its tokenizer.
Afterwards MNNConvert's random `mnn_uuid` in llm.mnn is replaced by one derived from the
weights (pin_uuid), so two runs give byte-identical files; export_args.json and llm.mnn.json,
by-products a package does not ship, are dropped; config.json gets greedy decoding with a
repetition penalty (WORDS_SAMPLER).

With --unfused the export leaves out the C4 fusions (llmexport --disable_transformer_c4, "for
older runtimes"): each layer's q/k/v and gate/up projections stay separate convolutions instead
of one FusedLinear op each. The weights and the file's size are the same. MNN's CPU backend
keeps only Metal's and OpenCL's FusedLinear whole; elsewhere it unpacks the op into its
convolutions each time a module is resized, reading their weights from the file again, so the
prefill and the decode module each hold a copy of them (about 98 MB here) and every new prefill
length rebuilds them. Unfused, those convolutions are made once at load and shared by both
modules (docs/performance.md has what each costs).

Weights: normal(0, 0.02) from a fixed seed, one generator stream in a fixed order, so every
layer's weights differ; norms 1. The 26 special tokens' embedding rows (tied: also their LM-head
rows) are scaled by 0.1 so that greedy decoding practically never emits a stop token and
generation runs to the token budget, as with shared/data/mnn-tiny-llm.

Tokenizer (tokenizer.txt, MNN's format, type 1 = "tiktoken": longest match in a trie over
base64 byte strings, ids in line order), synthesized: ids 0-255 the 256 bytes in GPT-2/Qwen
byte order (so any input encodes), then common English words and letter n-grams with and
without a leading space up to id 65509, then Qwen3's 26 added tokens at 65510-65535 in Qwen3's
order: <|endoftext|> 65510 (= the report's pad id), <|im_start|> 65511, <|im_end|> 65512 (= the
report's eos id), then <|object_ref_start|> ... </think>. Stop ids 65512 and 65510 (Qwen3's
generation_config: im_end and endoftext). Chat template: plain ChatML, as the tiny fixture.

Run (from the repository root; Debian python3 with torch, onnx, numpy: /usr/bin/python3). The
wrapper builds MNNConvert (and llm_bench) once from the pinned tarball -- 49 minutes here on 2
cores shared with other builds; cached outside the clone under ~/.cache/voice-agent/mnn/ -- and
runs this script with it:

    scripts/models/make_fullsize_mnn.sh [OUT]
    # or, with tools built elsewhere:
    /usr/bin/python3 scripts/models/make_fullsize_mnn.py --mnn-src MNN_SOURCE_DIR \\
        --mnnconvert PATH/TO/MNNConvert [OUT]
    bin/voice-agent bench llm --llm-model-dir ~/.cache/voice-agent/standins/mnn-pocket-0.3b-int4

Takes about 20 s (2 cores) and 2.3 GB of memory (the fp32 model is 1.2 GB). Writes 171,954,914
bytes (llm.mnn.weight 170,724,594: FULLSIZE.md's 170.5 MB; the report's package is 173 MB).
"""
import argparse
import importlib.metadata
import json
import os
import re
import shutil
import sys
import tempfile
import time
import types
import uuid

import numpy as np
import torch
from torch import nn

SEED = 20250304
INIT_STD = 0.02
SPECIAL_ROW_SCALE = 0.1

# MNN-Pocket-0.3B (scripts/models/FULLSIZE.md section 4).
HIDDEN = 896
LAYERS = 28
HEADS = 14
KV_HEADS = 2
HEAD_DIM = 64
INTERMEDIATE = 2560
VOCAB = 65536
ROPE_THETA = 1000000.0
RMS_EPS = 1e-6
MAX_POSITIONS = 40960
QUANT_BIT = 4
QUANT_BLOCK = 64

MODEL_DIR = "mnn-pocket-0.3b-int4"
FILES = ("config.json", "llm_config.json", "llm.mnn", "llm.mnn.weight", "tokenizer.txt")

# Deterministic runs, greedy like the tiny fixture's config_greedy.json, but
# with MNN's repetition penalty before the choice (its "penalty" sampler,
# transformers/llm/engine/src/sampler.cpp configPenalty and stepPenalty,
# penalty_sampler greedy): plain greedy decoding of random weights falls
# into one token said over and over without a space ("saasaasaa..."), a
# single 48-token word that the chunker never cuts, so a reply's first
# audio waited for the whole reply. Penalized, the stand-in writes
# word-shaped text ("saa ibeesj xwj etsn ..."), its first two words after
# a few tokens, as a real model's reply. scripts/bench-scale sets the same
# on a stand-in made before.
WORDS_SAMPLER = {"sampler_type": "penalty", "penalty_sampler": "greedy", "repetition_penalty": 1.3}

# Qwen3's added tokens (151643..151668 there), in its order, at the end of the 64K vocabulary.
SPECIALS = [
    "<|endoftext|>", "<|im_start|>", "<|im_end|>", "<|object_ref_start|>", "<|object_ref_end|>",
    "<|box_start|>", "<|box_end|>", "<|quad_start|>", "<|quad_end|>", "<|vision_start|>",
    "<|vision_end|>", "<|vision_pad|>", "<|image_pad|>", "<|video_pad|>", "<tool_call>",
    "</tool_call>", "<|fim_prefix|>", "<|fim_middle|>", "<|fim_suffix|>", "<|fim_pad|>",
    "<|repo_name|>", "<|file_sep|>", "<tool_response>", "</tool_response>", "<think>", "</think>",
]
FIRST_SPECIAL = VOCAB - len(SPECIALS)  # 65510
ENDOFTEXT, IM_START, IM_END = FIRST_SPECIAL, FIRST_SPECIAL + 1, FIRST_SPECIAL + 2
EOS, PAD = IM_END, ENDOFTEXT  # 65512, 65510: the report's ids
CHAT_TEMPLATE = (
    "{% for message in messages %}{{ '<|im_start|>' + message['role'] + '\\n' + message['content']"
    " + '<|im_end|>' + '\\n' }}{% endfor %}{% if add_generation_prompt %}"
    "{{ '<|im_start|>assistant\\n' }}{% endif %}")

WORDS = """the of and to a in is that it for was on are as with his they be at one have this from
or had by hot word but what some we can out other were all there when up use your how said an
each she which do their time if will way about many then them write would like so these her long
make thing see him two has look more day could go come did number sound no most people my over
know water than call first who may down side been now find any new work part take get place made
live where after back little only round man year came show every good me give our under name
very through just form sentence great think say help low line differ turn cause much mean before
move right boy old too same tell does set three want air well also play small end put home read
hand port large spell add even land here must big high such follow act why ask men change went
light kind off need house picture try us again animal point mother world near build self earth
father head stand own page should country found answer school grow study still learn plant cover
food sun four between state keep eye never last let thought city tree cross farm hard start might
story saw far sea draw left late run don't while press close night real life few north open seem
together next white children begin got walk example ease paper group always music those both mark
often letter until mile river car feet care second book carry took science eat room friend began
idea fish mountain stop once base hear horse cut sure watch color face wood main enough plain girl
usual young ready above ever red list though feel talk bird soon body dog family direct pose leave
song measure door product black short numeral class wind question happen complete ship area half
rock order fire south problem piece told knew pass since top whole king space heard best hour
better true during hundred five remember step early hold west ground interest reach fast verb sing
listen six table travel less morning ten simple several vowel toward war lay against pattern slow
center love person money serve appear road map rain rule govern pull cold notice voice unit power
town fine certain fly fall lead cry dark machine note wait plan figure star box noun field rest
correct able pound done beauty drive stood contain front teach week final gave green oh quick
develop ocean warm free minute strong special mind behind clear tail produce fact street inch
multiply nothing course stay wheel full force blue object decide surface deep moon island foot
system busy test record boat common gold possible plane stead dry wonder laugh thousand ago ran
check game shape equate miss brought heat snow tire bring yes distant fill east paint language
among hello weather today tomorrow please thanks assistant user system voice turn timer alarm
remind reminder music play pause stop volume light lights kitchen bedroom minutes seconds hours
weather forecast temperature degrees set cancel""".split()
SUFFIXES = ["ing", "ed", "er", "ly", "tion", "ment", "ness", "able", "est", "s", "es", "'s",
            "'t", "'re", "'ve", "'ll", "'d", "'m"]
WHITESPACE = ["\n\n", "\n\n\n", "  ", "   ", "    ", "        ", "\t\t", " \n", ".\n", ",\n",
              ". ", ", ", "? ", "! ", ": ", "; ", "...", "--", " -", " (", ") ", " \"", "\" ",
              "\r\n"]


def standins_dir():
    """Where stand-ins go by default: beside the MNN builds, out of the model cache."""
    base = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    return os.path.join(base, "voice-agent", "standins")


# ---------------------------------------------------------------------------------------------
# Vocabulary


def byte_order():
    """The 256 bytes in GPT-2's bytes_to_unicode order (Qwen's token ids 0..255)."""
    bs = (list(range(ord("!"), ord("~") + 1)) + list(range(ord("\xa1"), ord("\xac") + 1))
          + list(range(ord("\xae"), ord("\xff") + 1)))
    return bs + [b for b in range(256) if b not in bs]


def build_vocab():
    """65,536 distinct byte strings: bytes, words, n-grams, then Qwen3's specials."""
    vocab, seen = [], set()

    def add(tok):
        if isinstance(tok, str):
            tok = tok.encode("utf-8")
        if tok not in seen and len(vocab) < FIRST_SPECIAL:
            seen.add(tok)
            vocab.append(tok)

    for b in byte_order():
        add(bytes([b]))
    for w in WHITESPACE:
        add(w)
    for w in WORDS:
        for v in (" " + w, w, " " + w.capitalize(), w.capitalize()):
            add(v)
    for s in SUFFIXES:
        add(s)
    letters = "abcdefghijklmnopqrstuvwxyz"
    for a in letters:
        for b in letters:
            s = a + b
            for v in (" " + s, s, " " + s.capitalize(), s.capitalize()):
                add(v)
    for d in range(100):
        add("%02d" % d)
    for a in letters:
        for b in letters:
            for c in letters:
                s = a + b + c
                for v in (" " + s, s):
                    add(v)
    for a in letters:
        for b in letters:
            for c in letters:
                add(" " + (a + b + c).capitalize())
    frequent = "etaoinshrd"
    for a in frequent:
        for b in frequent:
            for c in frequent:
                for d in frequent:
                    add(" " + a + b + c + d)
    assert len(vocab) == FIRST_SPECIAL, len(vocab)
    vocab += [s.encode("utf-8") for s in SPECIALS]
    assert len(vocab) == VOCAB and len(set(vocab)) == VOCAB
    return vocab


class StandinTokenizer:
    """What llmexport's LlmTokenizer reads from a Hugging Face tokenizer. Without tokenizer.json,
    tokenizer.model, merges.txt or `mergeable_ranks` it takes its generic branch and writes
    tokenizer.txt as type 1 (TIKTOKEN), ids in order, each token from its characters' byte
    values -- so the tokens are given here as latin-1 strings of their bytes."""

    chat_template = CHAT_TEMPLATE
    bos_token = None
    eos_token = "<|im_end|>"
    eos_token_id = EOS
    pad_token = "<|endoftext|>"
    pad_token_id = PAD
    generation_config = None
    all_special_ids = []  # the added tokens below are the special list

    def __init__(self, vocab):
        self.vocab = vocab
        self.by_id = [t.decode("latin-1") for t in vocab]
        self.ids = {t: i for i, t in enumerate(self.by_id)}
        self.added_tokens_decoder = {FIRST_SPECIAL + i: s for i, s in enumerate(SPECIALS)}

    @property
    def vocab_size(self):
        return len(self.vocab)

    def get_vocab(self):
        return dict(self.ids)

    def encode(self, text, add_special_tokens=False, **kwargs):
        for i, s in self.added_tokens_decoder.items():
            if text == s:
                return [i]
        data, ids, i = text.encode("utf-8"), [], 0
        while i < len(data):  # longest match, as MNN's Tiktoken::encode
            for n in range(min(8, len(data) - i), 0, -1):
                t = data[i:i + n].decode("latin-1")
                if t in self.ids:
                    ids.append(self.ids[t])
                    i += n
                    break
        return ids

    def decode(self, ids, **kwargs):
        if isinstance(ids, int):
            ids = [ids]
        return b"".join(self.vocab[int(i)] for i in ids).decode("utf-8", "replace")

    def get_chat_template(self, chat_template=None, tools=None):
        return chat_template or self.chat_template


# ---------------------------------------------------------------------------------------------
# The model, with Hugging Face Qwen3's module and parameter names


class Qwen3RMSNorm(nn.Module):
    def __init__(self, dim, eps=RMS_EPS):
        super().__init__()
        self.weight = nn.Parameter(torch.ones(dim))
        self.variance_epsilon = eps

    def forward(self, hidden_states):
        input_dtype = hidden_states.dtype
        hidden_states = hidden_states.to(torch.float32)
        variance = hidden_states.pow(2).mean(-1, keepdim=True)
        hidden_states = hidden_states * torch.rsqrt(variance + self.variance_epsilon)
        return self.weight * hidden_states.to(input_dtype)


class Qwen3Attention(nn.Module):
    """Only the parts llmexport maps (it brings its own attention forward)."""

    def __init__(self, layer_idx):
        super().__init__()
        self.layer_idx = layer_idx
        self.head_dim = HEAD_DIM
        self.scaling = HEAD_DIM ** -0.5
        self.q_proj = nn.Linear(HIDDEN, HEADS * HEAD_DIM, bias=False)
        self.k_proj = nn.Linear(HIDDEN, KV_HEADS * HEAD_DIM, bias=False)
        self.v_proj = nn.Linear(HIDDEN, KV_HEADS * HEAD_DIM, bias=False)
        self.o_proj = nn.Linear(HEADS * HEAD_DIM, HIDDEN, bias=False)
        self.q_norm = Qwen3RMSNorm(HEAD_DIM)
        self.k_norm = Qwen3RMSNorm(HEAD_DIM)


class Qwen3MLP(nn.Module):
    def __init__(self):
        super().__init__()
        self.gate_proj = nn.Linear(HIDDEN, INTERMEDIATE, bias=False)
        self.up_proj = nn.Linear(HIDDEN, INTERMEDIATE, bias=False)
        self.down_proj = nn.Linear(INTERMEDIATE, HIDDEN, bias=False)
        self.act_fn = nn.SiLU()

    def forward(self, x):
        return self.down_proj(self.act_fn(self.gate_proj(x)) * self.up_proj(x))


class Qwen3DecoderLayer(nn.Module):
    def __init__(self, layer_idx):
        super().__init__()
        self.self_attn = Qwen3Attention(layer_idx)
        self.mlp = Qwen3MLP()
        self.input_layernorm = Qwen3RMSNorm(HIDDEN)
        self.post_attention_layernorm = Qwen3RMSNorm(HIDDEN)


class Qwen3Model(nn.Module):
    def __init__(self):
        super().__init__()
        self.embed_tokens = nn.Embedding(VOCAB, HIDDEN, padding_idx=PAD)
        self.layers = nn.ModuleList(Qwen3DecoderLayer(i) for i in range(LAYERS))
        self.norm = Qwen3RMSNorm(HIDDEN)


class Qwen3ForCausalLM(nn.Module):
    def __init__(self, config):
        super().__init__()
        self.config = config
        self.model = Qwen3Model()
        self.lm_head = nn.Linear(HIDDEN, VOCAB, bias=False)
        self.lm_head.weight = self.model.embed_tokens.weight  # tie_word_embeddings

    @torch.no_grad()
    def init_weights(self, seed):
        g = torch.Generator().manual_seed(seed)
        for name, p in self.named_parameters():  # tied weight listed once
            if name.endswith("norm.weight"):
                p.fill_(1.0)
            else:
                p.copy_(torch.randn(p.shape, generator=g) * INIT_STD)
        self.model.embed_tokens.weight[FIRST_SPECIAL:] *= SPECIAL_ROW_SCALE
        return self


def hf_config():
    """config.json of a Hugging Face Qwen3 checkpoint with these sizes (FULLSIZE.md section 4)."""
    return {
        "architectures": ["Qwen3ForCausalLM"], "model_type": "qwen3",
        "hidden_size": HIDDEN, "intermediate_size": INTERMEDIATE, "num_hidden_layers": LAYERS,
        "num_attention_heads": HEADS, "num_key_value_heads": KV_HEADS, "head_dim": HEAD_DIM,
        "vocab_size": VOCAB, "tie_word_embeddings": True, "rope_theta": ROPE_THETA,
        "rope_scaling": None, "rms_norm_eps": RMS_EPS, "max_position_embeddings": MAX_POSITIONS,
        "hidden_act": "silu", "attention_bias": False, "attention_dropout": 0.0,
        "use_sliding_window": False, "sliding_window": None, "max_window_layers": LAYERS,
        "bos_token_id": ENDOFTEXT, "eos_token_id": EOS, "pad_token_id": PAD,
        "torch_dtype": "float32",
    }


# ---------------------------------------------------------------------------------------------
# The part of `transformers` (and of tqdm, yaspin, packaging, safetensors) llmexport touches


def install_shims(model, tokenizer):
    def module(name, **attrs):
        m = types.ModuleType(name)
        m.__dict__.update(attrs)
        sys.modules[name] = m
        return m

    class PretrainedConfig:
        model_type = ""

        def __init__(self, **kwargs):
            for k, v in kwargs.items():
                setattr(self, k, v)

        @classmethod
        def from_pretrained(cls, path, **kwargs):
            with open(os.path.join(path, "config.json")) as f:
                return cls(**json.load(f))

        def to_dict(self):
            return dict(self.__dict__)

    class PreTrainedModel(nn.Module):
        def __init__(self, config, *args, **kwargs):
            super().__init__()
            self.config = config

    class PreTrainedTokenizer:
        def __init__(self, **kwargs):
            pass

    class AutoConfig:
        @staticmethod
        def from_pretrained(path, **kwargs):
            return PretrainedConfig.from_pretrained(path)

        @staticmethod
        def register(*args, **kwargs):
            pass

    class AutoModelForCausalLM:
        @staticmethod
        def from_pretrained(path, **kwargs):
            return model

    class AutoTokenizer:
        @staticmethod
        def from_pretrained(path, **kwargs):
            return tokenizer

    version = "4.51.0"  # Qwen3's first release; < 4.56 so llmexport passes torch_dtype
    tf = module("transformers", __version__=version, PretrainedConfig=PretrainedConfig,
                PreTrainedModel=PreTrainedModel, PreTrainedTokenizer=PreTrainedTokenizer,
                AutoConfig=AutoConfig, AutoModel=AutoModelForCausalLM,
                AutoModelForCausalLM=AutoModelForCausalLM, AutoTokenizer=AutoTokenizer)
    tf.activations = module("transformers.activations", ACT2FN={"silu": nn.SiLU(), "swish": nn.SiLU()})
    tf.configuration_utils = module("transformers.configuration_utils", PretrainedConfig=PretrainedConfig)

    real_version = importlib.metadata.version
    importlib.metadata.version = lambda name: version if name == "transformers" else real_version(name)

    class Version:
        def __init__(self, s):
            self.key = tuple(int(x) for x in re.findall(r"\d+", s.split("+")[0])[:3])

        def __lt__(self, o): return self.key < o.key
        def __le__(self, o): return self.key <= o.key
        def __gt__(self, o): return self.key > o.key
        def __ge__(self, o): return self.key >= o.key
        def __eq__(self, o): return self.key == o.key

    packaging = module("packaging")
    packaging.version = module("packaging.version", Version=Version)

    class tqdm:
        def __init__(self, iterable=None, *args, **kwargs):
            self.iterable = iterable

        def __iter__(self): return iter(self.iterable)
        def __enter__(self): return self
        def __exit__(self, *a): return False
        def update(self, *a): pass
        def close(self): pass
        def set_description(self, *a, **k): pass

    module("tqdm", tqdm=tqdm)

    class Spinner:
        def __init__(self, text="", **kwargs):
            self.text = text

        def __enter__(self): return self
        def __exit__(self, *a): return False
        def hide(self): pass
        def show(self): pass
        def ok(self, mark=""): print("  " + re.sub(r"\x1b\[[0-9;]*m", "", self.text), flush=True)
        def fail(self, mark=""): print("  FAILED " + self.text, flush=True)

    module("yaspin", yaspin=Spinner)

    def safe_open(*args, **kwargs):
        raise RuntimeError("safetensors is not available (stand-in export)")

    module("safetensors", safe_open=safe_open)


# ---------------------------------------------------------------------------------------------


def export(model, tokenizer, mnn_src, mnnconvert, work, fused):
    hf_dir = os.path.join(work, "hf")
    dst = os.path.join(work, "mnn")
    os.makedirs(hf_dir)
    with open(os.path.join(hf_dir, "config.json"), "w") as f:
        json.dump(hf_config(), f, indent=2)
    with open(os.path.join(hf_dir, "generation_config.json"), "w") as f:
        json.dump({"eos_token_id": [EOS, ENDOFTEXT], "pad_token_id": PAD}, f, indent=2)

    install_shims(model, tokenizer)
    sys.path.insert(0, os.path.join(mnn_src, "transformers", "llm", "export"))
    import llmexport  # noqa: E402  (MNN's exporter, from the pinned source)

    cwd = os.getcwd()
    os.chdir(work)  # MNNConverter appends MNNConvert's output to ./.export.log
    try:
        llmexport.export(hf_dir, export="mnn", dst_path=dst, mnnconvert=mnnconvert,
                         quant_bit=QUANT_BIT, quant_block=QUANT_BLOCK, transformer_c4=fused)
    except SystemExit as e:  # llmexport's spinner calls exit(1) after printing the traceback
        log = os.path.join(work, ".export.log")
        if os.path.exists(log):
            sys.stderr.write(open(log).read()[-4000:])
        raise SystemExit("llmexport failed (%s)" % e)
    finally:
        os.chdir(cwd)
    return dst


UUID_RE = re.compile(rb"[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}")


def pin_uuid(dst):
    """MNNConvert stamps llm.mnn with a random `mnn_uuid` (AddUUID.cpp, uuid4 from
    std::random_device), the only thing that differs between two runs. Replace it in place (same
    length, so the flatbuffer stays valid) with a version-4 UUID made from the weights' sha256:
    the same model gives the same bytes."""
    import hashlib
    path = os.path.join(dst, "llm.mnn")
    data = bytearray(open(path, "rb").read())
    found = list(UUID_RE.finditer(data))
    if len(found) != 1:
        raise SystemExit("llm.mnn: expected one mnn_uuid, found %d" % len(found))
    h = hashlib.sha256()
    with open(os.path.join(dst, "llm.mnn.weight"), "rb") as f:
        for chunk in iter(lambda: f.read(1 << 20), b""):
            h.update(chunk)
    pinned = str(uuid.UUID(bytes=h.digest()[:16], version=4)).encode()
    data[found[0].start():found[0].end()] = pinned
    with open(path, "wb") as f:
        f.write(data)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("out", nargs="?", default=None, help="output root (default: %s)" % standins_dir())
    ap.add_argument("--mnn-src", required=True, help="unpacked pinned MNN source (holds transformers/llm/export)")
    ap.add_argument("--mnnconvert", required=True, help="MNNConvert built from that source")
    ap.add_argument("--unfused", action="store_true",
                    help="export without the C4 fusions (llmexport --disable_transformer_c4): "
                    "the q/k/v and gate/up projections stay separate convolutions")
    args = ap.parse_args()
    if not os.access(args.mnnconvert, os.X_OK):
        raise SystemExit("no MNNConvert at %s (scripts/models/make_fullsize_mnn.sh builds it)" % args.mnnconvert)
    out_root = args.out or standins_dir()
    out_dir = os.path.join(out_root, MODEL_DIR)
    os.makedirs(out_root, exist_ok=True)
    torch.set_num_threads(max(1, os.cpu_count() or 1))

    t0 = time.time()
    vocab = build_vocab()
    tokenizer = StandinTokenizer(vocab)
    model = Qwen3ForCausalLM(None).init_weights(SEED).eval()
    params = sum(p.numel() for p in model.parameters())
    print("parameters: %d (%.2f M), built in %.1f s" % (params, params / 1e6, time.time() - t0), flush=True)

    with tempfile.TemporaryDirectory(prefix="mnn-pocket-", dir=out_root) as work:
        t1 = time.time()
        dst = export(model, tokenizer, os.path.abspath(args.mnn_src), os.path.abspath(args.mnnconvert), work,
                     fused=not args.unfused)
        print("llmexport + MNNConvert: %.1f s" % (time.time() - t1), flush=True)

        llm_config = json.load(open(os.path.join(dst, "llm_config.json")))
        if "tie_embeddings" not in llm_config:
            raise SystemExit("export did not tie the embeddings (llm_config.json has no tie_embeddings)")
        if os.path.exists(os.path.join(dst, "embeddings_bf16.bin")):
            raise SystemExit("export wrote embeddings_bf16.bin although the embeddings are tied")
        config = json.load(open(os.path.join(dst, "config.json")))
        if config.get("tokenizer_file") != "tokenizer.txt":
            raise SystemExit("unexpected tokenizer file %r" % config.get("tokenizer_file"))
        pin_uuid(dst)
        config.update(WORDS_SAMPLER)
        with open(os.path.join(dst, "config.json"), "w") as f:
            json.dump(config, f, ensure_ascii=False, indent=4)
        # The exporter's by-products that an MNN package does not ship.
        for extra in os.listdir(dst):
            if extra not in FILES:
                p = os.path.join(dst, extra)
                shutil.rmtree(p) if os.path.isdir(p) else os.remove(p)
        if os.path.exists(out_dir):
            shutil.rmtree(out_dir)
        os.rename(dst, out_dir)

    total = 0
    for name in FILES:
        size = os.path.getsize(os.path.join(out_dir, name))
        total += size
        print("  %-16s %12d bytes  %7.1f MB" % (name, size, size / 1e6))
    print("package: %d bytes, %.1f MB (%.1f MiB); report: 173 MB, FULLSIZE.md weights ~170.5 MB"
          % (total, total / 1e6, total / 2**20))
    print("tie_embeddings: %s" % json.dumps(llm_config["tie_embeddings"]))
    print("wrote %s in %.1f s" % (out_dir, time.time() - t0))


if __name__ == "__main__":
    main()
