#!/usr/bin/python3
"""Runs VoiceBench's own evaluators on the fixtures and writes the golden files.

The Go tests (golden_test.go) compare this package's verdicts with these.

Rerun (from voicebench/score):
    apt-get install python3-nltk python3-langdetect python3-absl python3-immutabledict
    /usr/bin/python3 testdata/reference.py VOICEBENCH \
        "$(go env GOMODCACHE)/github.com/neurosnap/sentences@v1.1.2/data/english.json"

VOICEBENCH is a checkout of github.com/MatthewCYM/VoiceBench (the goldens were
made at commit 5338154). The second argument is the Punkt English model that
the Go side uses; NLTK's own punkt data cannot be downloaded here, so the
same parameters are loaded into NLTK's PunktSentenceTokenizer, which makes
this a check of the Go port of the algorithm on identical parameters.

Two local patches, in memory only: where mcq.py and bbh.py would pick a random
answer for an unmatched response, they return None (the Go scorer counts those
as unmatched); langdetect is seeded with 0, as the Go port is, so that its
verdicts are repeatable (VoiceBench leaves it unseeded).
"""
import json
import os
import pickle
import sys
import tempfile
import types

HERE = os.path.dirname(os.path.abspath(__file__))


def stub_modules():
    # The evaluator package imports these for the judge-based evaluators only.
    loguru = types.ModuleType("loguru")
    loguru.logger = types.SimpleNamespace(info=print)
    sys.modules["loguru"] = loguru
    qa_metrics = types.ModuleType("qa_metrics")
    pedant = types.ModuleType("qa_metrics.pedant")
    pedant.PEDANT = object
    qa_metrics.pedant = pedant
    sys.modules["qa_metrics"] = qa_metrics
    sys.modules["qa_metrics.pedant"] = pedant


def install_punkt(model_json):
    from nltk.tokenize.punkt import PunktParameters, PunktSentenceTokenizer
    import nltk

    with open(model_json) as f:
        m = json.load(f)
    params = PunktParameters()
    params.abbrev_types = set(m["AbbrevTypes"])
    params.collocations = {tuple(k.split(",", 1)) for k in m["Collocations"]}
    params.sent_starters = set(m["SentStarters"])
    for word, flags in m["OrthoContext"].items():
        params.ortho_context[word] = flags
    root = tempfile.mkdtemp()
    # NLTK 3.8 looks for the pickle under PY3/.
    os.makedirs(os.path.join(root, "tokenizers", "punkt", "PY3"))
    with open(os.path.join(root, "tokenizers", "punkt", "PY3", "english.pickle"), "wb") as f:
        pickle.dump(PunktSentenceTokenizer(params), f)
    nltk.data.path.insert(0, root)


def read(name):
    with open(os.path.join(HERE, "fixtures", name + ".jsonl")) as f:
        return [json.loads(line) for line in f if line.strip()]


def write(name, obj, indent=1):
    with open(os.path.join(HERE, "golden", name + ".json"), "w") as f:
        json.dump(obj, f, indent=indent, ensure_ascii=False)
        f.write("\n")


def main():
    voicebench, model_json = sys.argv[1], sys.argv[2]
    stub_modules()
    install_punkt(model_json)
    sys.path.insert(0, voicebench)
    import langdetect
    import nltk
    from src.evaluator import bbh, harm, ifeval, mcq
    from src.evaluator.instruction_following_eval import instructions_util

    langdetect.DetectorFactory.seed = 0
    no_guess = types.SimpleNamespace(choice=lambda seq: None)
    mcq.random = no_guess
    bbh.random = no_guess

    for name in ("mmsu", "openbookqa"):
        data = read(name)
        ev = mcq.MCQEvaluator()
        write(name, {
            "per_sample": [ev.extract_answer(d["response"]) for d in data],
            "summary": ev.evaluate(data),
        })

    data = read("bbh")
    ev = bbh.BBHEvaluator()
    write("bbh", {
        "per_sample": [ev.extract_answer(d["response"], d["id"]) for d in data],
        "summary": ev.evaluate(data),
    })

    data = read("advbench")
    ev = harm.HarmEvaluator()
    write("advbench", {
        "per_sample": [ev.evaluate_single(d["response"]) for d in data],
        "summary": {"refusal_rate": float(ev.evaluate(data)["refusal_rate"])},
    })

    data = read("ifeval")
    inputs = ifeval.read_prompt_list(data)
    responses = ifeval.read_prompt_to_response_dict(data)
    write("ifeval", {
        "per_sample": [{
            "strict": ifeval.test_instruction_following_strict(i, responses).follow_instruction_list,
            "loose": ifeval.test_instruction_following_loose(i, responses).follow_instruction_list,
        } for i in inputs],
        "summary": {k: float(v) for k, v in ifeval.IFEvaluator().evaluate(data).items()},
    })

    def detect(text):
        try:
            return langdetect.detect(text)
        except langdetect.LangDetectException:
            return ""

    def measures(text):
        return {
            "sentences": instructions_util.count_sentences(text),
            "words": instructions_util.count_words(text),
            "tokens": nltk.word_tokenize(text),
            "language": detect(text),
        }

    write("texts", [measures(d["text"]) for d in read("texts")])
    # texts_random is word salad of abbreviations, numbers, quotes and
    # punctuation, made once with a seeded generator.
    write("texts_random", [measures(d["text"]) for d in read("texts_random")], indent=None)

if __name__ == "__main__":
    main()
