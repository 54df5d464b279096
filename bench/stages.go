package bench

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"runtime/debug"
	"sync"
	"time"

	"github.com/voiceassistant/voice/audio"
	"github.com/voiceassistant/voice/internal/clock"
	"github.com/voiceassistant/voice/internal/malloc"
	"github.com/voiceassistant/voice/internal/memstat"
	"github.com/voiceassistant/voice/internal/onnx"
	"github.com/voiceassistant/voice/pipeline"
	"github.com/voiceassistant/voice/tts/moss"
	"github.com/voiceassistant/voice/tts/normalize"
	"github.com/voiceassistant/voice/turn/smartturn"
	"github.com/voiceassistant/voice/wiring"
)

// StageResult is one stage's line of `bench stages`: what loading its model
// cost, and its compute on a unit of work.
type StageResult struct {
	Stage   string `json:"stage"`
	Backend string `json:"backend"`
	// LoadMS is the wall time to open the model; RSSMiB how much the
	// process's resident memory grew by it (weights, sessions, arenas),
	// AnonMiB and FileMiB its anonymous and file-backed parts.
	LoadMS  float64 `json:"load_ms"`
	RSSMiB  float64 `json:"rss_mib"`
	AnonMiB float64 `json:"anon_mib"`
	FileMiB float64 `json:"file_mib"`
	// The peaks over the stage's load and compute, above the memory
	// before it loaded: anonymous (what the budget counts), file-backed,
	// and the Go runtime's part of the anonymous.
	PeakAnonMiB float64 `json:"peak_anon_mib"`
	PeakFileMiB float64 `json:"peak_file_mib"`
	PeakGoMiB   float64 `json:"peak_go_mib"`
	// Unit names what ComputeMS is per: a VAD window, an ASR chunk, a
	// turn-model call, a second of synthesized audio.
	Unit      string  `json:"unit"`
	ComputeMS float64 `json:"compute_ms"`
	// RTF is compute time over audio time, where the unit is audio.
	RTF float64 `json:"rtf,omitempty"`
	// FirstAudioMS is the TTS's time to its first samples; AudioS how
	// much audio it made.
	FirstAudioMS float64 `json:"first_audio_ms,omitempty"`
	AudioS       float64 `json:"audio_s,omitempty"`
	// GoAllocMB and GoAllocs are what the TTS's Go side allocated while
	// it spoke (tensors, buffers, the audio handed on; ONNX Runtime's and
	// MNN's own allocations are not Go's).
	GoAllocMB float64 `json:"go_alloc_mb,omitempty"`
	GoAllocs  uint64  `json:"go_allocs,omitempty"`
	// LLM speed (engine-timed, as bench llm), and its first token in a
	// conversation (bench llm's turn test).
	PrefillTokS  float64 `json:"prefill_tok_s,omitempty"`
	DecodeTokS   float64 `json:"decode_tok_s,omitempty"`
	FirstTokenMS float64 `json:"first_token_ms,omitempty"`
	// Graphs splits the TTS's time by graph, and with --profile each
	// graph's by operator; OutsideGraphsMS is the rest of its wall time
	// (the Go side: sampling, tensors in and out, the audio handed on).
	Graphs          []GraphResult `json:"graphs,omitempty"`
	OutsideGraphsMS float64       `json:"outside_graphs_ms,omitempty"`
}

// GraphResult is one graph's share of a stage's compute.
type GraphResult struct {
	Graph     string  `json:"graph"`
	Calls     int     `json:"calls"`
	TotalMS   float64 `json:"total_ms"`
	MSPerCall float64 `json:"ms_per_call"`
	// MovingMS is the time of its nodes that move data (Concat, Slice,
	// Transpose...: the KV cache copied into the present), ComputeMS the
	// rest, from ONNX Runtime's profile (--profile; it slows the runs),
	// over the session's life: its warm-up runs at load included.
	MovingMS  float64            `json:"moving_ms,omitempty"`
	ComputeMS float64            `json:"compute_ms,omitempty"`
	OpsMS     map[string]float64 `json:"ops_ms,omitempty"`
	// A call's least time on this machine (--profile): its bytes (the
	// weights its matrix products read, onnx.ReadWeights, and its
	// inputs and outputs) over the read bandwidth, or its multiply-adds
	// over ONNX Runtime's matrix product rate, whichever is longer
	// (MachineLimits). TimesBound is MSPerCall over BoundMS.
	MBPerCall    float64 `json:"mb_per_call,omitempty"`
	MMACsPerCall float64 `json:"mmacs_per_call,omitempty"`
	BoundMS      float64 `json:"bound_ms,omitempty"`
	TimesBound   float64 `json:"times_bound,omitempty"`
	model        string
	runs         moss.RunRows // which of the model's runs
	tensorBytes  float64      // a call's inputs and outputs
}

// StagesResult is what Stages measured.
type StagesResult struct {
	Measured Measured      `json:"measured"`
	Input    string        `json:"input"`
	Stages   []StageResult `json:"stages"`
	Skipped  []string      `json:"skipped"`
	// As bench pipeline's: the run's peaks, and the memory at its end.
	PeakRSSBytes int64         `json:"peak_rss_bytes"`
	Peak         memstat.Usage `json:"peak"`
	MemoryEnd    memstat.Usage `json:"memory_end"`
	GOOS         string        `json:"goos"`
	GOARCH       string        `json:"goarch"`
	CPUs         int           `json:"cpus"`
	// Limits are the machine's, which --profile measures for the bounds.
	Limits *MachineLimits `json:"limits,omitempty"`
}

// StagesOptions are what Stages measures beyond each stage's load.
type StagesOptions struct {
	// Text is what the TTS says.
	Text string
	// LoadOnly measures only loading each model (memory under
	// emulation, where compute takes hours).
	LoadOnly bool
	// Profile splits the TTS's time by graph and operator, with ONNX
	// Runtime's profiler, which slows the runs.
	Profile bool
}

// Stages opens each stage's installed model in s in turn (the ones whose
// backend is real and whose model is where the agent looks; the others
// are listed as skipped) and measures its load and its compute on the
// recording at path and on o.Text.
func Stages(ctx context.Context, s wiring.Stages, path string, o StagesOptions) (StagesResult, error) {
	input, err := audio.ReadWAVMono16k(ctx, path)
	if err != nil {
		return StagesResult{}, err
	}
	res := StagesResult{Input: path, Skipped: []string{}, GOOS: runtime.GOOS, GOARCH: runtime.GOARCH, CPUs: runtime.NumCPU()}
	whole := memstat.Sample(memorySampling)
	defer whole.Stop()
	profiled := s
	if o.Profile {
		dir, err := os.MkdirTemp("", "voice-profile-")
		if err != nil {
			return res, err
		}
		defer os.RemoveAll(dir)
		profiled.ONNXProfile = filepath.Join(dir, "onnx")
		limits, err := measureLimits(onnx.Options{Library: s.ONNXRuntime})
		if err != nil {
			return res, err
		}
		res.Limits = &limits
	}
	for _, sm := range s.StageModels() {
		if sm.Stage == "runtime" {
			continue
		}
		if !sm.Loads || !sm.Present {
			res.Skipped = append(res.Skipped, sm.Stage)
			continue
		}
		b, err := benchStage(ctx, s, sm, input, o.Text, o.LoadOnly)
		if err == nil && o.Profile && len(b.Graphs) > 0 {
			// The profiler slows every node: the graphs are timed
			// above, and split and counted in a second, profiled run.
			if _, err = benchStage(ctx, profiled, sm, input, o.Text, o.LoadOnly); err == nil {
				err = profileGraphs(profiled.ONNXProfile, b.Graphs, *res.Limits)
			}
		}
		if err == nil {
			// Not every stage's work watches the context.
			err = ctx.Err()
		}
		if err != nil {
			return res, fmt.Errorf("%s: %w", sm.Stage, err)
		}
		res.Stages = append(res.Stages, b)
	}
	res.PeakRSSBytes, res.Peak, res.MemoryEnd = peaks(whole)
	return res, nil
}

// loaded times opening a stage and measures the memory it took.
func (b *StageResult) loaded(open func() (func() error, error)) (closeFn func() error, err error) {
	grown := memstat.Sample(memorySampling)
	before, start := grown.Reset(), time.Now()
	closeFn, err = open()
	b.LoadMS = ms(time.Since(start))
	load := grown.Stop().Sub(before)
	b.RSSMiB, b.AnonMiB, b.FileMiB = memstat.MiB(load.RSS), memstat.MiB(load.Anon), memstat.MiB(load.File)
	return closeFn, err
}

// stageWork is how one stage is measured: opening its model, and timing
// its compute on a unit of work into the stage's result.
type stageWork struct {
	unit    string
	open    func() (closeFn func() error, err error)
	compute func(b *StageResult) error
}

// benchStage opens one stage's model, measuring the load, and unless
// loadOnly measures its compute.
func benchStage(ctx context.Context, s wiring.Stages, sm wiring.StageModel, input []float32, text string, loadOnly bool) (b StageResult, err error) {
	b.Stage, b.Backend = sm.Stage, sm.Backend
	var w stageWork
	switch sm.Stage {
	case "vad":
		w = vadWork(s, input)
	case "asr":
		w = asrWork(s, input)
	case "turn":
		w = turnWork(ctx, s, input)
	case "llm":
		w = llmWork(ctx, s)
	case "tts":
		w = ttsWork(ctx, s, text)
	default:
		return b, fmt.Errorf("no benchmark for the stage %q", sm.Stage)
	}
	b.Unit = w.unit
	// What the stage before freed is given back first, so that neither
	// its garbage nor its freed C heap counts for or against this one.
	debug.FreeOSMemory()
	malloc.Trim()
	stage := memstat.Sample(memorySampling)
	before := stage.Reset()
	defer func() {
		peak := stage.Stop().Sub(before)
		b.PeakAnonMiB, b.PeakFileMiB, b.PeakGoMiB = memstat.MiB(peak.Anon), memstat.MiB(peak.File), memstat.MiB(peak.Go)
	}()
	closeFn, err := b.loaded(w.open)
	if closeFn != nil {
		defer func() { err = errors.Join(err, closeFn()) }()
	}
	if err != nil {
		return b, err
	}
	if loadOnly {
		return b, nil
	}
	return b, w.compute(&b)
}

// vadWork times the VAD per 32 ms window over input.
func vadWork(s wiring.Stages, input []float32) stageWork {
	var det pipeline.VAD
	return stageWork{
		unit: "32 ms window",
		open: func() (func() error, error) {
			d, c, err := wiring.NewVAD(s)
			det = d
			return c, err
		},
		compute: func(b *StageResult) error {
			start := time.Now()
			frames := feedFrames(input, func(f audio.Frame) error { _, err := det.Process(f); return err })
			if frames.err != nil {
				return frames.err
			}
			b.ComputeMS = perUnit(time.Since(start), frames.samples/512)
			b.RTF = time.Since(start).Seconds() / audio.Mono16k.Duration(int64(frames.samples)).Seconds()
			return nil
		},
	}
}

// asrWork times the recognizer per 160 ms chunk over input, its final
// transcript included.
func asrWork(s wiring.Stages, input []float32) stageWork {
	var r interface {
		Accept(audio.Frame) (string, error)
		Finalize() (string, error)
	}
	return stageWork{
		unit: "160 ms chunk",
		open: func() (func() error, error) {
			rec, err := wiring.NewRecognizer(s)
			if err != nil {
				return nil, err
			}
			r = rec
			return rec.Close, nil
		},
		compute: func(b *StageResult) error {
			start := time.Now()
			frames := feedFrames(input, func(f audio.Frame) error { _, err := r.Accept(f); return err })
			if frames.err != nil {
				return frames.err
			}
			if _, err := r.Finalize(); err != nil {
				return err
			}
			elapsed := time.Since(start)
			b.ComputeMS = perUnit(elapsed, frames.samples/int(audio.Mono16k.Samples(160*time.Millisecond)))
			b.RTF = elapsed.Seconds() / audio.Mono16k.Duration(int64(frames.samples)).Seconds()
			return nil
		},
	}
}

// turnWork times the turn model per call on input (it reads the last 8 s).
func turnWork(ctx context.Context, s wiring.Stages, input []float32) stageWork {
	var m *smartturn.Model
	return stageWork{
		unit: "call (8 s of audio)",
		open: func() (func() error, error) {
			var err error
			if m, err = wiring.NewTurnDetector(s); err != nil {
				return nil, err
			}
			return m.Close, nil
		},
		compute: func(b *StageResult) error {
			const calls = 5
			start := time.Now()
			for range calls {
				if _, err := m.Predict(ctx, input); err != nil {
					return err
				}
			}
			b.ComputeMS = perUnit(time.Since(start), calls)
			return nil
		},
	}
}

// llmWork measures the language model as LLM does, with one run a test.
func llmWork(ctx context.Context, s wiring.Stages) stageWork {
	var closeLoaded func() error
	return stageWork{
		unit: "token (decode)",
		open: func() (func() error, error) {
			_, c, err := wiring.NewGenerator(s, clock.NewStream(audio.ProcessingRate))
			if c != nil {
				closeLoaded = sync.OnceValue(c)
			}
			return closeLoaded, err
		},
		compute: func(b *StageResult) error {
			// As LLM: a model opened for each reply length, one at a
			// time, so the loaded one goes first.
			if err := closeLoaded(); err != nil {
				return err
			}
			res, err := LLM(ctx, s, 1)
			if err != nil {
				return err
			}
			t := res.Tests[0]
			b.PrefillTokS, b.DecodeTokS, b.FirstTokenMS = t.PrefillTokS, t.DecodeTokS, res.Turn.FirstTokenMS
			if t.DecodeTokS > 0 {
				b.ComputeMS = 1000 / t.DecodeTokS
			}
			return nil
		},
	}
}

// ttsWork times the synthesizer saying text, per second of its audio,
// split by graph where it says what its graphs ran.
func ttsWork(ctx context.Context, s wiring.Stages, text string) stageWork {
	var tts pipeline.Synthesizer
	return stageWork{
		unit: "second of audio",
		open: func() (func() error, error) {
			t, c, err := wiring.NewSynthesizer(s)
			tts = t
			return c, err
		},
		compute: func(b *StageResult) error {
			var samples int
			before, _ := graphRuns(tts, nil, 0)
			var memBefore, memAfter runtime.MemStats
			runtime.ReadMemStats(&memBefore)
			start := time.Now()
			err := tts.Synthesize(ctx, text, normalize.Detect(text), func(p []float32) error {
				if samples == 0 {
					b.FirstAudioMS = float64(time.Since(start).Microseconds()) / 1000
				}
				samples += len(p)
				return nil
			})
			if err != nil {
				return err
			}
			elapsed := time.Since(start)
			b.Graphs, b.OutsideGraphsMS = graphRuns(tts, before, elapsed)
			// p holds interleaved samples of every channel (MOSS: stereo).
			format := tts.Format()
			seconds := format.Duration(int64(samples / max(1, format.Channels))).Seconds()
			b.AudioS = seconds
			runtime.ReadMemStats(&memAfter)
			b.GoAllocMB = float64(memAfter.TotalAlloc-memBefore.TotalAlloc) / 1e6
			b.GoAllocs = memAfter.Mallocs - memBefore.Mallocs
			if seconds > 0 {
				b.RTF = elapsed.Seconds() / seconds
				b.ComputeMS = 1000 * b.RTF
			}
			return nil
		},
	}
}

type fed struct {
	samples int
	err     error
}

// feedFrames gives input to process in 10 ms frames, as the device does.
func feedFrames(input []float32, process func(audio.Frame) error) fed {
	n := int(audio.Mono16k.Samples(10 * time.Millisecond))
	for pos := 0; pos+n <= len(input); pos += n {
		if err := process(audio.Frame{Format: audio.Mono16k, Pos: int64(pos), Samples: input[pos : pos+n]}); err != nil {
			return fed{pos, err}
		}
	}
	return fed{samples: len(input) / n * n}
}

func perUnit(d time.Duration, units int) float64 {
	if units <= 0 {
		return 0
	}
	return float64(d.Microseconds()) / 1000 / float64(units)
}
