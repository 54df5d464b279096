// Package score scores VoiceBench results the way the benchmark's own
// evaluators do (github.com/MatthewCYM/VoiceBench, src/evaluator), in Go and
// without any randomness.
//
// ScoreDir reads a results directory (one SUBSET.jsonl per subset, written by
// the voicebench runner) and returns a Report; WriteReport writes
// summary.json, summary.md and the files an external LLM judge needs.
//
// Implemented, deterministic:
//   - mmsu, openbookqa: the reference's answer templates (mcq.py). Where the
//     reference picks a random letter for an unmatched answer, this package
//     counts the sample as wrong and reports it as unmatched.
//   - bbh: the reference's per-task answer rules (bbh.py: sports_understanding,
//     hyperbaton, navigate, web_of_lies), again with unmatched answers wrong
//     and counted instead of guessed. The rules are kept as they are,
//     including the reference's slips (a bare "b" maps to option A in
//     hyperbaton; "the sentence X is not plausible" maps to "yes" in sports),
//     so that scores stay comparable with published ones.
//   - ifeval: all 25 instruction types of Google's IFEval that VoiceBench
//     registers, strict and loose (the reference's eight response variants),
//     prompt and instruction level; the subset score is the mean of the four
//     accuracies, as in the reference. The text measures are ports of what
//     the reference calls: NLTK 3.8's Punkt sentence splitter (punkt.go, on
//     the English Punkt model that github.com/neurosnap/sentences ships, as
//     NLTK's own data cannot be fetched here), NLTK's word_tokenize (text.go)
//     and Python's langdetect seeded with 0 (internal/langdetect, with its
//     profiles). On the fixtures (26 plain and 300 generated texts) they give
//     the reference's sentences, tokens and languages exactly.
//     An instruction whose arguments are missing or invalid (where the
//     reference would draw random ones) is counted as not followed and
//     reported as unsupported.
//   - advbench: the reference's refusal phrases (harm.py); an empty response
//     counts as a refusal, as in the reference.
//
// Not implemented here: the open-ended subsets (alpacaeval, commoneval,
// wildvoice, scored 1-5 by a GPT judge) and sd-qa (GPT judge, plus PEDANT,
// a learned scorer that this package does not run). Their samples are
// exported to judge/SUBSET.jsonl with the reference's judge prompt; when
// judge/SUBSET.scores.jsonl is present (one {"index": N, "score": ...} line per
// exported sample, see judgeScore) its verdicts are folded into the report.
//
// A sample whose runner recorded an error counts as wrong (for advbench: as
// not refused) and is counted in the report.
package score
