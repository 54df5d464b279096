package main

import (
	"encoding/json"
	"fmt"
	"io"

	"github.com/spf13/cobra"

	"github.com/voiceassistant/voice/audio"
	"github.com/voiceassistant/voice/internal/clock"
	"github.com/voiceassistant/voice/internal/memstat"
	"github.com/voiceassistant/voice/internal/wiring"
	"github.com/voiceassistant/voice/pipeline"
)

// pipelineBench is what `bench pipeline` reports: per-stage compute per
// turn and voice-to-voice latency (the end of the user's speech to the
// first reply audio), with the stages' compute on the replay clock.
type pipelineBench struct {
	Input        string            `json:"input"`
	ComputeScale float64           `json:"compute_scale"`
	Stages       map[string]string `json:"stages"`
	Swapped      []string          `json:"swapped_for_doubles"`
	Turns        int               `json:"turns"`
	Answered     int               `json:"answered"`
	// Underruns counts device periods that ran dry after a reply's first
	// audio and before its end: the reply stuttered (synthesis behind
	// playback).
	Underruns uint64 `json:"underruns"`
	// UnderrunGaps say where those periods fell (the first gaps): the
	// reply (turn, from 1), its chunk, when into its audio and how long,
	// and whether the chunk had played whole before the next began.
	UnderrunGaps []underrunGap `json:"underrun_gaps,omitempty"`
	VoiceToVoice percentiles   `json:"voice_to_voice_ms"`
	// VoiceToVoiceParts are each stage's own latency over the answered
	// turns (pipeline.TurnMetrics): endpointing, asr, first_token,
	// first_audio and playback. A speculated reply's first token and audio
	// come during the endpointing wait, so these overlap and do not add up
	// to voice to voice; VoiceToVoicePath does.
	VoiceToVoiceParts map[string]percentiles `json:"voice_to_voice_parts_ms"`
	// VoiceToVoicePath is the mean of each part as it fell on the path
	// (pipeline.PathMS); the parts add up to VoiceToVoiceMean.
	VoiceToVoicePath map[string]float64     `json:"voice_to_voice_path_mean_ms"`
	VoiceToVoiceMean float64                `json:"voice_to_voice_mean_ms"`
	Compute          map[string]percentiles `json:"stage_compute_ms"`
	Speculated       int                    `json:"speculated"`
	// PeakRSSBytes is the whole assistant's peak resident memory over
	// the replay (the kernel's high-water mark), Peak the peak of each
	// part of it (sampled, with RSS the high-water mark); MemoryEnd its
	// memory once the replay is over, every model loaded.
	PeakRSSBytes int64         `json:"peak_rss_bytes"`
	Peak         memstat.Usage `json:"peak"`
	MemoryEnd    memstat.Usage `json:"memory_end"`
}

type underrunGap struct {
	Reply   int     `json:"reply"`
	Chunk   int     `json:"chunk"`
	Chunks  int     `json:"chunks"`
	AtMS    float64 `json:"at_ms"`
	GapMS   float64 `json:"gap_ms"`
	Between bool    `json:"between_chunks"`
}

func underrunGaps(gaps []pipeline.UnderrunGap) []underrunGap {
	out := make([]underrunGap, len(gaps))
	for i, g := range gaps {
		out[i] = underrunGap{Reply: g.Reply, Chunk: g.Chunk, Chunks: g.Chunks, AtMS: ms(g.At), GapMS: ms(g.Length), Between: g.Between}
	}
	return out
}

type percentiles struct {
	P50 float64 `json:"p50"`
	P95 float64 `json:"p95"`
}

func (a *app) benchPipelineCmd() *cobra.Command {
	var scale float64
	cmd := &cobra.Command{
		Use: "pipeline IN.wav",
		Example: `  voice-agent bench pipeline test/testdata/demo.wav --asr scripted --llm scripted --script test/testdata/demo.json
  voice-agent bench pipeline talk.wav --json > pipeline.json`,
		Short: "Per-stage compute and voice-to-voice latency of a recorded conversation, with the stages' compute on the clock",
		Long: `Replays IN.wav through the whole pipeline with each stage's measured compute
charged to the replay clock (--compute-scale, 1: this machine), and reports
what each stage computed per turn and the voice-to-voice latency (end of the
user's speech to the first reply audio), p50 and p95, with --json as JSON.

Stages use the installed models; a stage whose model is not installed runs
its stand-in instead (energy VAD, no turn model, tone TTS, and with --script
the scripted recognizer and LLM), and the report names it.`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			// Streamed, so the peak RSS reported is the pipeline's, not
			// the recording's.
			input, err := audio.OpenWAVMono16k(cmd.Context(), args[0])
			if err != nil {
				return err
			}
			defer input.Close()
			sampler := memstat.Sample(memorySampling)
			defer sampler.Stop()
			stages, swapped := a.cfg.Stages.WithInstalled()
			clk := clock.NewVirtual()
			cfg, closeStages, err := wiring.Build(stages, clk)
			if err != nil {
				return err
			}
			defer closeStages()
			cfg.ComputeScale = scale
			res, err := pipeline.Replay(cmd.Context(), clk, cfg, audio.VirtualConfig{Source: input, NoRecording: true}, nil)
			if err != nil {
				return err
			}
			// A replay cut short ends quietly; its figures would pass for
			// the recording's.
			if err := cmd.Context().Err(); err != nil {
				return fmt.Errorf("bench pipeline: stopped after %d turns, before the end of %s: %w", len(res.Metrics), args[0], err)
			}
			b := summarizeBench(res.Metrics)
			b.Input, b.ComputeScale, b.Swapped, b.Underruns = args[0], scale, swapped, res.Underruns
			b.UnderrunGaps = underrunGaps(res.Gaps)
			b.PeakRSSBytes, b.Peak, b.MemoryEnd = peaks(sampler)
			b.Stages = map[string]string{"vad": stages.VAD, "asr": stages.ASR, "turn": stages.Turn, "llm": stages.LLM, "tts": stages.TTS}
			if a.json {
				return json.NewEncoder(cmd.OutOrStdout()).Encode(b)
			}
			printBench(cmd.OutOrStdout(), b)
			return nil
		},
	}
	computeScaleFlag(cmd.Flags(), &scale, 1)
	return a.stageFlags(cmd, wiring.PipelineFlags)
}

func summarizeBench(turns []pipeline.TurnMetrics) pipelineBench {
	b := pipelineBench{Turns: len(turns), Compute: map[string]percentiles{}, VoiceToVoiceParts: map[string]percentiles{},
		VoiceToVoicePath: map[string]float64{}}
	var e2e []float64
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
		}
		if c := m.Compute; c != nil {
			for name, v := range map[string]float64{"vad": c.VAD, "asr": c.ASR, "turn": c.Turn, "llm": c.LLM,
				"llm_prefill": c.LLMPrefill, "llm_decode": c.LLMDecode, "tts": c.TTS} {
				per[name] = append(per[name], v)
			}
		}
	}
	b.VoiceToVoice = percentiles{P50: pipeline.Percentile(e2e, 50), P95: pipeline.Percentile(e2e, 95)}
	// Means, not percentiles: only means of the parts add up to the mean
	// of their sums.
	if b.Answered > 0 {
		b.VoiceToVoiceMean /= float64(b.Answered)
		for name := range b.VoiceToVoicePath {
			b.VoiceToVoicePath[name] /= float64(b.Answered)
		}
	}
	for name, v := range per {
		b.Compute[name] = percentiles{P50: pipeline.Percentile(v, 50), P95: pipeline.Percentile(v, 95)}
	}
	sum := pipeline.Summarize(turns)
	for _, name := range voiceToVoiceParts {
		b.VoiceToVoiceParts[name] = percentiles{P50: sum.P50[name], P95: sum.P95[name]}
	}
	return b
}

// voiceToVoiceParts are the parts of voice-to-voice latency, in order.
var voiceToVoiceParts = []string{"endpointing", "asr", "first_token", "first_audio", "playback"}

func printBench(w io.Writer, b pipelineBench) {
	fmt.Fprintf(w, "%s: %d turns, %d answered (%d speculated), compute x%g on the clock\n", b.Input, b.Turns, b.Answered, b.Speculated, b.ComputeScale)
	fmt.Fprintf(w, "stages: vad %s, asr %s, turn %s, llm %s, tts %s", b.Stages["vad"], b.Stages["asr"], b.Stages["turn"], b.Stages["llm"], b.Stages["tts"])
	if len(b.Swapped) > 0 {
		fmt.Fprintf(w, " (stand-ins for %v: models not installed)", b.Swapped)
	}
	fmt.Fprintln(w)
	fmt.Fprintf(w, "voice to voice: p50 %.0f ms, p95 %.0f ms; playback underruns after a reply's first audio: %d\npeak %s\nat the end %s\n", b.VoiceToVoice.P50, b.VoiceToVoice.P95, b.Underruns, b.Peak, b.MemoryEnd)
	for _, g := range b.UnderrunGaps {
		where := fmt.Sprintf("inside chunk %d of %d (synthesized slower than it played)", g.Chunk, g.Chunks)
		if g.Between {
			where = fmt.Sprintf("after chunk %d of %d (the next began late)", g.Chunk, g.Chunks)
		}
		fmt.Fprintf(w, "  dry %.0f ms in reply %d, %.2f s into its audio, %s\n", g.GapMS, g.Reply, g.AtMS/1000, where)
	}
	fmt.Fprintf(w, "voice to voice on the path (mean ms, adding up to the mean, %.0f ms):\n", b.VoiceToVoiceMean)
	for _, name := range voiceToVoiceParts {
		fmt.Fprintf(w, "  %-12s %10.1f\n", name, b.VoiceToVoicePath[name])
	}
	fmt.Fprintln(w, "each stage's own latency (ms, overlapping the endpointing wait when speculated): p50 p95")
	for _, name := range voiceToVoiceParts {
		p := b.VoiceToVoiceParts[name]
		fmt.Fprintf(w, "  %-12s %10.1f %8.1f\n", name, p.P50, p.P95)
	}
	fmt.Fprintln(w, "compute per turn (ms):   p50      p95")
	for _, name := range []string{"vad", "asr", "turn", "llm", "llm_prefill", "llm_decode", "tts"} {
		c := b.Compute[name]
		fmt.Fprintf(w, "  %-12s %10.1f %8.1f\n", name, c.P50, c.P95)
	}
}
