package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"maps"
	"os"
	"path/filepath"
	"runtime"
	"runtime/debug"
	"slices"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/spf13/cobra"

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

// stageBench is one stage's line of `bench stages`: what loading its model
// cost, and its compute on a unit of work.
type stageBench struct {
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
	Graphs          []graphBench `json:"graphs,omitempty"`
	OutsideGraphsMS float64      `json:"outside_graphs_ms,omitempty"`
}

// graphBench is one graph's share of a stage's compute.
type graphBench struct {
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
	// (machineLimits). TimesBound is MSPerCall over BoundMS.
	MBPerCall    float64 `json:"mb_per_call,omitempty"`
	MMACsPerCall float64 `json:"mmacs_per_call,omitempty"`
	BoundMS      float64 `json:"bound_ms,omitempty"`
	TimesBound   float64 `json:"times_bound,omitempty"`
	model        string
	runs         moss.RunRows // which of the model's runs
	tensorBytes  float64      // a call's inputs and outputs
}

type stagesBench struct {
	Input   string       `json:"input"`
	Stages  []stageBench `json:"stages"`
	Skipped []string     `json:"skipped"`
	// As bench pipeline's: the run's peaks, and the memory at its end.
	PeakRSSBytes int64         `json:"peak_rss_bytes"`
	Peak         memstat.Usage `json:"peak"`
	MemoryEnd    memstat.Usage `json:"memory_end"`
	GOOS         string        `json:"goos"`
	GOARCH       string        `json:"goarch"`
	CPUs         int           `json:"cpus"`
	// Limits are the machine's, which --profile measures for the bounds.
	Limits *machineLimits `json:"limits,omitempty"`
}

func (a *app) benchStagesCmd() *cobra.Command {
	text := "Sure. The capital of France is Paris, a city of about two million people on the Seine."
	var loadOnly, profile bool
	cmd := &cobra.Command{
		Use: "stages IN.wav",
		Example: `  voice-agent bench stages test/testdata/demo.wav
  voice-agent bench stages talk.wav --json > stages.json`,
		Short: "Load time, memory and compute of each installed model, one stage at a time",
		Long: `Opens each stage's installed model in turn (the ones whose backend is real and
whose model is where the agent looks; the others are listed as skipped) and
reports what loading it cost (wall time, resident memory grown) and its
compute: per VAD window and ASR chunk over IN.wav, per turn-model call on its
last 8 s, prefill and decode speed of the LLM (as bench llm), and the TTS's
real-time factor and time to first audio on --text.`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			input, err := audio.ReadWAVMono16k(cmd.Context(), args[0])
			if err != nil {
				return err
			}
			res := stagesBench{Input: args[0], Skipped: []string{}, GOOS: runtime.GOOS, GOARCH: runtime.GOARCH, CPUs: runtime.NumCPU()}
			whole := memstat.Sample(memorySampling)
			defer whole.Stop()
			s := a.cfg.Stages
			profiled := s
			if profile {
				dir, err := os.MkdirTemp("", "voice-profile-")
				if err != nil {
					return err
				}
				defer os.RemoveAll(dir)
				profiled.ONNXProfile = filepath.Join(dir, "onnx")
				limits, err := measureLimits(onnx.Options{Library: s.ONNXRuntime})
				if err != nil {
					return err
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
				b, err := benchStage(cmd.Context(), s, sm, input, text, loadOnly)
				if err == nil && profile && len(b.Graphs) > 0 {
					// The profiler slows every node: the graphs are timed
					// above, and split and counted in a second, profiled run.
					if _, err = benchStage(cmd.Context(), profiled, sm, input, text, loadOnly); err == nil {
						err = profileGraphs(profiled.ONNXProfile, b.Graphs, *res.Limits)
					}
				}
				if err == nil {
					// Not every stage's work watches the context.
					err = cmd.Context().Err()
				}
				if err != nil {
					return fmt.Errorf("%s: %w", sm.Stage, err)
				}
				res.Stages = append(res.Stages, b)
			}
			res.PeakRSSBytes, res.Peak, res.MemoryEnd = peaks(whole)
			if a.json {
				return json.NewEncoder(cmd.OutOrStdout()).Encode(res)
			}
			printStages(cmd.OutOrStdout(), res)
			return nil
		},
	}
	cmd.Flags().StringVar(&text, "text", text, "what the TTS says")
	cmd.Flags().BoolVar(&loadOnly, "load-only", false, "measure only loading each model (memory under emulation, where compute takes hours)")
	cmd.Flags().BoolVar(&profile, "profile", false, "split the TTS's time by graph and operator (ONNX Runtime's profiler, which slows the runs)")
	return a.stageFlags(cmd, wiring.PipelineFlags)
}

// memorySampling is how often the benchmarks read the process's memory
// for its peaks: a few hundred microseconds of work a second.
const memorySampling = 5 * time.Millisecond

// peaks is what a benchmark reports of its memory: the kernel's exact
// high-water mark of resident memory, the sampled peaks of its parts (RSS
// the exact one), and the memory now.
func peaks(s *memstat.Sampler) (peakRSS int64, peak, end memstat.Usage) {
	peak, peakRSS = s.Reset(), memstat.PeakRSS()
	peak.RSS = max(peak.RSS, peakRSS)
	return peakRSS, peak, memstat.Now()
}

// loaded times opening a stage and measures the memory it took.
func (b *stageBench) loaded(open func() (func() error, error)) (closeFn func() error, err error) {
	grown := memstat.Sample(memorySampling)
	before, start := grown.Reset(), time.Now()
	closeFn, err = open()
	b.LoadMS = ms(time.Since(start))
	load := grown.Stop().Sub(before)
	b.RSSMiB, b.AnonMiB, b.FileMiB = memstat.MiB(load.RSS), memstat.MiB(load.Anon), memstat.MiB(load.File)
	return closeFn, err
}

// benchStage opens one stage's model, measuring the load, and unless
// loadOnly measures its compute.
func benchStage(ctx context.Context, s wiring.Stages, sm wiring.StageModel, input []float32, text string, loadOnly bool) (b stageBench, err error) {
	b.Stage, b.Backend = sm.Stage, sm.Backend
	var open func() (func() error, error)
	var compute func() error
	switch sm.Stage {
	case "vad":
		var det pipeline.VAD
		open = func() (func() error, error) {
			d, c, err := wiring.NewVAD(s)
			det = d
			return c, err
		}
		b.Unit = "32 ms window"
		compute = func() error {
			start := time.Now()
			frames := feedFrames(input, func(f audio.Frame) error { _, err := det.Process(f); return err })
			if frames.err != nil {
				return frames.err
			}
			b.ComputeMS = perUnit(time.Since(start), frames.samples/512)
			b.RTF = time.Since(start).Seconds() / audio.Mono16k.Duration(int64(frames.samples)).Seconds()
			return nil
		}
	case "asr":
		var r interface {
			Accept(audio.Frame) (string, error)
			Finalize() (string, error)
		}
		open = func() (func() error, error) {
			rec, err := wiring.NewRecognizer(s)
			if err != nil {
				return nil, err
			}
			r = rec
			return rec.Close, nil
		}
		b.Unit = "160 ms chunk"
		compute = func() error {
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
		}
	case "turn":
		var m *smartturn.Model
		open = func() (func() error, error) {
			var err error
			if m, err = wiring.NewTurnDetector(s); err != nil {
				return nil, err
			}
			return m.Close, nil
		}
		b.Unit = "call (8 s of audio)"
		compute = func() error {
			const calls = 5
			start := time.Now()
			for range calls {
				if _, err := m.Predict(ctx, input); err != nil {
					return err
				}
			}
			b.ComputeMS = perUnit(time.Since(start), calls)
			return nil
		}
	case "llm":
		var closeLoaded func() error
		open = func() (func() error, error) {
			_, c, err := wiring.NewGenerator(s, clock.NewStream(audio.ProcessingRate))
			if c != nil {
				closeLoaded = sync.OnceValue(c)
			}
			return closeLoaded, err
		}
		b.Unit = "token (decode)"
		compute = func() error {
			// As bench llm: a model opened for each reply length, one at a
			// time, so the loaded one goes first.
			if err := closeLoaded(); err != nil {
				return err
			}
			res, err := benchLLM(ctx, func(maxTokens int) (pipeline.Generator, func() error, error) {
				st := s
				st.LLMMaxTokens = maxTokens
				return wiring.NewGenerator(st, clock.NewStream(audio.ProcessingRate))
			}, s.SystemPrompt, 1)
			if err != nil {
				return err
			}
			t := res.Tests[0]
			b.PrefillTokS, b.DecodeTokS, b.FirstTokenMS = t.PrefillTokS, t.DecodeTokS, res.Turn.FirstTokenMS
			if t.DecodeTokS > 0 {
				b.ComputeMS = 1000 / t.DecodeTokS
			}
			return nil
		}
	case "tts":
		var tts pipeline.Synthesizer
		open = func() (func() error, error) {
			t, c, err := wiring.NewSynthesizer(s)
			tts = t
			return c, err
		}
		b.Unit = "second of audio"
		compute = func() error {
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
		}
	default:
		return b, fmt.Errorf("no benchmark for the stage %q", sm.Stage)
	}
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
	closeFn, err := b.loaded(open)
	if closeFn != nil {
		defer func() { err = errors.Join(err, closeFn()) }()
	}
	if err != nil {
		return b, err
	}
	if loadOnly {
		return b, nil
	}
	return b, compute()
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

func printStages(w io.Writer, r stagesBench) {
	fmt.Fprintf(w, "%-5s %9s %9s %9s %9s %10s  %s\n", "stage", "load ms", "anon MiB", "file MiB", "peak anon", "compute ms", "per")
	for _, s := range r.Stages {
		extra := ""
		switch {
		case s.Stage == "llm":
			extra = fmt.Sprintf("  prefill %.0f tok/s, decode %.0f tok/s, first token of a turn %.0f ms", s.PrefillTokS, s.DecodeTokS, s.FirstTokenMS)
		case s.Stage == "tts":
			extra = fmt.Sprintf("  RTF %.3f, first audio %.0f ms; Go allocated %.1f MB in %d allocations", s.RTF, s.FirstAudioMS, s.GoAllocMB, s.GoAllocs)
		case s.RTF > 0:
			extra = fmt.Sprintf("  RTF %.4f", s.RTF)
		}
		fmt.Fprintf(w, "%-5s %9.1f %9.1f %9.1f %9.1f %10.3f  %s%s\n", s.Stage, s.LoadMS, s.AnonMiB, s.FileMiB, s.PeakAnonMiB, s.ComputeMS, s.Unit, extra)
		for _, g := range s.Graphs {
			fmt.Fprintf(w, "      %-12s %5d calls, %8.1f ms, %7.2f ms a call\n", g.Graph, g.Calls, g.TotalMS, g.MSPerCall)
			if g.OpsMS != nil {
				fmt.Fprintf(w, "%18s of its node time %.0f%% moving data (profiled, over the session's life: %s ms)\n", "", 100*g.MovingMS/max(g.MovingMS+g.ComputeMS, 1e-9), topOps(g.OpsMS, 3))
			}
			if g.BoundMS > 0 {
				fmt.Fprintf(w, "%18s a call's bound %.2f ms (%.1f MB, %.0f M multiply-adds): %.1fx it\n", "", g.BoundMS, g.MBPerCall, g.MMACsPerCall, g.TimesBound)
			}
		}
		if len(s.Graphs) > 0 {
			fmt.Fprintf(w, "      %-12s %20.1f ms\n", "outside them", s.OutsideGraphsMS)
		}
	}
	if len(r.Skipped) > 0 {
		fmt.Fprintf(w, "skipped (a test double, off, or no model installed): %v\n", r.Skipped)
	}
	if l := r.Limits; l != nil {
		fmt.Fprintf(w, "bounds against this machine, one thread: read %.1f GB/s; ONNX Runtime's [1,768]x[768,3072] product fp32 %.1f, int8 %.1f, int4 %.1f G multiply-adds/s (on %d rows: %.1f, %.1f, %.1f)\n",
			l.ReadGBs, l.GMACs["fp32"], l.GMACs["int8"], l.GMACs["int4"], gemmRows, l.GMACs[rateKey("fp32", gemmRows)], l.GMACs[rateKey("int8", gemmRows)], l.GMACs[rateKey("int4", gemmRows)])
	}
	fmt.Fprintf(w, "anon, file: memory the load added, anonymous and file-backed; peak anon: the most anonymous memory over load and compute\n")
	fmt.Fprintf(w, "peak %s\nat the end %s\n%s/%s, %d CPUs\n", r.Peak, r.MemoryEnd, r.GOOS, r.GOARCH, r.CPUs)
}

// graphRuns splits a synthesizer's wall time over its graphs, where it
// says what its graphs ran (MOSS does): each graph's runs since before
// (its warm-up runs at load are not the text's), and what is left of
// elapsed outside them.
func graphRuns(tts pipeline.Synthesizer, before []graphBench, elapsed time.Duration) ([]graphBench, float64) {
	r, ok := tts.(interface{ Runs() []moss.GraphRuns })
	if !ok {
		return nil, 0
	}
	var graphs []graphBench
	inside := 0.0
	for _, g := range r.Runs() {
		gb := graphBench{Graph: g.Graph, Calls: g.Calls, TotalMS: ms(g.Time), model: g.Model, runs: g.Runs, tensorBytes: float64(g.InBytes + g.OutBytes)}
		for _, b := range before {
			if b.Graph == gb.Graph {
				gb.Calls -= b.Calls
				gb.TotalMS -= b.TotalMS
				gb.tensorBytes -= b.tensorBytes
			}
		}
		if gb.Calls > 0 {
			gb.MSPerCall = gb.TotalMS / float64(gb.Calls)
			gb.tensorBytes /= float64(gb.Calls)
		}
		inside += gb.TotalMS
		graphs = append(graphs, gb)
	}
	return graphs, ms(elapsed) - inside
}

// movingOps are the operators that move data rather than compute: in the
// synthesizer's decode step, the KV cache copied into the present one.
var movingOps = map[string]bool{
	"Concat": true, "Slice": true, "Transpose": true, "Reshape": true, "Gather": true,
	"Cast": true, "Expand": true, "Unsqueeze": true, "Squeeze": true, "Identity": true,
	"Split": true, "ScatterND": true, "Where": true, "Pad": true, "Tile": true,
}

// profileGraphs fills each of graphs' split by operator, and its bound,
// from the profiles ONNX Runtime wrote under prefix in a second run of
// the stage.
func profileGraphs(prefix string, graphs []graphBench, limits machineLimits) error {
	for i := range graphs {
		g := &graphs[i]
		p, err := onnx.ReadProfile(prefix, g.model)
		if err != nil {
			return err
		}
		// A session that runs two kinds (the decode step's shared form:
		// a chunk's text at once, frames one a step) is two graphs here,
		// its runs told apart by their products' rows.
		ops, runs := p.Ops, p.Runs
		switch g.runs {
		case moss.OneRowRuns:
			ops = maps.Clone(p.Ops)
			for op, d := range p.BatchedOps {
				ops[op] -= d
			}
			runs = slices.DeleteFunc(slices.Clone(runs), onnx.RunProducts.Batched)
		case moss.BatchedRuns:
			ops = p.BatchedOps
			runs = slices.DeleteFunc(slices.Clone(runs), func(r onnx.RunProducts) bool { return !r.Batched() })
		}
		g.OpsMS = map[string]float64{}
		for op, d := range ops {
			g.OpsMS[op] = ms(d)
			if movingOps[op] {
				g.MovingMS += ms(d)
			} else {
				g.ComputeMS += ms(d)
			}
		}
		if len(runs) == 0 || g.Calls == 0 {
			continue // no call to bound
		}
		w, err := onnx.ReadWeights(g.model)
		if err != nil {
			return err
		}
		// The profiled run speaks the same text after the same warm-up
		// runs at load: its last calls are the ones timed. MatMulNBits
		// computes at its bits' rate, the other products in fp32.
		runs = runs[max(0, len(runs)-g.Calls):]
		var macs, seconds float64
		for _, r := range runs {
			for product, byOp := range map[int]map[string]float64{1: r.One, gemmRows: r.Batch} {
				for op, n := range byOp {
					format := "fp32"
					if op == "MatMulNBits" {
						format = fmt.Sprintf("int%d", w.NBits)
					}
					rate := limits.GMACs[rateKey(format, product)]
					if rate == 0 {
						continue
					}
					n /= float64(len(runs))
					macs += n
					seconds += n / (rate * 1e9)
				}
			}
		}
		bytes := float64(w.Bytes) + g.tensorBytes
		g.MBPerCall, g.MMACsPerCall = bytes/1e6, macs/1e6
		g.BoundMS = 1000 * max(seconds, bytes/(limits.ReadGBs*1e9))
		if g.BoundMS > 0 {
			g.TimesBound = g.MSPerCall / g.BoundMS
		}
	}
	return nil
}

func ms(d time.Duration) float64 { return float64(d.Microseconds()) / 1000 }

// topOps names the n operators that took longest, with their times.
func topOps(ops map[string]float64, n int) string {
	names := make([]string, 0, len(ops))
	for op := range ops {
		names = append(names, op)
	}
	sort.Slice(names, func(i, j int) bool { return ops[names[i]] > ops[names[j]] })
	var parts []string
	for _, op := range names[:min(n, len(names))] {
		parts = append(parts, fmt.Sprintf("%s %.0f", op, ops[op]))
	}
	return strings.Join(parts, ", ")
}
