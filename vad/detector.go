package vad

import (
	"context"
	"errors"
	"fmt"
	"math"
	"time"

	"github.com/voiceassistant/voice/audio"
)

// Prober gives the speech probability of consecutive WindowSize-sample
// windows of one stream. *silero.Model is the real one; the interface exists so
// the state machine can be tested with scripted probabilities.
type Prober interface {
	Window(samples []float32) (float32, error)
	Reset()
}

// Config tunes the speech state machine. The defaults are the model
// authors' (get_speech_timestamps and VADIterator in silero-vad), but
// for FloorDBFS, which is this package's and leaves their boundaries as
// they were.
type Config struct {
	// Threshold is the probability at or above which a window is speech.
	// 0.5 is the authors' default: Silero's probabilities are bimodal on
	// clean speech, and 0.5 sits in the valley between the modes.
	Threshold float32 `yaml:"threshold"`
	// ExitThreshold is the probability below which a window counts as
	// silence once speech has started; 0 means max(Threshold-0.15, 0.01),
	// the authors' rule. The gap between the two thresholds is hysteresis:
	// windows in between neither start nor end speech, so probabilities
	// wavering around Threshold in the middle of a word do not split it.
	ExitThreshold float32 `yaml:"exit_threshold"`
	// MinSpeech is how long speech must last to count (default 250 ms):
	// clicks, coughs and single syllables of noise are shorter. A start is
	// reported only once this much speech is certain, so SpeechStart comes
	// MinSpeech after the speech it reports.
	MinSpeech time.Duration `yaml:"min_speech"`
	// MinSilence is how long silence must last to end speech (default
	// 100 ms): pauses between words are shorter. It is the authors'
	// offline default; endpointing (deciding the user has finished) is the
	// pipeline's job, not the VAD's, so it stays short.
	MinSilence time.Duration `yaml:"min_silence"`
	// SpeechPad widens each segment on both sides (default 30 ms) because
	// the model reacts a little late to soft onsets and trailing
	// consonants.
	SpeechPad time.Duration `yaml:"speech_pad"`
	// FloorDBFS is the level (of a window's loudest sample, in dB below
	// full scale) under which a window outside speech is silence without
	// asking the model (default -60; 0 asks it about every window). On a
	// device that listens all day most windows are a quiet room, and the
	// model is most of what listening costs there; speech whose peaks
	// stay 60 dB down is not speech a recognizer can use. Inside speech
	// every window is the model's, so the pauses between words are judged
	// as the model's authors judge them. The model's recurrent state
	// carries the quiet before speech for seconds, so at the first window
	// above the floor the model is first given the last second of skipped
	// windows (skippedReplay), as if it had heard them all.
	FloorDBFS float64 `yaml:"floor_dbfs"`
}

// DefaultConfig returns the model authors' defaults, and the floor.
func DefaultConfig() Config {
	return Config{
		Threshold:  0.5,
		MinSpeech:  250 * time.Millisecond,
		MinSilence: 100 * time.Millisecond,
		SpeechPad:  30 * time.Millisecond,
		FloorDBFS:  -60,
	}
}

// exit is the effective exit threshold.
func (c Config) exit() float32 {
	if c.ExitThreshold != 0 {
		return c.ExitThreshold
	}
	return max(c.Threshold-0.15, 0.01)
}

// Validate rejects settings the state machine cannot honour.
func (c Config) Validate() error {
	finite := func(v float32) bool { return !math.IsNaN(float64(v)) && !math.IsInf(float64(v), 0) }
	switch {
	case !finite(c.Threshold) || c.Threshold <= 0 || c.Threshold > 1:
		return fmt.Errorf("vad: threshold %v out of range (0, 1]", c.Threshold)
	case !finite(c.ExitThreshold) || c.ExitThreshold < 0 || c.exit() > c.Threshold:
		return fmt.Errorf("vad: exit threshold %v must lie between 0 and the threshold %v", c.exit(), c.Threshold)
	case c.MinSpeech < 0 || c.MinSilence < 0 || c.SpeechPad < 0:
		return fmt.Errorf("vad: durations must not be negative (min speech %v, min silence %v, pad %v)", c.MinSpeech, c.MinSilence, c.SpeechPad)
	case c.MinSpeech > time.Hour || c.MinSilence > time.Hour || c.SpeechPad > time.Hour:
		return fmt.Errorf("vad: durations over an hour are surely a unit mistake (min speech %v, min silence %v, pad %v)", c.MinSpeech, c.MinSilence, c.SpeechPad)
	case math.IsNaN(c.FloorDBFS) || c.FloorDBFS > 0:
		return fmt.Errorf("vad: floor %v dBFS must be 0 (off) or below", c.FloorDBFS)
	}
	return nil
}

// Detector is the streaming speech/silence state machine on top of a
// Prober; it implements pipeline.VAD. See the package documentation for
// the exact semantics. Not safe for concurrent use.
type Detector struct {
	cfg   Config
	p     Prober
	exit  float32
	quiet float32 // FloorDBFS as an amplitude; 0: every window is asked
	// skipped are the latest windows the floor kept from the model
	// (a ring of skippedReplay), nSkipped of them.
	skipped    [][]float32
	nSkipped   int
	minSpeech  int64
	minSilence int64
	pad        int64

	rf      *audio.Reframer
	started bool  // a frame has been seen since the last Reset
	next    int64 // stream position the next frame must start at
	err     error // sticky: after a Prober error the window sequence has a hole

	triggered bool  // inside a (possibly unconfirmed) segment
	confirmed bool  // its SpeechStart has been reported
	start     int64 // first sample of the segment's first speech window
	tentative bool  // silence has begun inside the segment
	tempEnd   int64 // where that silence began
	floor     int64 // no start may be reported before this: stream start or previous end
	prob      float32

	events   []Event
	zeros    []float32
	onWindow func(audio.Frame) // made once: a closure per Process would allocate on every capture frame
}

// NewDetector returns a detector reading probabilities from p. The
// detector does not own p: closing a *silero.Model stays the caller's job.
func NewDetector(p Prober, cfg Config) (*Detector, error) {
	if p == nil {
		return nil, errors.New("vad: nil prober")
	}
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	d := &Detector{
		cfg:        cfg,
		p:          p,
		exit:       cfg.exit(),
		minSpeech:  audio.Mono16k.Samples(cfg.MinSpeech),
		minSilence: audio.Mono16k.Samples(cfg.MinSilence),
		pad:        audio.Mono16k.Samples(cfg.SpeechPad),
		quiet:      float32(math.Pow(10, cfg.FloorDBFS/20)),
		rf:         audio.NewReframer(WindowSize),
		zeros:      make([]float32, WindowSize),
		skipped:    make([][]float32, skippedReplay),
	}
	d.onWindow = func(w audio.Frame) { d.window(w.Pos, w.Samples, WindowSize) }
	return d, nil
}

// Config returns the detector's settings.
func (d *Detector) Config() Config { return d.cfg }

// Process feeds a 16 kHz mono frame of any length. Frames must follow each
// other without gaps or overlaps; a new stream needs Reset.
func (d *Detector) Process(f audio.Frame) (Result, error) {
	if d.err != nil {
		return Result{}, fmt.Errorf("vad: detector failed earlier (%w); Reset it before feeding more audio", d.err)
	}
	if f.Format != audio.Mono16k {
		return Result{}, fmt.Errorf("vad: frame at %d is %v; the detector takes %v only", f.Pos, f.Format, audio.Mono16k)
	}
	if f.Pos < 0 {
		return Result{}, fmt.Errorf("vad: frame at negative position %d", f.Pos)
	}
	if !d.started {
		d.started = true
		d.next = f.Pos
		d.floor = f.Pos
	}
	if f.Pos != d.next {
		// The Prober's recurrent state assumes continuous audio, so a jump
		// is refused rather than silently stitched over.
		return Result{}, fmt.Errorf("vad: frame at %d does not continue the stream, which is at %d; Reset before starting a new stream", f.Pos, d.next)
	}
	d.next = f.End()
	d.events = nil
	d.rf.Push(f, d.onWindow)
	return d.result()
}

// Flush ends the stream: the last partial window is zero-padded and
// judged, and a segment still open is closed at the end of the audio (if
// it is long enough), as get_speech_timestamps does. The detector is then
// reset for a new stream.
func (d *Detector) Flush() (Result, error) {
	if d.err != nil {
		return Result{}, fmt.Errorf("vad: detector failed earlier (%w); Reset it before feeding more audio", d.err)
	}
	d.events = nil
	if !d.started {
		return d.result()
	}
	end := d.next
	if n := d.rf.Pending(); n > 0 {
		// The model needs a whole window, but only n samples are audio:
		// clamping and the length checks use the real end.
		d.rf.Push(audio.Frame{Format: audio.Mono16k, Pos: end, Samples: d.zeros[:WindowSize-n]}, func(w audio.Frame) {
			d.window(w.Pos, w.Samples, n)
		})
	}
	if d.err == nil && d.triggered {
		if !d.confirmed && end-d.start > d.minSpeech {
			d.confirm()
		}
		if d.confirmed {
			d.emit(SpeechEnd, end)
		}
	}
	res, err := d.result()
	if err == nil {
		d.Reset()
	}
	return res, err
}

// Reset forgets the stream, including the Prober's state.
func (d *Detector) Reset() {
	d.rf.Reset()
	d.started, d.next, d.err = false, 0, nil
	d.triggered, d.confirmed, d.start, d.tentative, d.tempEnd, d.floor = false, false, 0, false, 0, 0
	d.prob, d.nSkipped = 0, 0
	d.events = nil
	d.p.Reset()
}

func (d *Detector) result() (Result, error) {
	if d.err != nil {
		return Result{}, d.err
	}
	return Result{Events: d.events, Voiced: d.prob >= d.cfg.Threshold, Prob: d.prob, Pausing: d.confirmed && d.tentative}, nil
}

// window runs the state machine on the window at pos, of which n samples
// are real audio (fewer than WindowSize only for the flushed tail).
func (d *Detector) window(pos int64, samples []float32, n int) {
	if d.err != nil {
		return
	}
	p, err := d.probability(samples)
	if err != nil {
		d.err = fmt.Errorf("vad: window at %d: %w", pos, err)
		return
	}
	d.prob = p
	now := pos + int64(n)
	switch {
	case p >= d.cfg.Threshold:
		d.tentative = false
		if !d.triggered {
			d.triggered, d.confirmed, d.start = true, false, pos
		}
	case p < d.exit && d.triggered:
		if !d.tentative {
			d.tentative, d.tempEnd = true, pos
		}
		// Measured between window starts, as the reference does, so the
		// silence is confirmed at the window starting MinSilence after it
		// began.
		if pos-d.tempEnd >= d.minSilence {
			if d.confirmed {
				d.emit(SpeechEnd, min(d.tempEnd+d.pad, now))
			}
			d.triggered, d.confirmed, d.tentative = false, false, false
			return
		}
	}
	if d.triggered && !d.confirmed {
		// The segment will end no earlier than this: the tentative end if
		// there is one (it can only move later), else the end of this
		// window. Once that already makes it longer than MinSpeech, the
		// final verdict is known and the start can be reported.
		least := now
		if d.tentative {
			least = d.tempEnd
		}
		if least-d.start > d.minSpeech {
			d.confirm()
		}
	}
}

// skippedReplay is how many of the windows skipped under the floor the
// model is given before the next one above it: a second, in which its
// state settles where hearing the whole quiet would have left it. On the
// spoken demo (test/testdata/demo.wav) the boundaries are then those of
// the model hearing every window, to the sample; with 8 or 16 windows a
// start came a window early. The model is never asked more often than
// without the floor.
const skippedReplay = 32

// probability is the model's for a window, or 0 for one outside speech
// under the floor.
func (d *Detector) probability(samples []float32) (float32, error) {
	if d.cfg.FloorDBFS == 0 || d.triggered {
		return d.p.Window(samples)
	}
	var peak float32
	for _, v := range samples {
		peak = max(peak, v, -v)
	}
	if peak < d.quiet {
		slot := &d.skipped[d.nSkipped%skippedReplay]
		*slot = append((*slot)[:0], samples...)
		d.nSkipped++
		return 0, nil
	}
	for i := max(d.nSkipped-skippedReplay, 0); i < d.nSkipped; i++ {
		if _, err := d.p.Window(d.skipped[i%skippedReplay]); err != nil {
			return 0, err
		}
	}
	d.nSkipped = 0
	return d.p.Window(samples)
}

func (d *Detector) confirm() {
	d.confirmed = true
	d.emit(SpeechStart, max(d.start-d.pad, d.floor))
}

func (d *Detector) emit(kind Kind, pos int64) {
	if kind == SpeechEnd {
		d.floor = pos
	}
	d.events = append(d.events, Event{Kind: kind, Pos: pos})
}

// Segment is a stretch of speech in samples at 16 kHz: [Start, End).
type Segment struct {
	Start, End int64
}

// Segments runs d over a whole recording (16 kHz mono, starting at
// position 0) and returns its speech segments. It resets d first and
// leaves it reset. Because the detector's results do not depend on how the
// audio is cut into frames, these are exactly the segments a stream of
// the same audio reports.
func Segments(ctx context.Context, d *Detector, src audio.CaptureSource) ([]Segment, error) {
	// A second at a time: the recording is read as it goes, so an hour
	// costs no more memory than a minute, and ctx is seen every second.
	second := int(audio.Mono16k.Samples(time.Second))
	events, err := feed(ctx, d, src, func() int { return second })
	if err != nil {
		return nil, err
	}
	return pair(events)
}

// Feed runs d over a whole recording cut into frames of the sizes next
// returns (one frame if next is nil), flushes, and returns every event. It
// resets d first and leaves it reset.
func Feed(d *Detector, pcm []float32, next func() int) ([]Event, error) {
	if next == nil {
		next = func() int { return len(pcm) }
	}
	return feed(context.Background(), d, audio.SliceSource(pcm), next)
}

func feed(ctx context.Context, d *Detector, src audio.CaptureSource, next func() int) ([]Event, error) {
	d.Reset()
	defer d.Reset()
	var events []Event
	var buf []float32
	for pos := int64(0); pos < src.Len(); {
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		n := min(int64(max(1, next())), src.Len()-pos)
		if int64(cap(buf)) < n {
			buf = make([]float32, n)
		}
		frame := buf[:n]
		if err := src.Read(pos, frame); err != nil {
			return nil, err
		}
		res, err := d.Process(audio.Frame{Format: audio.Mono16k, Pos: pos, Samples: frame})
		if err != nil {
			return nil, err
		}
		events = append(events, res.Events...)
		pos += n
	}
	res, err := d.Flush()
	if err != nil {
		return nil, err
	}
	return append(events, res.Events...), nil
}

// pair turns an event sequence (each SpeechStart followed by its
// SpeechEnd) into segments.
func pair(events []Event) ([]Segment, error) {
	var segs []Segment
	open := false
	for _, ev := range events {
		switch {
		case ev.Kind == SpeechStart && !open:
			segs = append(segs, Segment{Start: ev.Pos})
			open = true
		case ev.Kind == SpeechEnd && open:
			segs[len(segs)-1].End = ev.Pos
			open = false
		default:
			return nil, fmt.Errorf("vad: event %v at %d out of order", ev.Kind, ev.Pos)
		}
	}
	if open {
		return nil, errors.New("vad: last segment has no end")
	}
	return segs, nil
}
