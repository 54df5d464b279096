#!/usr/bin/env python3
"""Golden cases for tts/moss's text handling, computed by upstream's own code.

tts/moss ports the text side of OpenMOSS/MOSS-TTS-Nano's ONNX runtime (commit
42b46456f414b66e7e1df72bd88180322e243b40) to Go: the robust normalizer
(tts_robust_normalizer_single_script.normalize_tts_text, reached through
text_normalization_pipeline.prepare_tts_request_texts) and the chunking of
onnx_tts_runtime.OnnxTtsRuntime.split_voice_clone_text with its helpers. This
script imports those functions from an upstream checkout, runs them over the
inputs below and writes tts/moss/testdata/text_golden.json, which
TestTextGolden must match:

    git -C /work/.mirror/OpenMOSS+MOSS-TTS-Nano/repo archive 42b46456f414b66e7e1df72bd88180322e243b40 \\
        | (mkdir -p /tmp/moss-up && tar -x -C /tmp/moss-up)
    /usr/bin/python3 scripts/models/moss_text_golden.py /tmp/moss-up

(Debian: apt-get install -y python3-sentencepiece python3-numpy.) The
script checks that the files it imports are that commit's (git blob ids)
and runs the normalizer's own self-test first.

What stands in for what upstream needs but Debian lacks:

- onnxruntime (Python) and torchaudio are not packaged: empty modules stand
  in for them, and for torch, so that onnx_tts_runtime and ort_cpu_runtime
  import. The text functions touch none of them; they are called unmodified
  on an OnnxTtsRuntime made without __init__ (no model files) whose sp_model
  is the SentencePiece tokenizer given here: by default the tiny test
  model's (tts/moss/testdata/tiny/tokenizer.model), which is what the Go
  test counts tokens with. Chunk boundaries depend on the tokenizer, so
  they are the tiny model's, not the real model's.
- WeTextProcessing (tn) is not packaged: the requests are prepared with
  enable_wetext=False, which runs normalize_tts_text once (upstream's
  "robust" stage). With WeText on, upstream runs it before and after
  WeText's number/date expansion; in tts/moss, tts/normalize does that
  expansion and runs first, and cleanText is the pass after it.
"""

import argparse
import hashlib
import json
import os
import random
import sys
import types

COMMIT = "42b46456f414b66e7e1df72bd88180322e243b40"
BLOBS = {
    "onnx_tts_runtime.py": "c6b1d70cbcaa52cf51de138612ac2d0c6bec3435",
    "tts_robust_normalizer_single_script.py": "014b3575332cd9522b8beee11056f9e3718e0e0d",
    "text_normalization_pipeline.py": "f755d7fc47e296f46ffcfd0dc53075e70af6d812",
    "ort_cpu_runtime.py": "0b9e5d2c95b0e20d7044123b2e4515f1a76f96a6",
    "moss_tts_nano/defaults.py": "aaae6252c213ba1b6c1a5a6f604bc6c33472722f",
}

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
BUDGET = 75  # onnx_tts_runtime.py:607, voice_clone_max_text_tokens

EN_LONG = (
    "the weather service says a band of heavy rain will move in from the west tonight. "
    "expect thunderstorms after midnight, with strong winds along the coast and flooding in low areas. "
    "tomorrow morning should be cooler and mostly dry, although a few showers may linger in the hills. "
    "if you are driving, leave early and check the road reports before you go"
)
ZH_LONG = (
    "今天下午，城市北部将出现大范围的雷阵雨天气，请大家尽量减少外出。"
    "预计傍晚开始风力逐渐加大，沿海地区可能出现短时强降水，低洼路段容易积水，开车的朋友请注意安全；"
    "明天早上气温有所下降，天空以多云为主，山区仍有零星小雨，出门记得带伞"
)

CASES = [
    # (name, text, max_tokens)
    ("en-fragment", "Sure, I", BUDGET),
    ("zh-fragment", "好的，我", BUDGET),
    ("en-two-words-lower", "hello world", BUDGET),
    ("en-four-words", "that is quite right", BUDGET),
    ("en-five-words", "that is not quite right", BUDGET),
    ("zh-short", "今天天气很好", BUDGET),
    ("en-two-sentences-lower", "okay. let me check", BUDGET),
    ("zh-two-sentences", "好的。我看一下", BUDGET),
    ("en-long", EN_LONG, BUDGET),
    ("zh-long", ZH_LONG, BUDGET),
    ("en-long-small-budget", EN_LONG, 20),
    ("zh-long-small-budget", ZH_LONG, 12),
    ("en-no-punctuation", " ".join(["please turn on the light in the kitchen and play some music"] * 8), BUDGET),
    ("zh-no-punctuation", "请打开客厅的灯然后播放一首轻松的音乐" * 6, BUDGET),
    ("en-clauses", ", ".join(["we went to the market on the corner"] * 7) + ".", BUDGET),
    ("zh-clauses", "，".join(["我们明天早上去北京开会"] * 9) + "。", BUDGET),
    ("en-closers", 'He said "stop." Then (after a while) he left!\' and we waited.', 12),
    ("zh-closers", "他说：“不要走。”然后（过了很久）他离开了！「真的吗？」", 10),
    ("en-exclaim-question", "Really?! No way... That is wild!!! Are you sure??", 10),
    ("zh-exclaim-question", "真的假的？？？！！！太离谱了……你确定吗", BUDGET),
    ("en-markdown", "# Shopping list\n- eggs and milk\n- fresh bread\n1. call mom\n> remember the keys", BUDGET),
    ("zh-markdown", "## 今日安排\n1. 安装依赖\n2) 运行测试\n* 发布新版本", BUDGET),
    ("en-link", "See [the release notes](https://example.com/releases/v2) for details", BUDGET),
    ("en-brackets", "[S1]hello there. {whisper} keep it down [ quietly ]", BUDGET),
    ("zh-brackets", "【公告】今天维护〖重要〗『特别提醒』「不要外传」", BUDGET),
    ("en-arrows", "Request -> check => route <-> reply <= done", BUDGET),
    ("zh-arrows", "配置中心→推理编排⇒运行时执行", BUDGET),
    ("en-dashes", "Wait -- what was that --- a noise? It is fine - really.", BUDGET),
    ("zh-dashes", "重磅——现在开始——快来看", BUDGET),
    ("zh-title-standalone", "重磅。《新品发布》——现在开始！《哈姆雷特》", BUDGET),
    ("zh-title-embedded", "我喜欢《哈姆雷特》这本书", BUDGET),
    ("mixed-spacing", "这是Anthropic的npm包，今天update到v2.3.1了", BUDGET),
    ("mixed-spacing-2", "我 喜欢 Go 语言 和 Python 3 ，还有 C++ 。", BUDGET),
    ("en-protected", "Mail ops+tts@example.ai or ping @Fried_rice about r/golang and #release_notes in app.js.map", BUDGET),
    ("zh-protected", "关注@biscuit0228_并转发#thetime_tbs，详见https://x.com/abc_def，还有.env和index.d.ts", BUDGET),
    ("en-underscores", "rename snake_case_name to camel_case please", BUDGET),
    ("en-control-chars", "a\u200bb\u0007c\ufeff d\te\r\nnext line", BUDGET),
    ("en-unicode-spaces", "hello\u3000world\u00a0again\u2003and\u2028more", BUDGET),
    ("zh-unicode-spaces", "你好\u3000世界 ， 再见 。", BUDGET),
    ("en-ellipsis-quote", 'She whispered "it is raining..."', BUDGET),
    ("zh-ellipsis-quote", "他说“今天下雨了……”", BUDGET),
    ("en-semicolon", "first part; second part: third part", BUDGET),
    ("en-trailing-symbol", "the price is 5 dollars $", BUDGET),
    ("en-only-punctuation", "...", BUDGET),
    ("en-empty-after-clean", "\u200b\u200c", BUDGET),
    ("ko", "안녕하세요 world", BUDGET),
    ("ja", "こんにちは、世界。ありがとう", BUDGET),
    ("en-number-dot", "Version two point one. It is 3.5 times faster", 8),
]

# Pieces for the seeded random cases: whatever the normalizer and the
# splitter treat specially, mixed. Not "ß": at a chunk's start Python's
# str.upper makes it "SS", which the port does not.
PIECES = (
    ["我", "你好", "天气", "今天", "很", "好", "こんにちは", "안녕", "hello", "world", "Sure", "I", "the", "a",
     "snake_case", "app.js.map", ".env", "v2", "foo/bar-baz.py", "ops@example.com", "@user_1", "#tag", "r/go",
     "https://x.com/a_b", "[x]", "{y}", "【z】", "《书》", "“", "”", "‘", "’", "\"", "'", "(", ")", "（", "）",
     "「", "」", "『", "』", "〖", "〗", "〉", "->", "=>", "<-", "→", "--", "——", "-", "_", "...", "……", "…", "。。",
     "，，", "!!", "！！", "??", "？？", "?!", "！？", ".", ",", "!", "?", "。", "，", "、", "；", ";", "：", ":",
     "！", "？", "．", " ", " ", " ", "  ", "\t", "\n", "\u3000", "\u00a0", "\u200b", "\u2028", "\r\n", "#", "# ",
     "> ", "- ", "* ", "1. ", "2) ", "3", "42", "０", "٣", "²", "$", "%", "é", "Ω", "ω"]
)


def git_blob_id(path):
    with open(path, "rb") as f:
        data = f.read()
    return hashlib.sha1(b"blob %d\0" % len(data) + data).hexdigest()


def load_upstream(root):
    for rel, blob in BLOBS.items():
        got = git_blob_id(os.path.join(root, rel))
        if got != blob:
            sys.exit(f"{rel}: blob {got}, not the one at {COMMIT} ({blob}); pass a checkout of that commit")
    for name in ("onnxruntime", "torch", "torchaudio"):
        sys.modules[name] = types.ModuleType(name)
    sys.path.insert(0, root)
    import onnx_tts_runtime
    import text_normalization_pipeline
    import tts_robust_normalizer_single_script

    tts_robust_normalizer_single_script.run_tests(verbose=False)
    return onnx_tts_runtime, text_normalization_pipeline, tts_robust_normalizer_single_script


def random_cases(n, seed):
    r = random.Random(seed)
    out = []
    for i in range(n):
        text = "".join(r.choice(PIECES) for _ in range(r.randrange(1, 24)))
        out.append((f"random-{i:03d}", text, r.choice([6, 10, 16, BUDGET])))
    return out


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("upstream", help=f"a checkout (or git archive) of OpenMOSS/MOSS-TTS-Nano at {COMMIT}")
    ap.add_argument("--tokenizer", default=os.path.join(ROOT, "tts", "moss", "testdata", "tiny", "tokenizer.model"))
    ap.add_argument("--out", default=os.path.join(ROOT, "tts", "moss", "testdata", "text_golden.json"))
    ap.add_argument("--random", type=int, default=120, help="seeded random cases to add")
    ap.add_argument("--seed", type=int, default=35)
    args = ap.parse_args()

    import sentencepiece as spm

    rt, pipeline, norm = load_upstream(os.path.abspath(args.upstream))
    runtime = rt.OnnxTtsRuntime.__new__(rt.OnnxTtsRuntime)
    runtime.sp_model = spm.SentencePieceProcessor(model_file=args.tokenizer)

    upstream_cases = [(f"upstream-{name}", text, BUDGET) for name, text, _ in norm.TEST_CASES]
    cases = []
    for name, text, budget in CASES + upstream_cases + random_cases(args.random, args.seed):
        normalized = pipeline.prepare_tts_request_texts(
            text=text, enable_wetext=False, enable_normalize_tts_text=True, text_normalizer_manager=None
        )["text"]
        case = {"name": name, "text": text, "normalized": normalized, "max_tokens": budget}
        if normalized.strip():
            prepared = rt._prepare_text_for_sentence_chunking(normalized)
            case["prepared"] = prepared
            case["sentences"] = rt._split_text_by_punctuation(prepared, rt.SENTENCE_END_PUNCTUATION)
        chunks = runtime.split_voice_clone_text(normalized, max_tokens=budget)
        case["chunks"] = chunks
        case["pauses"] = [runtime.estimate_voice_clone_inter_chunk_pause_seconds(c) for c in chunks[:-1]]
        cases.append(case)

    budget_cases = []
    for text, budget in [(EN_LONG, 16), (ZH_LONG, 9), ("supercalifragilisticexpialidocious " * 4, 5)]:
        budget_cases.append(
            {"text": text, "max_tokens": budget, "pieces": runtime.split_text_by_token_budget(text, budget)}
        )

    out = {
        "upstream": f"OpenMOSS/MOSS-TTS-Nano@{COMMIT}",
        "tokenizer": os.path.relpath(os.path.abspath(args.tokenizer), ROOT),
        "cases": cases,
        "budget_splits": budget_cases,
    }
    with open(args.out, "w", encoding="utf-8") as f:
        json.dump(out, f, ensure_ascii=False, indent=1)
        f.write("\n")
    print(f"wrote {args.out}: {len(cases)} cases, {len(budget_cases)} budget splits")


if __name__ == "__main__":
    main()
