package pipeline

import (
	"context"
	"errors"
	"time"

	"golang.org/x/sync/errgroup"

	"github.com/voiceassistant/voice/audio"
	"github.com/voiceassistant/voice/internal/clock"
)

// ReplayResult is what a replay produced.
type ReplayResult struct {
	// Recording is the assistant's audio as played, aligned with the input.
	Recording []float32
	Format    audio.Format
	Metrics   []TurnMetrics
	Underruns uint64
	// Gaps are where playback ran dry (the first ones; Underruns counts
	// the periods of all), each placed in its reply and chunk.
	Gaps []UnderrunGap
	// Covered is how much of the input was replayed: all of it unless
	// the replay was stopped.
	Covered time.Duration
}

// Replay runs the pipeline over recorded audio on a virtual clock, as fast
// as the stages allow (or at dev.Pace), calling onEvent for every event in
// order. cfg's Clock and Device are set here to clk (which stages such as
// scripted stand-ins may also use) and a virtual device.
func Replay(ctx context.Context, clk *clock.Virtual, cfg Config, dev audio.VirtualConfig, onEvent func(Event)) (*ReplayResult, error) {
	vd, err := audio.NewVirtual(clk, dev)
	if err != nil {
		return nil, err
	}
	cfg.Clock, cfg.Device = clk, vd
	p, err := New(cfg)
	if err != nil {
		return nil, err
	}
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	var g errgroup.Group
	g.Go(func() error {
		for e := range p.Events() {
			if onEvent != nil {
				onEvent(e)
			}
		}
		return nil
	})
	g.Go(func() error { return vd.Run(ctx) })
	runErr := p.Run(ctx)
	// The pipeline may have ended first (a stage error): stop the device.
	cancel()
	err = g.Wait()
	if errors.Is(runErr, err) {
		err = nil // the pipeline ends with the device's error as its own
	}
	err = errors.Join(runErr, err)
	metrics := p.Metrics()
	return &ReplayResult{
		Recording: vd.Recording(),
		Format:    vd.Player().Format(),
		Metrics:   metrics,
		Underruns: vd.Player().Underruns(),
		Gaps:      placeGaps(vd.Player().Gaps(), metrics, vd.Player().Format()),
		Covered:   vd.Position(),
	}, err
}

// UnderrunGap is a gap in a reply's playback (audio.Gap): in the Reply-th
// turn's reply (counting from 1 over ReplayResult.Metrics; 0 if none
// holds it), its Chunk-th of Chunks chunks, At into the reply's audio,
// Length long. Between says the chunk had played whole and the next had
// not begun (its synthesis started late); otherwise the chunk itself was
// synthesized slower than it played.
type UnderrunGap struct {
	Reply, Chunk, Chunks int
	At, Length           time.Duration
	Between              bool
}

// placeGaps finds each gap's reply and chunk by the queue position where
// its audio ran out.
func placeGaps(gaps []audio.Gap, metrics []TurnMetrics, f audio.Format) []UnderrunGap {
	out := make([]UnderrunGap, 0, len(gaps))
	for _, g := range gaps {
		u := UnderrunGap{Length: f.Duration(g.Frames)}
		for ri, m := range metrics {
			for ci, c := range m.Chunks {
				if g.At <= c.Start || g.At > c.End {
					continue
				}
				u.Reply, u.Chunk, u.Chunks = ri+1, ci+1, len(m.Chunks)
				u.At = f.Duration(int64(g.At-m.Chunks[0].Start) / int64(f.Channels))
				u.Between = g.At == c.End && ci+1 < len(m.Chunks)
			}
		}
		out = append(out, u)
	}
	return out
}
