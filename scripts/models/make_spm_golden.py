#!/usr/bin/env python3
"""Generate the golden fixtures for tts/spm (pure-Go SentencePiece).

Run with the Debian interpreter (needs
`apt-get install -y python3-sentencepiece python3-protobuf`):

    /usr/bin/python3 scripts/models/make_spm_golden.py

It trains small models on a deterministic, generated mixed Chinese/English
corpus (character_coverage 1.0). Two unigram models with the identity
normalizer:

  tts/spm/testdata/tokenizer.model       byte_fallback=true (the main model)
  tts/spm/testdata/tokenizer_nobf.model  byte_fallback=false (exercises <unk>)

and, trained on that corpus plus lines of full-width, compatibility and
half-width characters, extra and ideographic spaces and Chinese punctuation:

  unigram_nfkc.model.gz  unigram, nmt_nfkc (a precompiled_charsmap), byte_fallback
  bpe_nfkc.model.gz      BPE, nmt_nfkc, byte_fallback
  bpe.model              BPE, identity, no byte_fallback, some merged pieces
                         then marked UNUSED (exercises BPE's resegmentation)
  suffix.model           unigram, identity, treat_whitespace_as_suffix,
                         remove_extra_whitespaces=false

The nmt_nfkc models are gzipped (mtime 0, so reproducible): their charsmap
alone is ~240 KB. For each model it writes golden*.json with the ids, pieces
and decoded text of each test line (lines that are not UTF-8 are given as
hex in "bytes" instead of "text"), plus decode-only cases for hand-made id
sequences (control ids, <unk>, stray/invalid byte pieces, leading "▁"s).
"""

import gzip
import json
import os
import random
import tempfile

import sentencepiece as spm
from sentencepiece import sentencepiece_model_pb2 as model_pb2

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


FULLWIDTH = {c: chr(ord(c) + 0xFEE0) for c in map(chr, range(0x21, 0x7F))}
HALFWIDTH_KATAKANA = ["ｶﾀｶﾅ", "ﾊﾝｶｸ", "ｺｰﾋｰ", "ｶﾞｲﾄﾞ", "ﾊﾟｿｺﾝ", "ﾃﾞｰﾀ", "ｱｲｳｴｵ"]
COMPAT = ["ﬁ", "ﬂ", "①", "②", "⑩", "㎏", "㎞", "㎡", "℃", "™", "Ⅻ", "½", "x²", "Å", "ǅ", "㈱", "〜"]
ZH_PUNCT = ["，", "。", "！", "？", "、", "；", "：", "“", "”", "「", "」", "【", "】", "《", "》", "（", "）", "——", "……"]


def fullwidth(s):
    return "".join(FULLWIDTH.get(c, "\u3000" if c == " " else c) for c in s)


def compat_sentence(r):
    k = r.randrange(6)
    if k == 0:
        return fullwidth(en_sentence(r, r.randrange(2, 5)))
    if k == 1:
        return zh_sentence(r)[:-1] + r.choice(ZH_PUNCT) + fullwidth(num(r)) + r.choice(["㎏", "㎞", "℃", "％", "元"])
    if k == 2:
        return r.choice(HALFWIDTH_KATAKANA) + r.choice(ZH_PUNCT) + r.choice(HALFWIDTH_KATAKANA) + " " + r.choice(EN_WORDS)
    if k == 3:
        return " ".join(r.choice(COMPAT) + r.choice(EN_WORDS) for _ in range(r.randrange(2, 5)))
    if k == 4:
        return "  " + r.choice(ZH_MISC) + "\u3000\u3000" + r.choice(EN_NAMES) + "   " + r.choice(ZH_MISC) + r.choice(ZH_PUNCT)
    return "“" + r.choice(ZH_MISC) + "”" + r.choice(ZH_PUNCT) + "「" + r.choice(ZH_OBJ) + "」" + r.choice(ZH_TAIL)


def corpus_compat(seed=4321, n=300):
    r = random.Random(seed)
    return corpus() + [compat_sentence(r) for _ in range(n)]


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


def test_lines_compat():
    """test_lines() and lines for normalization: compatibility characters,
    whitespace that normalizes to or from spaces, controls and broken UTF-8."""
    r = random.Random(13579)
    lines = test_lines() + [
        "ＡＢＣ，１２３", "全角ＡＢＣ１２３！？", "Ｈｅｌｌｏ　Ｗｏｒｌｄ", "ｈｅｌｌｏ ｗｏｒｌｄ", "ﬁnance ﬂow ﬃ",
        "①②③ ⑩ ⑳", "５㎏ ３㎞ ２㎡ ３７℃", "ｶﾀｶﾅ ﾊﾝｶｸ", "ｶﾞｷﾞ ﾊﾟﾋﾟ ｳﾞ", "Ⅻ ⅷ ™ ½ x² H₂O", "Å Å ǅ ĳ ㈱",
        "a\u00a8b", "\u00a8 leading", "x \u00a8 \u00b4 y", "\u3000全角空格\u3000", "\u3000\u3000", "a\u3000\u3000 b",
        "soft\u00adhyphen", "zero\u200bwidth\u200djoin", "\ufeffBOM", "\u2028line\u2029sep", "e\u0301 é",
        "가 \u1100\u1161", "a\x00b", "\x01\x7f\x1b[0m", "\r\n\t mixed \x0b\x0c", "“你好”，他说：「好的」。",
        "【标题】《书名》——破折号……", "（全角括号）、顿号；分号：冒号", "～〜~", "\ufffd", "\u00a0\u2002\u2003\u205f",
        "<|zh|>ＡＢＣ<|en|>ﬁ", "ｼﾞｭｰｽ<|en|>", "  ①  ② ",
    ]
    lines += [compat_sentence(r) for _ in range(30)]
    lines += [b"\xff\xfe", b"a\xe4\xbdb", b"\xed\xa0\x80 surrogate", b"\xc0\xaf overlong", b"x\xf0\x9f\x98",
              b"\xef\xbc\xa1\xff\xef\xbc", "ＡＢＣ".encode() + b"\x80\x80 " + "①".encode()]
    return lines


def train(prefix, lines, byte_fallback, **options):
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
            args = dict(
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
            args.update(options)
            spm.SentencePieceTrainer.train(**args)
        finally:
            os.chdir(cwd)
    os.unlink(prefix + ".vocab")
    return prefix + ".model"


def mark_unused(model_path, every):
    """Marks every `every`-th normal piece of three or more characters
    UNUSED: BPE still merges into them, then splits them back."""
    m = model_pb2.ModelProto()
    with open(model_path, "rb") as f:
        m.ParseFromString(f.read())
    normal = [p for p in m.pieces if p.type == model_pb2.ModelProto.SentencePiece.NORMAL and len(p.piece) >= 3]
    for p in normal[::every]:
        p.type = model_pb2.ModelProto.SentencePiece.UNUSED
    with open(model_path, "wb") as f:
        f.write(m.SerializeToString())


def gzip_model(model_path):
    with open(model_path, "rb") as f:
        data = f.read()
    os.unlink(model_path)
    with open(model_path + ".gz", "wb") as f:
        f.write(gzip.compress(data, 9, mtime=0))
    return model_path + ".gz"


def golden(model_path, lines, out_name, model_name=None):
    sp = spm.SentencePieceProcessor(model_file=model_path)
    cases = []
    for line in lines:
        ids = sp.encode(line, out_type=int)
        case = {"text": line} if isinstance(line, str) else {"bytes": line.hex()}
        case.update({
            "ids": ids,
            "pieces": [sp.id_to_piece(i) for i in ids],
            "decoded": sp.decode(ids),
        })
        cases.append(case)
    n = sp.get_piece_size()
    r = random.Random(4242)
    seqs = [[], [0], [1, 2], [1], [sp.unk_id(), sp.unk_id()]]
    byte_ids = [sp.piece_to_id("<0x%02X>" % b) for b in (0xE2, 0x96, 0x81, 0xE4, 0xBD, 0xA0, 0xFF, 0x41)]
    byte_ids = [b for b in byte_ids if b != sp.unk_id()]
    if byte_ids:
        seqs += [byte_ids, byte_ids[:2], [byte_ids[-1]] + byte_ids[:3], byte_ids[3:6] + [sp.piece_to_id("▁")]]
    ws = [i for i in range(n) if sp.id_to_piece(i).startswith("▁") and not sp.is_unknown(i)][:3]
    if len(ws) == 3:
        # Which leading "▁"s decoding drops depends on the whitespace options.
        seqs += [ws, [1] + ws, [ws[0], ws[0], ws[1]], [ws[0], 1, ws[1]], [sp.unk_id(), ws[1]]]
    for _ in range(30):
        seqs.append([r.randrange(n) for _ in range(r.randrange(1, 12))])
    dec = [{"ids": s, "decoded": sp.decode(s)} for s in seqs]
    with open(os.path.join(OUT, out_name), "w", encoding="utf-8") as f:
        json.dump({"model": model_name or os.path.basename(model_path), "vocab_size": n,
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
    models = [m1, m2]

    lines = corpus_compat()
    tests = test_lines_compat()
    for name, byte_fallback, options in [
        ("unigram_nfkc", True, {"normalization_rule_name": "nmt_nfkc"}),
        ("bpe_nfkc", True, {"normalization_rule_name": "nmt_nfkc", "model_type": "bpe", "vocab_size": 1200}),
        ("bpe", False, {"model_type": "bpe", "vocab_size": 1000}),
        ("suffix", False, {"treat_whitespace_as_suffix": True, "remove_extra_whitespaces": False}),
    ]:
        m = train(os.path.join(OUT, name), lines, byte_fallback, **options)
        if name == "bpe":
            mark_unused(m, 4)
        golden(m, tests, "golden_%s.json" % name, os.path.basename(m) + (".gz" if "nfkc" in name else ""))
        models.append(gzip_model(m) if "nfkc" in name else m)
    for p in models:
        print(p, os.path.getsize(p), "bytes")
    print(len(c1), "test lines,", len(tests), "with normalization")


if __name__ == "__main__":
    main()
