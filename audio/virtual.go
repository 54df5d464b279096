package audio

import (
	"context"
	"fmt"
	"sync"
	"time"

	"github.com/voiceassistant/voice/internal/clock"
)

// Echo is a simulated acoustic path from the speaker back into the mic.
type Echo struct {
	Delay time.Duration
	Gain  float64
}

// FrontEnd cleans the capture using what was played as the reference
// (echo cancellation, noise suppression, gain control). Frames are 10 ms
// of 16 kHz mono; Far gets each played period before Near gets the
// capture it may echo into.
type FrontEnd interface {
	Far(frame []float32) error
	Near(frame []float32) ([]float32, error)
}

// CaptureSource produces a capture signal piece by piece, so a long
// session need not be held in memory.
type CaptureSource interface {
	// Len is the signal's length in samples. A source that learns it as
	// it is read (a streamed WAV, WAVStream) may shorten it once, when its
	// end is read; the reads that follow are past it.
	Len() int64
	// Read fills out with the samples from stream position pos on; pos
	// only moves forward, one read after another.
	Read(pos int64, out []float32) error
}

// SampleWriter takes audio as it is produced (a WAVWriter does).
type SampleWriter interface {
	Write(samples []float32) error
}

// VirtualConfig configures a replay device.
type VirtualConfig struct {
	// Input is the capture signal, 16 kHz mono.
	Input []float32
	// Source, if set, produces the capture signal instead of Input.
	Source CaptureSource
	// NoRecording drops what is played instead of keeping it for
	// Recording (long sessions).
	NoRecording bool
	// Record, if set, takes what is played period by period instead of
	// Recording, so a long session's output goes to disk as it is made;
	// its error stops the replay.
	Record SampleWriter
	// Playback is the format the player takes (default 16 kHz mono).
	Playback Format
	// Period is the device period (default 10 ms).
	Period time.Duration
	// Pace is the speed relative to real time: 1 plays in real time, 10
	// ten times faster, 0 as fast as the pipeline reacts.
	Pace float64
	// MinTail keeps feeding silence after the input ends, so a turn that
	// ended with the input still gets committed (default 4 s, longer than
	// the endpointing fallback); MaxTail bounds how long the device then
	// waits for the assistant to finish (default 60 s).
	MinTail, MaxTail time.Duration
	// Echo, if set, mixes what is played back into the capture.
	Echo *Echo
	// FrontEnd, if set, processes every captured frame with the played
	// audio as its reference; it needs a 10 ms period.
	FrontEnd FrontEnd
	// Stall is how long to wait for the pipeline to react to a frame before
	// declaring it stuck (default 30 s of wall time).
	Stall time.Duration
}

// Virtual is a duplex device for replay: capture from memory, playback into
// memory, on a virtual clock that it advances one period at a time once the
// pipeline has reacted to the previous period.
//
// Timing mirrors a real duplex callback: when the frame covering
// [kP, (k+1)P) is delivered, the clock reads (k+1)P and the period rendered
// just before it plays during [(k+1)P, (k+2)P). A flush therefore silences
// playback one period after the decision.
type Virtual struct {
	cfg    VirtualConfig
	clk    *clock.Virtual
	player *Player
	frames chan Frame

	period   int // 16 kHz samples per period
	outBuf   []float32
	echoConv *Converter
	// echo is what was played, 16 kHz mono, from sample echoBase on: only
	// as far back as the echo path and the front-end's reference reach,
	// so a long session does not keep all it played.
	echo     []float32
	echoBase int64

	mu       sync.Mutex
	pos      int64 // the next frame's position
	inputEnd int64 // the input's length as last known (CaptureSource.Len)
	recorded []float32
	err      error
}

// NewVirtual returns a replay device driving clk.
func NewVirtual(clk *clock.Virtual, cfg VirtualConfig) (*Virtual, error) {
	if cfg.Playback == (Format{}) {
		cfg.Playback = Mono16k
	}
	if err := cfg.Playback.Validate(); err != nil {
		return nil, fmt.Errorf("virtual device: playback: %w", err)
	}
	if cfg.Period <= 0 {
		cfg.Period = 10 * time.Millisecond
	}
	if cfg.MinTail == 0 {
		cfg.MinTail = 4 * time.Second
	}
	if cfg.MaxTail == 0 {
		cfg.MaxTail = 60 * time.Second
	}
	if cfg.Stall <= 0 {
		cfg.Stall = 30 * time.Second
	}
	v := &Virtual{
		cfg:    cfg,
		clk:    clk,
		player: NewPlayer(cfg.Playback, 5*time.Second, clk),
		frames: make(chan Frame, 1),
		period: int(Mono16k.Samples(cfg.Period)),
		outBuf: make([]float32, int(cfg.Playback.Samples(cfg.Period))*cfg.Playback.Channels),
	}
	if v.period == 0 || v.period*int(time.Second) != int(cfg.Period)*ProcessingRate {
		return nil, fmt.Errorf("virtual device: period %v is not a whole number of 16 kHz samples", cfg.Period)
	}
	if cfg.Source == nil {
		cfg.Source = SliceSource(cfg.Input)
		v.cfg.Source = cfg.Source
	}
	// The recording usually spans the input and the minimum tail; sizing it
	// up front keeps long replays from copying it over and over.
	if !cfg.NoRecording && cfg.Record == nil {
		expect := cfg.Playback.Samples(Mono16k.Duration(cfg.Source.Len())+cfg.MinTail) * int64(cfg.Playback.Channels)
		v.recorded = make([]float32, 0, expect+int64(len(v.outBuf)))
	}
	if cfg.FrontEnd != nil && cfg.Period != 10*time.Millisecond {
		return nil, fmt.Errorf("virtual device: the front-end works on 10 ms frames, not %v", cfg.Period)
	}
	if cfg.Echo != nil || cfg.FrontEnd != nil {
		v.echo = make([]float32, 0, 2*v.echoWindow())
		conv, err := NewConverter(cfg.Playback, Mono16k)
		if err != nil {
			return nil, err
		}
		v.echoConv = conv
	}
	return v, nil
}

func (v *Virtual) Frames() <-chan Frame { return v.frames }
func (v *Virtual) Player() *Player      { return v.player }

// Err is why the device stopped early (a stalled pipeline), or nil.
func (v *Virtual) Err() error {
	v.mu.Lock()
	defer v.mu.Unlock()
	return v.err
}

// Recording is everything played, in the playback format, aligned with the
// input: sample i played at time i/rate.
func (v *Virtual) Recording() []float32 {
	v.mu.Lock()
	defer v.mu.Unlock()
	return v.recorded
}

// Run drives the replay until the input and the tail are done, ctx ends,
// or the pipeline stalls. It closes Frames when it returns.
func (v *Virtual) Run(ctx context.Context) (err error) {
	defer close(v.frames)
	defer func() {
		v.mu.Lock()
		v.err = err
		v.mu.Unlock()
	}()
	// the period playing while the first frame is captured
	if err := v.render(); err != nil {
		return err
	}
	start := time.Now()
	for pos := int64(0); ; pos += int64(v.period) {
		// A streamed recording's length is known once its end is read.
		inputEnd := v.cfg.Source.Len()
		v.mu.Lock()
		v.pos, v.inputEnd = pos, inputEnd
		v.mu.Unlock()
		minEnd := inputEnd + Mono16k.Samples(v.cfg.MinTail)
		maxEnd := inputEnd + Mono16k.Samples(v.cfg.MaxTail)
		if pos >= maxEnd || pos >= minEnd && v.idle() {
			return nil
		}
		if v.cfg.Pace > 0 {
			due := time.Duration(float64(Mono16k.Duration(pos)) / v.cfg.Pace)
			if err := clock.SleepWall(ctx, due-time.Since(start)); err != nil {
				return nil
			}
		}
		v.clk.Advance(v.cfg.Period)
		if err := v.clk.WaitIdle(ctx, v.cfg.Stall); err != nil {
			return v.stopped(ctx, err)
		}
		if err := v.render(); err != nil {
			return err
		}
		capture, err := v.capture(pos)
		if err != nil {
			return fmt.Errorf("virtual device: capture: %w", err)
		}
		samples, err := v.clean(pos, capture)
		if err != nil {
			return fmt.Errorf("virtual device: front-end: %w", err)
		}
		frame := Frame{Format: Mono16k, Pos: pos, Samples: samples}
		v.clk.Hold()
		select {
		case v.frames <- frame:
		case <-ctx.Done():
			v.clk.Release()
			return nil
		}
		if err := v.clk.WaitIdle(ctx, v.cfg.Stall); err != nil {
			return v.stopped(ctx, err)
		}
	}
}

func (v *Virtual) stopped(ctx context.Context, err error) error {
	if ctx.Err() != nil {
		return nil
	}
	return fmt.Errorf("virtual device: %w", err)
}

// idle is true when nothing is queued or pending on the clock, so stopping
// cuts nothing off.
func (v *Virtual) idle() bool {
	_, pending := v.clk.NextWake()
	return !pending && v.player.Written() == v.player.Consumed() && !v.player.active.Load()
}

// Position is how far into the input the replay has come.
func (v *Virtual) Position() time.Duration {
	v.mu.Lock()
	defer v.mu.Unlock()
	return Mono16k.Duration(min(v.pos, v.inputEnd))
}

// render plays one period into the recording and the echo path.
func (v *Virtual) render() error {
	v.player.Fill(v.outBuf)
	switch {
	case v.cfg.Record != nil:
		if err := v.cfg.Record.Write(v.outBuf); err != nil {
			return fmt.Errorf("virtual device: recording: %w", err)
		}
	case !v.cfg.NoRecording:
		v.mu.Lock()
		v.recorded = append(v.recorded, v.outBuf...)
		v.mu.Unlock()
	}
	if v.echoConv != nil {
		v.echo = append(v.echo, v.echoConv.Process(v.outBuf)...)
		if keep := v.echoWindow(); len(v.echo) >= 2*keep {
			drop := len(v.echo) - keep
			v.echo = v.echo[:copy(v.echo, v.echo[drop:])]
			v.echoBase += int64(drop)
		}
	}
	return nil
}

// echoWindow is how much played audio the echo path and the front-end
// can still ask for: the echo delay back from the frame being captured,
// and the period after it.
func (v *Virtual) echoWindow() int {
	delay := 0
	if v.cfg.Echo != nil {
		delay = int(max(Mono16k.Samples(v.cfg.Echo.Delay), 0))
	}
	return delay + 3*v.period
}

// played is the 16 kHz sample played at position at, or silence outside
// what was played.
func (v *Virtual) played(at int64) float32 {
	if i := at - v.echoBase; i >= 0 && i < int64(len(v.echo)) {
		return v.echo[i]
	}
	return 0
}

// clean runs the front-end on the capture at pos, giving it the period
// just rendered (which plays from pos + one period) as the far end.
func (v *Virtual) clean(pos int64, capture []float32) ([]float32, error) {
	if v.cfg.FrontEnd == nil {
		return capture, nil
	}
	far := make([]float32, v.period)
	for i := range far {
		far[i] = v.played(pos + int64(v.period+i))
	}
	if err := v.cfg.FrontEnd.Far(far); err != nil {
		return nil, err
	}
	return v.cfg.FrontEnd.Near(capture)
}

// capture builds the frame at pos: input (silence past its end) plus echo.
func (v *Virtual) capture(pos int64) ([]float32, error) {
	out := make([]float32, v.period)
	if pos < v.cfg.Source.Len() {
		if err := v.cfg.Source.Read(pos, out); err != nil {
			return nil, err
		}
	}
	if v.cfg.Echo != nil {
		delay := Mono16k.Samples(v.cfg.Echo.Delay)
		gain := float32(v.cfg.Echo.Gain)
		for i := range out {
			out[i] += gain * v.played(pos+int64(i)-delay)
		}
	}
	return out, nil
}

// SliceSource is a capture signal held in memory.
type SliceSource []float32

func (s SliceSource) Len() int64 { return int64(len(s)) }

func (s SliceSource) Read(pos int64, out []float32) error {
	clear(out[copy(out, s[pos:]):])
	return nil
}
