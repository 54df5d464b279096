#!/usr/bin/env python3
"""Generate the golden fixtures for tts/spm (pure-Go SentencePiece unigram).

Run with the Debian interpreter (needs `apt-get install -y python3-sentencepiece`):

    /usr/bin/python3 scripts/models/make_spm_golden.py

It trains two small unigram models on a deterministic, generated mixed
Chinese/English corpus (identity normalizer, character_coverage 1.0):

  tts/spm/testdata/tokenizer.model       byte_fallback=true (the main model)
  tts/spm/testdata/tokenizer_nobf.model  byte_fallback=false (exercises <unk>)

and writes, for each, golden.json / golden_nobf.json with the ids, pieces and
decoded text for ~100 test lines, plus decode-only cases for hand-made id
sequences (control ids, <unk>, stray/invalid byte pieces).
"""

import json
import os
import random
import tempfile

import sentencepiece as spm

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
OUT = os.path.join(ROOT, "tts", "spm", "testdata")

ZH_SUBJ = ["我", "你", "他", "她", "我们", "你们", "他们", "老师", "学生", "医生", "朋友", "妈妈", "爸爸", "小明", "小红"]
ZH_VERB = ["喜欢", "想要", "正在", "已经", "明天会", "昨天去了", "经常", "不想", "可以", "需要"]
ZH_OBJ = ["吃饭", "学习中文", "看电影", "打电话", "去北京", "去上海", "听音乐", "写代码", "买东西", "喝咖啡",
          "做作业", "看新闻", "开会", "休息一下", "回家", "跑步", "读书", "玩游戏", "坐地铁", "做饭"]
ZH_TAIL = ["。", "！", "？", "，好吗？", "，对吧。", "。", "……", "；"]
ZH_MISC = ["今天天气很好", "现在几点了", "请打开灯", "把音量调高一点", "播放一首歌", "设置一个闹钟",
           "明天会下雨吗", "帮我查一下航班", "这个多少钱", "谢谢你的帮助", "没关系", "对不起",
           "欢迎光临", "祝你生日快乐", "路上小心", "早上好", "晚安", "你好世界"]
EN_WORDS = ("the quick brown fox jumps over lazy dog hello world please turn on off light music play "
            "song set alarm timer weather today tomorrow what time is it call mom open door close window "
            "voice assistant speech model token text number price meeting at in on for with and or but "
            "email phone message coffee tea python golang server client data input output").split()
EN_NAMES = ["Alice", "Bob", "OpenAI", "Google", "iPhone", "WiFi", "GPU", "CPU", "API", "USB", "Beijing", "Shanghai"]
UNITS = ["点", "元", "公里", "分钟", "个", "%", "km", "kg", "GB", "年", "月", "日"]


def num(r):
    k = r.randrange(5)
    if k == 0:
        return str(r.randrange(10))
    if k == 1:
        return str(r.randrange(100, 10000))
    if k == 2:
        return "%d.%02d" % (r.randrange(100), r.randrange(100))
    if k == 3:
        return "%d:%02d" % (r.randrange(24), r.randrange(60))
    return "20%02d" % r.randrange(30)


def en_sentence(r, n=None):
    n = n or r.randrange(3, 10)
    words = [r.choice(EN_WORDS + EN_NAMES) for _ in range(n)]
    words[0] = words[0].capitalize()
    return " ".join(words) + r.choice([".", "!", "?", ",", ".", ""])


def zh_sentence(r):
    k = r.randrange(3)
    if k == 0:
        return r.choice(ZH_SUBJ) + r.choice(ZH_VERB) + r.choice(ZH_OBJ) + r.choice(ZH_TAIL)
    if k == 1:
        return r.choice(ZH_MISC) + r.choice(ZH_TAIL)
    return r.choice(ZH_SUBJ) + r.choice(ZH_VERB) + num(r) + r.choice(UNITS) + r.choice(ZH_TAIL)


def mixed_sentence(r):
    k = r.randrange(5)
    if k == 0:
        return r.choice(ZH_SUBJ) + "用" + r.choice(EN_NAMES) + r.choice(ZH_OBJ) + r.choice(ZH_TAIL)
    if k == 1:
        return zh_sentence(r) + " " + en_sentence(r, r.randrange(2, 5))
    if k == 2:
        return "请在" + num(r) + "提醒我 " + r.choice(EN_WORDS) + " " + r.choice(EN_WORDS) + "。"
    if k == 3:
        return en_sentence(r, 3) + " " + r.choice(ZH_MISC) + "（" + r.choice(EN_NAMES) + "）"
    return "\u201c" + r.choice(ZH_MISC) + "\u201d, " + r.choice(EN_NAMES) + " said: " + en_sentence(r, 4)


def corpus(seed=1234, n=600):
    r = random.Random(seed)
    gens = [zh_sentence, en_sentence, mixed_sentence]
    return [gens[i % 3](r) for i in range(n)]


def test_lines():
    r = random.Random(98765)
    lines = [
        "", " ", "   ", "\u3000", "a", "我", "▁", "▁▁x", "hello", "Hello world", "你好世界",
        "  leading spaces", "trailing spaces   ", "  both  sides  ", "multiple    spaces   inside",
        "tab\tseparated\tvalues", "line\nbreak", "今天 天气  很好", "价格是 12.50 元，共 3 个。",
        "现在是 2024年5月1日 08:30", "Call me at 555-1234!", "100% OK?", "(括号) [方括号] {花括号}",
        "“引号”和‘单引号’", "email: test@example.com", "C++ & Go & Rust", "¿Qué tal? Ça va!",
        "emoji 😀 in text", "🎉🎉🎉", "Ελληνικά και русский", "日本語のひらがなカタカナ", "한국어 문장",
        "罕见字：饕餮魑魅魍魉", "𠀀𠀁 extension B", "数学符号 ∑∫√∞ ≠ ≤", "全角ＡＢＣ１２３", "fullwidth！？",
        "<|zh|>你好<|en|>hello", "<|zh|> spaced <|en|>", "<|en|><|en|>", "x<|zh|>y",
        "ﬁ ligature and Å", "\u00a0nbsp\u00a0here", "zero\u200bwidth", "混合mixed中英文English文本",
        "iPhone和WiFi都用GPU吗？", "OpenAI、Google、API。", "…—–-", "a b c d e f g", "1 2 3 4 5",
        "1234567890", "3.1415926", "-42", "+86 138 0013 8000",
    ]
    gens = [zh_sentence, en_sentence, mixed_sentence]
    i = 0
    while len(lines) < 110:
        s = gens[i % 3](r)
        if i % 7 == 0:
            s = "  " + s.replace(" ", "   ") + "  "
        if i % 11 == 0:
            s = s + " 𝔘𝔫𝔦 ☃"
        lines.append(s)
        i += 1
    return lines


def train(prefix, lines, byte_fallback):
    # Train from a relative path inside a temporary directory so that the
    # trainer_spec.input stored in the model is stable ("corpus.txt") and the
    # output is byte-for-byte reproducible.
    prefix = os.path.abspath(prefix)
    cwd = os.getcwd()
    with tempfile.TemporaryDirectory() as tmp:
        with open(os.path.join(tmp, "corpus.txt"), "w", encoding="utf-8") as f:
            f.write("\n".join(lines) + "\n")
        os.chdir(tmp)
        try:
            spm.SentencePieceTrainer.train(
                input="corpus.txt",
                model_prefix=prefix,
                model_type="unigram",
                vocab_size=800,
                character_coverage=1.0,
                normalization_rule_name="identity",
                byte_fallback=byte_fallback,
                user_defined_symbols=["<|zh|>", "<|en|>"],
                hard_vocab_limit=False,
                num_threads=1,
                seed_sentencepiece_size=100000,
                minloglevel=2,
            )
        finally:
            os.chdir(cwd)
    os.unlink(prefix + ".vocab")
    return prefix + ".model"


def golden(model_path, lines, out_name):
    sp = spm.SentencePieceProcessor(model_file=model_path)
    cases = []
    for line in lines:
        ids = sp.encode(line, out_type=int)
        cases.append({
            "text": line,
            "ids": ids,
            "pieces": [sp.id_to_piece(i) for i in ids],
            "decoded": sp.decode(ids),
        })
    n = sp.get_piece_size()
    r = random.Random(4242)
    seqs = [[], [0], [1, 2], [1], [sp.unk_id(), sp.unk_id()]]
    byte_ids = [sp.piece_to_id("<0x%02X>" % b) for b in (0xE2, 0x96, 0x81, 0xE4, 0xBD, 0xA0, 0xFF, 0x41)]
    byte_ids = [b for b in byte_ids if b != sp.unk_id()]
    if byte_ids:
        seqs += [byte_ids, byte_ids[:2], [byte_ids[-1]] + byte_ids[:3], byte_ids[3:6] + [sp.piece_to_id("▁")]]
    for _ in range(30):
        seqs.append([r.randrange(n) for _ in range(r.randrange(1, 12))])
    dec = [{"ids": s, "decoded": sp.decode(s)} for s in seqs]
    with open(os.path.join(OUT, out_name), "w", encoding="utf-8") as f:
        json.dump({"model": os.path.basename(model_path), "vocab_size": n,
                   "sentencepiece_version": spm.__version__, "cases": cases, "decode_cases": dec},
                  f, ensure_ascii=False, indent=1)
        f.write("\n")
    return cases


def main():
    os.makedirs(OUT, exist_ok=True)
    lines = corpus()
    tests = test_lines()
    m1 = train(os.path.join(OUT, "tokenizer"), lines, True)
    m2 = train(os.path.join(OUT, "tokenizer_nobf"), lines, False)
    c1 = golden(m1, tests, "golden.json")
    golden(m2, tests, "golden_nobf.json")
    for p in (m1, m2):
        print(p, os.path.getsize(p), "bytes")
    print(len(c1), "test lines")


if __name__ == "__main__":
    main()
