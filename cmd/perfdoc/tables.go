package main

import (
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"
)

// A table is one generated table of a doc: a column for each of its
// sets, a row for each figure.
type table struct {
	// name is the table's in the doc's markers:
	// <!-- perfdoc:NAME --> ... <!-- /perfdoc:NAME -->.
	name string
	sets []string
	// heads are the columns' headings, where the sets' names are not.
	heads []string
	rows  []row
}

// A row is one line of a table: its figures, each read by its JSON path
// from the runs its bench command wrote, put into format (one %s each).
type row struct {
	label   string
	command string
	format  string
	figures []figure
}

type figure struct {
	path string
	show func(float64) string
}

// pipelineRow is a row of bench pipeline's figures.
func pipelineRow(label, format string, figures ...figure) row {
	return row{label, "pipeline", format, figures}
}

// stageRow is a row of bench stages' figures of one stage, their paths
// inside its line.
func stageRow(stage, label, format string, figures ...figure) row {
	for i := range figures {
		figures[i].path = fmt.Sprintf("stages[stage=%s].%s", stage, figures[i].path)
	}
	return row{label, "stages", format, figures}
}

// idleRow is a row of bench idle's figures, idlePart one of the parts of
// its CPU.
func idleRow(label, format string, figures ...figure) row {
	return row{label, "idle", format, figures}
}

func idlePart(part, label string) row {
	return idleRow("of it: "+label, "%s", figure{"parts[part=" + part + "].cpu_percent", ratio})
}

// idleRows are a bench idle table's, a column for each activation.
var idleRows = []row{
	idleRow("CPU, % of one core", "%s", figure{"cpu_percent", ratio}),
	idlePart("front end", "the front end (echo canceller, noise suppressor)"),
	idlePart("vad", "the VAD"),
	idlePart("resampler", "resampling the capture"),
	idlePart("capture reader", "the capture reader"),
	idlePart("device callback", "the device callback"),
	idlePart("pipeline", "the pipeline's loop"),
	idlePart("Go runtime", "the Go runtime (scheduler, timers)"),
	idlePart("outside Go", "threads outside Go (the audio backend's)"),
	idleRow("RSS / anonymous memory", "%s / %s MiB", figure{"memory.rss_bytes", mib}, figure{"memory.anon_bytes", mib}),
}

var idleHeads = []string{"always", "push", "wake (host)", "wake (phrases)"}

// The ways a figure is shown.
var (
	count = func(v float64) string { return thousands(math.Round(v)) }
	ms    = count
	ms1   = func(v float64) string { return strconv.FormatFloat(v, 'f', 1, 64) }
	ratio = func(v float64) string { return strconv.FormatFloat(v, 'f', 2, 64) }
	// mib shows bytes in MiB, mibOf MiB as they are.
	mib   = func(v float64) string { return thousands(math.Round(v / (1 << 20))) }
	mibOf = count
)

// thousands writes a whole number as the doc does: 1,258.
func thousands(v float64) string {
	s := strconv.FormatFloat(math.Abs(v), 'f', 0, 64)
	for i := len(s) - 3; i > 0; i -= 3 {
		s = s[:i] + "," + s[i:]
	}
	if v < 0 {
		s = "-" + s
	}
	return s
}

// loadRows are the rows of what loading a stage's model cost.
func loadRows(stage, name string) []row {
	return []row{
		stageRow(stage, name+": loaded, anonymous / file-backed memory added", "+%s / +%s MiB", figure{"anon_mib", mibOf}, figure{"file_mib", mibOf}),
		stageRow(stage, name+": peak anonymous memory over load and compute", "%s MiB", figure{"peak_anon_mib", mibOf}),
	}
}

// graphRow is a synthesizer graph's line of bench stages --profile.
func graphRow(graph string, perCall func(float64) string) row {
	at := "graphs[graph=" + graph + "]."
	return stageRow("tts", graph+": per call, times its bound", "%s ms, %sx", figure{at + "ms_per_call", perCall}, figure{at + "times_bound", ms1})
}

// The rows of the stages' compute (bench stages) and of a replayed
// conversation (bench pipeline).
var (
	asrChunk   = stageRow("asr", "X-ASR: per 160 ms chunk", "%s ms", figure{"compute_ms", ms})
	turnCall   = stageRow("turn", "Smart Turn: per call (8 s of audio)", "%s ms", figure{"compute_ms", ms})
	llmToken   = stageRow("llm", "MNN-Pocket: decode, a token", "%s ms", figure{"compute_ms", ms})
	llmFirst   = stageRow("llm", "MNN-Pocket: first token of a spoken turn three exchanges in", "%s ms", figure{"first_token_ms", ms})
	ttsRTF     = stageRow("tts", "MOSS-TTS-Nano + codec: real-time factor of the 17-word sentence", "%s", figure{"rtf", ratio})
	ttsFirst   = stageRow("tts", "MOSS-TTS-Nano + codec: the sentence's first audio", "%s ms", figure{"first_audio_ms", ms})
	answered   = pipelineRow("turns answered, of those the VAD heard", "%s of %s", figure{"answered", count}, figure{"turns", count})
	voiceP50   = pipelineRow("voice to voice p50", "%s ms", figure{"voice_to_voice_ms.p50", ms})
	voiceP95   = pipelineRow("voice to voice p95", "%s ms", figure{"voice_to_voice_ms.p95", ms})
	voice      = pipelineRow("voice to voice p50 / p95", "%s / %s ms", figure{"voice_to_voice_ms.p50", ms}, figure{"voice_to_voice_ms.p95", ms})
	endpoint   = pipelineRow("endpointing wait (speech end to the commit decision) p50", "%s ms", figure{"voice_to_voice_parts_ms.endpointing.p50", ms})
	finalP95   = pipelineRow("final transcript (speech end to the final) p95", "%s ms", figure{"voice_to_voice_parts_ms.asr.p95", ms})
	tokenP50   = pipelineRow("the LLM's first token p50", "%s ms", figure{"voice_to_voice_parts_ms.first_token.p50", ms})
	tokenP95   = pipelineRow("the LLM's first token p95", "%s ms", figure{"voice_to_voice_parts_ms.first_token.p95", ms})
	firstAudio = pipelineRow("first audio after the first token p50", "%s ms", figure{"voice_to_voice_parts_ms.first_audio.p50", ms})
	underruns  = pipelineRow("playback underruns (10 ms periods that ran dry)", "%s", figure{"underruns", count})
	peakAnon   = pipelineRow("peak anonymous memory (of it, the Go side)", "%s MiB (%s)", figure{"peak.anon_bytes", mib}, figure{"peak.go_bytes", mib})
	endAnon    = pipelineRow("anonymous memory at the end", "%s MiB", figure{"memory_end.anon_bytes", mib})
	peakFile   = pipelineRow("peak file-backed memory", "%s MiB", figure{"peak.file_bytes", mib})
	peakRSS    = pipelineRow("peak RSS", "%s MiB", figure{"peak_rss_bytes", mib})
)

// tables are the docs' generated tables.
var tables = []table{
	{name: "true-size-pipeline", sets: []string{"int4", "lean"}, rows: []row{
		answered, voiceP50, voiceP95, endpoint, finalP95, tokenP50, tokenP95, firstAudio, underruns,
		peakAnon, endAnon, peakFile, peakRSS,
	}},
	{name: "true-size-stages", sets: []string{"int4", "lean"}, rows: slices.Concat(
		loadRows("asr", "X-ASR"), []row{asrChunk},
		loadRows("turn", "Smart Turn"), []row{turnCall},
		loadRows("llm", "MNN-Pocket"), []row{llmToken, llmFirst},
		loadRows("tts", "MOSS-TTS-Nano + codec"), []row{ttsRTF, ttsFirst},
	)},
	{name: "synthesizer-graphs", sets: []string{"int4"}, rows: []row{
		graphRow("text rows", ms), graphRow("decode step", ms1), graphRow("local frame", ms1), graphRow("codec", ms1),
	}},
	{name: "stand-ins", sets: []string{"stand-ins"}, rows: []row{
		answered, voiceP50, voiceP95, endpoint, tokenP50, firstAudio, underruns,
		pipelineRow("peak RSS (of it, anonymous)", "%s MiB (%s)", figure{"peak_rss_bytes", mib}, figure{"peak.anon_bytes", mib}),
	}},
	{name: "idle-silence", sets: []string{"idle-always", "idle-push", "idle-wake", "idle-phrases"}, heads: idleHeads, rows: idleRows},
	{name: "idle-noise", sets: []string{"noise-always", "noise-push", "noise-wake", "noise-phrases"}, heads: idleHeads, rows: idleRows},
	// README.md's summary.
	{name: "summary", sets: []string{"int4", "lean"}, rows: []row{
		asrChunk, turnCall, llmToken, llmFirst, ttsRTF, voice, underruns, peakAnon, peakFile, peakRSS,
	}},
}

// cellText is the row's cell for one run set's values: each figure's
// range over the runs, put into the row's format.
func (r row) cellText(values [][]float64) string {
	shown := make([]any, len(r.figures))
	for i, f := range r.figures {
		lo, hi := values[i][0], values[i][0]
		for _, v := range values[i] {
			lo, hi = min(lo, v), max(hi, v)
		}
		shown[i] = f.show(lo)
		if high := f.show(hi); high != shown[i] {
			shown[i] = strings.Join([]string{f.show(lo), high}, "-")
		}
	}
	return fmt.Sprintf(r.format, shown...)
}
