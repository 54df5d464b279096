package bench

// The idle benchmark: what the assistant costs while nobody talks to it,
// as on glasses that listen all day.

import (
	"bytes"
	"cmp"
	"context"
	"fmt"
	"path/filepath"
	"runtime/pprof"
	"slices"
	"strings"
	"syscall"
	"time"

	"github.com/google/pprof/profile"

	"github.com/voiceassistant/voice/audio"
	"github.com/voiceassistant/voice/audio/device"
	"github.com/voiceassistant/voice/internal/memstat"
	"github.com/voiceassistant/voice/wiring"
)

// IdleOptions says how long the idle benchmark listens, and to what.
type IdleOptions struct {
	// Warmup runs before anything is measured: loading is not idling.
	Warmup time.Duration
	// Measure is how long the figures are taken over, in real time.
	Measure time.Duration
	// Noise, if set, is a recording of a room without speech (WAV, any
	// rate) that stands in for what the microphone captures, looped; else
	// the device's own capture (on the null backend, silence).
	Noise string
}

// IdleResult is what a session cost while nobody spoke.
type IdleResult struct {
	Measured   Measured `json:"measured"`
	Activation string   `json:"activation"`
	// Input is "silence" (the device's capture) or the noise file's name.
	Input string `json:"input"`
	// FrontEnd says which parts of the audio front end ran ("aec+ns",
	// "none").
	FrontEnd string  `json:"frontend"`
	Seconds  float64 `json:"seconds"`
	// CPUPercent is the process's CPU time, user and system, over the
	// measured span, in percent of one core (CPU seconds a minute / 0.6).
	CPUPercent float64 `json:"cpu_percent"`
	// Parts splits CPUPercent by where the time went (a CPU profile of
	// the span), largest first.
	Parts []IdlePart `json:"parts"`
	// Samples is how many profile samples the split rests on.
	Samples int `json:"samples"`
	// Memory is the process's at the end, Peak the peak of each field
	// over the measured span.
	Memory memstat.Usage `json:"memory"`
	Peak   memstat.Usage `json:"peak"`
}

// IdlePart is one part of the idle CPU.
type IdlePart struct {
	Part       string  `json:"part"`
	CPUPercent float64 `json:"cpu_percent"`
}

// Idle runs the assistant on dev in real time for o.Warmup plus
// o.Measure with nobody speaking, and measures what it costs.
func Idle(ctx context.Context, s wiring.Stages, dev device.Config, o IdleOptions) (IdleResult, error) {
	if o.Measure <= 0 || o.Warmup < 0 {
		return IdleResult{}, fmt.Errorf("bench idle: measure %v after a warm-up of %v: both must be positive", o.Measure, o.Warmup)
	}
	res := IdleResult{Activation: s.Activation.String(), Input: "silence", FrontEnd: frontEndParts(s.FrontEnd), Seconds: o.Measure.Seconds()}
	var noise audio.FrontEnd
	if o.Noise != "" {
		pcm, err := audio.ReadWAVMono16k(ctx, o.Noise)
		if err != nil {
			return IdleResult{}, err
		}
		if len(pcm) < device.FrameSize {
			return IdleResult{}, fmt.Errorf("bench idle: %s holds less than a frame of audio", o.Noise)
		}
		noise, res.Input = &loop{pcm: pcm}, filepath.Base(o.Noise)
	}
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	measured := make(chan error, 1)
	listening := func() {
		go func() {
			defer cancel()
			measured <- res.measure(ctx, o)
		}()
	}
	_, err := wiring.Live{
		Stages: s, Device: dev, Listening: listening,
		Capture: func(inner audio.FrontEnd) audio.FrontEnd { return audio.Chain(noise, inner) },
	}.Run(ctx)
	if err != nil {
		return IdleResult{}, err
	}
	select {
	case err := <-measured:
		return res, err
	default:
		return IdleResult{}, fmt.Errorf("bench idle: stopped before the figures were taken: %w", context.Cause(ctx))
	}
}

const idleMemorySampling = time.Second

// measure waits out the warm-up and takes the figures over o.Measure.
func (r *IdleResult) measure(ctx context.Context, o IdleOptions) error {
	if !sleep(ctx, o.Warmup) {
		return ctx.Err()
	}
	// Idle memory moves slowly, and sampling it as often as the other
	// benchmarks do would be a good part of what is measured.
	sampler := memstat.Sample(idleMemorySampling)
	var prof bytes.Buffer
	if err := pprof.StartCPUProfile(&prof); err != nil {
		sampler.Stop()
		return fmt.Errorf("bench idle: %w", err)
	}
	before, start := cpuTime(), time.Now()
	ok := sleep(ctx, o.Measure)
	spent, wall := cpuTime()-before, time.Since(start)
	pprof.StopCPUProfile()
	r.Peak, r.Memory = sampler.Stop(), memstat.Now()
	if !ok {
		return ctx.Err()
	}
	r.CPUPercent = 100 * spent.Seconds() / wall.Seconds()
	p, err := profile.Parse(&prof)
	if err != nil {
		return fmt.Errorf("bench idle: reading the CPU profile: %w", err)
	}
	r.Parts, r.Samples = split(p, r.CPUPercent)
	return nil
}

func sleep(ctx context.Context, d time.Duration) bool {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return true
	case <-ctx.Done():
		return false
	}
}

// cpuTime is the process's CPU time so far, every thread's, user and
// system.
func cpuTime() time.Duration {
	var u syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &u); err != nil {
		return 0
	}
	return time.Duration(u.Utime.Nano() + u.Stime.Nano())
}

func frontEndParts(f wiring.FrontEnd) string {
	var parts []string
	for _, p := range []struct {
		on   bool
		name string
	}{{f.AEC, "aec"}, {f.NS, "ns"}, {f.AGC, "agc"}} {
		if p.on {
			parts = append(parts, p.name)
		}
	}
	if len(parts) == 0 {
		return "none"
	}
	return strings.Join(parts, "+")
}

// idleParts name where a profile sample's time went by the innermost
// function of the assistant's own on its stack (a model's runtime, a
// C library, the Go runtime under it are charged to the stage that
// called them). The first prefix a function has wins.
var idleParts = []struct{ prefix, part string }{
	{"github.com/voiceassistant/voice/audio.dot", "resampler"},
	{"github.com/voiceassistant/voice/audio.(*Resampler)", "resampler"},
	{"github.com/voiceassistant/voice/audio/frontend.", "front end"},
	{"github.com/voiceassistant/voice/vad", "vad"},
	{"github.com/voiceassistant/voice/asr", "asr"},
	{"github.com/voiceassistant/voice/turn", "turn"},
	{"github.com/voiceassistant/voice/llm", "llm"},
	{"github.com/voiceassistant/voice/tts", "tts"},
	{"github.com/voiceassistant/voice/audio/device.(*Duplex).process", "device callback"},
	{"github.com/gen2brain/malgo", "device callback"},
	{"github.com/voiceassistant/voice/audio/device.", "capture reader"},
	{"github.com/voiceassistant/voice/pipeline", "pipeline"},
	{"github.com/voiceassistant/voice/bench.", "this benchmark"},
	{"github.com/voiceassistant/voice/internal/memstat.", "this benchmark"},
	{"runtime/pprof.", "this benchmark"},
}

// Parts of a sample with none of the assistant's functions on its stack:
// the Go runtime's own work (the scheduler, timers, the collector) and
// threads Go did not make and cannot see into (the audio backend's, a
// model runtime's pool).
const (
	partRuntime = "Go runtime"
	partForeign = "outside Go"
)

// IdlePartNames are the parts IdleResult.Parts may name.
var IdlePartNames = func() []string {
	names := []string{partRuntime, partForeign}
	for _, p := range idleParts {
		if !slices.Contains(names, p.part) {
			names = append(names, p.part)
		}
	}
	return names
}()

// split divides total among the parts by their share of p's samples.
func split(p *profile.Profile, total float64) ([]IdlePart, int) {
	counts := map[string]int64{}
	var n int64
	for _, s := range p.Sample {
		part := samplePart(s)
		counts[part] += s.Value[0]
		n += s.Value[0]
	}
	if n == 0 {
		return nil, 0
	}
	parts := make([]IdlePart, 0, len(counts))
	for part, c := range counts {
		parts = append(parts, IdlePart{Part: part, CPUPercent: total * float64(c) / float64(n)})
	}
	slices.SortFunc(parts, func(a, b IdlePart) int {
		return cmp.Or(cmp.Compare(b.CPUPercent, a.CPUPercent), strings.Compare(a.Part, b.Part))
	})
	return parts, int(n)
}

func samplePart(s *profile.Sample) string {
	foreign := false
	for _, loc := range s.Location {
		for _, line := range loc.Line {
			if line.Function == nil {
				continue
			}
			name := line.Function.Name
			for _, p := range idleParts {
				if strings.HasPrefix(name, p.prefix) {
					return p.part
				}
			}
			foreign = foreign || name == "runtime._ExternalCode" || name == "runtime._LostExternalCode"
		}
	}
	if foreign || len(s.Location) == 0 {
		return partForeign
	}
	return partRuntime
}

// loop is a capture stage that puts a recording, over and over, in place
// of what the microphone captured.
type loop struct {
	pcm []float32
	pos int
}

func (*loop) Far([]float32) error { return nil }

func (l *loop) Near(frame []float32) ([]float32, error) {
	out := make([]float32, len(frame))
	for i := range out {
		out[i] = l.pcm[l.pos]
		l.pos = (l.pos + 1) % len(l.pcm)
	}
	return out, nil
}
