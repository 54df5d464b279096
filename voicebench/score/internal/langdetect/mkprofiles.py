#!/usr/bin/python3
"""Writes profiles.json.gz from the langdetect Python package's data.

Rerun (from this directory) after `apt-get install python3-langdetect`:
    /usr/bin/python3 mkprofiles.py

The output holds, for the 55 languages langdetect ships (Apache License 2.0,
from Nakatani Shuyo's language-detection), the n-gram counts of each profile
and the character tables of its normalizer (messages.properties).
"""
import gzip
import json
import os

import langdetect
from langdetect.utils.ngram import NGram

root = os.path.join(os.path.dirname(langdetect.__file__), "profiles")
langs, n_words, freq = [], [], {}
for name in sorted(os.listdir(root)):
    with open(os.path.join(root, name), encoding="utf-8") as f:
        p = json.load(f)
    idx = len(langs)
    langs.append(p["name"])
    n_words.append(p["n_words"])
    for gram, count in p["freq"].items():
        freq.setdefault(gram, []).append([idx, count])

out = {
    "langs": langs,
    "n_words": n_words,
    "freq": freq,
    "latin1_excluded": NGram.LATIN1_EXCLUDED,
    "cjk_classes": NGram.CJK_CLASS,
    "vi_alphabet": NGram.TO_NORMALIZE_VI_CHARS,
    "vi_marks": NGram.DMARK_CLASS,
    "vi_normalized": NGram.NORMALIZED_VI_CHARS,
}
with gzip.GzipFile("profiles.json.gz", "wb", mtime=0) as f:
    f.write(json.dumps(out, ensure_ascii=False, sort_keys=True, separators=(",", ":")).encode())
