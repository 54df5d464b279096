package bench

import (
	"context"
	"fmt"
	"io"

	"github.com/voiceassistant/voice/audio"
	"github.com/voiceassistant/voice/internal/clock"
	"github.com/voiceassistant/voice/internal/memstat"
	"github.com/voiceassistant/voice/pipeline"
	"github.com/voiceassistant/voice/wiring"
)

// PipelineResult is what Pipeline reports: per-stage compute per
// turn and voice-to-voice latency (the end of the user's speech to the
// first reply audio), with the stages' compute on the replay clock.
type PipelineResult struct {
	Measured     Measured          `json:"measured"`
	Input        string            `json:"input"`
	ComputeScale float64           `json:"compute_scale"`
	Stages       map[string]string `json:"stages"`
	Swapped      []string          `json:"swapped_for_stand_ins"`
	Turns        int               `json:"turns"`
	Answered     int               `json:"answered"`
	// Underruns counts device periods that ran dry after a reply's first
	// audio and before its end: the reply stuttered (synthesis behind
	// playback).
	Underruns uint64 `json:"underruns"`
	// UnderrunGaps say where those periods fell (the first gaps): the
	// reply (turn, from 1), its chunk, when into its audio and how long,
	// and whether the chunk had played whole before the next began.
	UnderrunGaps []UnderrunGap `json:"underrun_gaps,omitempty"`
	VoiceToVoice Percentiles   `json:"voice_to_voice_ms"`
	// VoiceToVoiceParts are each stage's own latency over the answered
	// turns (pipeline.TurnMetrics): endpointing, asr, first_token,
	// first_audio and playback. A speculated reply's first token and audio
	// come during the endpointing wait, so these overlap and do not add up
	// to voice to voice; VoiceToVoicePath does.
	VoiceToVoiceParts map[string]Percentiles `json:"voice_to_voice_parts_ms"`
	// VoiceToVoicePath is the mean of each part as it fell on the path
	// (pipeline.PathMS); the parts add up to VoiceToVoiceMean.
	VoiceToVoicePath map[string]float64 `json:"voice_to_voice_path_mean_ms"`
	VoiceToVoiceMean float64            `json:"voice_to_voice_mean_ms"`
	// ComputeOnly is the answered turns' compute-only latency, the figure
	// the MNN-Pocket report puts beside the measured one
	// (pipeline.StageCompute.ComputeOnly): what voice to voice would be
	// with no endpointing wait, no text buffered and no queueing. Its parts
	// are in Compute: asr_final, llm_first_token and tts_first_audio.
	ComputeOnly Percentiles            `json:"compute_only_ms"`
	Compute     map[string]Percentiles `json:"stage_compute_ms"`
	Speculated  int                    `json:"speculated"`
	Guesses     Guesses                `json:"guesses"`
	// PeakRSSBytes is the whole assistant's peak resident memory over
	// the replay (the kernel's high-water mark), Peak the peak of each
	// part of it (sampled, with RSS the high-water mark); MemoryEnd its
	// memory once the replay is over, every model loaded.
	PeakRSSBytes int64         `json:"peak_rss_bytes"`
	Peak         memstat.Usage `json:"peak"`
	MemoryEnd    memstat.Usage `json:"memory_end"`
	// PeakMappings is where the resident memory was at its sampled peak,
	// by mapped file and kind of anonymous memory, the largest first;
	// those under a mebibyte summed into the last.
	PeakMappings []memstat.Mapping `json:"peak_mappings,omitempty"`
}

// UnderrunGap is where a reply's audio ran dry.
type UnderrunGap struct {
	Reply   int     `json:"reply"`
	Chunk   int     `json:"chunk"`
	Chunks  int     `json:"chunks"`
	AtMS    float64 `json:"at_ms"`
	GapMS   float64 `json:"gap_ms"`
	Between bool    `json:"between_chunks"`
}

func underrunGaps(gaps []pipeline.UnderrunGap) []UnderrunGap {
	out := make([]UnderrunGap, len(gaps))
	for i, g := range gaps {
		out[i] = UnderrunGap{Reply: g.Reply, Chunk: g.Chunk, Chunks: g.Chunks, AtMS: ms(g.At), GapMS: ms(g.Length), Between: g.Between}
	}
	return out
}

// Guesses are how often the assistant guessed: replies started at the
// user's pause before the turn was committed (Speculations), those that
// answered it (Hits) and those dropped unheard, by why (Dropped, the
// reply.Miss* reasons); commits the user went on from at once, which came
// too early (Continuations); and replies the user cut (BargeIns).
type Guesses struct {
	Speculations  int            `json:"speculations"`
	Hits          int            `json:"hits"`
	Dropped       map[string]int `json:"dropped"`
	Continuations int            `json:"continuations"`
	BargeIns      int            `json:"barge_ins"`
}

// count takes the replay's events as they come.
func (g *Guesses) count(e pipeline.Event) {
	switch e.Type {
	case pipeline.EvSpeculationStart:
		g.Speculations++
	case pipeline.EvSpeculationHit:
		g.Hits++
	case pipeline.EvSpeculationMiss:
		g.Dropped[e.Reason]++
	case pipeline.EvTurnContinued:
		g.Continuations++
	case pipeline.EvBargeIn:
		g.BargeIns++
	}
}

// Percentiles are a figure's p50 and p95 over the turns.
type Percentiles struct {
	P50 float64 `json:"p50"`
	P95 float64 `json:"p95"`
}

func percentiles(v []float64) Percentiles {
	return Percentiles{P50: pipeline.Percentile(v, 50), P95: pipeline.Percentile(v, 95)}
}

// PipelineOptions are a replay's settings beyond its stages.
type PipelineOptions struct {
	// ComputeScale charges each stage's measured compute to the replay
	// clock times this (0: compute is free).
	ComputeScale float64
	// HeapProfile, if set, gets the Go heap's profile as it stood at the
	// replay's peak of live objects (memstat.HeapAtPeak).
	HeapProfile io.Writer
}

// Pipeline replays the recording at path through the whole pipeline of s;
// stages whose models are not installed run their stand-ins.
func Pipeline(ctx context.Context, path string, s wiring.Stages, o PipelineOptions) (_ PipelineResult, err error) {
	// Streamed, so the peak RSS reported is the pipeline's, not the
	// recording's.
	input, err := audio.OpenWAVMono16k(ctx, path)
	if err != nil {
		return PipelineResult{}, err
	}
	defer input.Close()
	sampler := memstat.Sample(memorySampling)
	defer sampler.Stop()
	mappings := memstat.FollowMappings(memorySampling)
	defer mappings.Stop()
	if o.HeapProfile != nil {
		heap := memstat.FollowHeap(memorySampling)
		defer func() {
			if prof, _ := heap.Stop(); err == nil {
				_, err = o.HeapProfile.Write(prof)
			}
		}()
	}
	stages, swapped := s.WithInstalled()
	clk := clock.NewVirtual()
	cfg, closeStages, err := wiring.Build(stages, clk)
	if err != nil {
		return PipelineResult{}, err
	}
	defer closeStages()
	cfg.ComputeScale = o.ComputeScale
	guesses := Guesses{Dropped: map[string]int{}}
	res, err := pipeline.Replay(ctx, clk, cfg, audio.VirtualConfig{Source: input, NoRecording: true}, guesses.count)
	if err != nil {
		return PipelineResult{}, err
	}
	// A replay cut short ends quietly; its figures would pass for the
	// recording's.
	if err := ctx.Err(); err != nil {
		return PipelineResult{}, fmt.Errorf("bench pipeline: stopped after %d turns, before the end of %s: %w", len(res.Metrics), path, err)
	}
	b := summarize(res.Metrics)
	b.Input, b.ComputeScale, b.Swapped, b.Underruns = path, o.ComputeScale, swapped, res.Underruns
	b.UnderrunGaps, b.Guesses = underrunGaps(res.Gaps), guesses
	b.PeakRSSBytes, b.Peak, b.MemoryEnd = peaks(sampler)
	atPeak, _ := mappings.Stop()
	b.PeakMappings = largest(atPeak)
	b.Stages = map[string]string{"vad": stages.VAD, "asr": stages.ASR, "turn": stages.Turn, "llm": stages.LLM, "tts": stages.TTS}
	return b, nil
}

// largest keeps the mappings of a mebibyte or more resident, and sums the
// rest into one.
func largest(mappings []memstat.Mapping) []memstat.Mapping {
	var out []memstat.Mapping
	rest := memstat.Mapping{Name: "(the rest, each under 1 MiB)"}
	for _, m := range mappings {
		if m.RSS >= 1<<20 {
			out = append(out, m)
			continue
		}
		rest.RSS += m.RSS
		rest.Anon += m.Anon
	}
	if rest.RSS > 0 {
		out = append(out, rest)
	}
	return out
}

// summarize gives the figures of the turns.
func summarize(turns []pipeline.TurnMetrics) PipelineResult {
	b := PipelineResult{Turns: len(turns), Compute: map[string]Percentiles{}, VoiceToVoiceParts: map[string]Percentiles{},
		VoiceToVoicePath: map[string]float64{}}
	var e2e, computeOnly []float64
	per := map[string][]float64{}
	for _, m := range turns {
		if m.Speculated {
			b.Speculated++
		}
		if m.PlaybackStart > 0 {
			b.Answered++
			e2e = append(e2e, m.EndToEndMS)
			b.VoiceToVoiceMean += m.EndToEndMS
			for _, part := range m.Path.Parts() {
				b.VoiceToVoicePath[part.Name] += part.MS
			}
			if m.Compute != nil {
				computeOnly = append(computeOnly, m.Compute.ComputeOnly())
			}
		}
		if c := m.Compute; c != nil {
			for name, v := range map[string]float64{"vad": c.VAD, "asr": c.ASR, "turn": c.Turn, "llm": c.LLM,
				"llm_prefill": c.LLMPrefill, "llm_decode": c.LLMDecode, "tts": c.TTS,
				"asr_final": c.ASRFinal, "llm_first_token": c.LLMFirstToken, "tts_first_audio": c.TTSFirstAudio} {
				per[name] = append(per[name], v)
			}
		}
	}
	b.VoiceToVoice, b.ComputeOnly = percentiles(e2e), percentiles(computeOnly)
	// Means, not Percentiles: only means of the parts add up to the mean
	// of their sums.
	if b.Answered > 0 {
		b.VoiceToVoiceMean /= float64(b.Answered)
		for name := range b.VoiceToVoicePath {
			b.VoiceToVoicePath[name] /= float64(b.Answered)
		}
	}
	for name, v := range per {
		b.Compute[name] = percentiles(v)
	}
	sum := pipeline.Summarize(turns)
	for _, name := range VoiceToVoicePartNames {
		b.VoiceToVoiceParts[name] = Percentiles{P50: sum.P50[name], P95: sum.P95[name]}
	}
	return b
}

// VoiceToVoicePartNames are the parts of voice-to-voice latency, in
// order.
var VoiceToVoicePartNames = []string{"endpointing", "asr", "first_token", "first_audio", "playback"}
