// Package device is the live audio device: one malgo (miniaudio) duplex
// device that captures the microphone and plays the assistant's voice from
// the same callback, so both directions run on one device clock. It is the
// one package that talks to the sound card; everything after it works on
// audio.Frame.
//
// What miniaudio 0.11.23 (malgo v0.11.24) does with PulseAudio 16, which
// shapes the error handling here:
//
//   - A named device is opened with DONT_MOVE, so when it disappears
//     (unplugged, module unloaded) the server kills our streams. miniaudio
//     fires no stop notification for that; callbacks just stop. The
//     watchdog turns the silence into an error. With the default devices
//     ("" names) the server moves the streams to the new default instead
//     and the session carries on.
//   - In that state ma_device_uninit waits for a worker thread that sleeps
//     in pa_mainloop_iterate for ever; Close stops the device first, which
//     wakes it.
//   - A suspended sink or source is reported through the stop callback,
//     so a suspend ends the session like a disconnect does.
//   - Streams are started corked; a sink that rendered far ahead while
//     idle (the null sink renders up to 2 s) delivers the first callbacks
//     only when that runs out, hence the longer start timeout.
package device

// The Duplex and its lifecycle: opening, starting and closing the device.
// The callback side is in callback.go, the capture reader in reader.go,
// the configuration in config.go, backends and device names in list.go.

import (
	"errors"
	"fmt"
	"runtime"
	"sync"
	"sync/atomic"
	"time"
	"unsafe"

	"github.com/gen2brain/malgo"

	"github.com/voiceassistant/voice/audio"
	"github.com/voiceassistant/voice/internal/clock"
)

const (
	// FrameSize is the length of every capture frame: 10 ms at 16 kHz.
	FrameSize = audio.ProcessingRate / 100
	// frameBuffer is how many frames may wait for a slow consumer before
	// the reader blocks and the capture ring starts to fill.
	frameBuffer = 50
	// ringSeconds of capture absorb a stalled reader before samples are
	// dropped.
	ringSeconds = 2
	// maxGaps bounds the overrun episodes the callback can report before
	// the reader catches up; beyond it the callback keeps dropping, which
	// keeps positions exact.
	maxGaps = 64
	// maxGapFillSeconds caps the silence put in for one stretch of
	// capture lost before the callback (see capture).
	maxGapFillSeconds = 2
	// defaultStallTimeout is how long a running device may go without a
	// callback before it is declared dead (see watchdog).
	defaultStallTimeout = time.Second
	// defaultStartTimeout is the same for the first callbacks after Start,
	// which some servers legitimately delay (PulseAudio sinks that
	// rendered ahead while idle).
	defaultStartTimeout = 5 * time.Second
	// shutdownTimeout bounds Close's wait for miniaudio's worker thread.
	shutdownTimeout = 5 * time.Second
)

// ErrDeviceLost is wrapped by the error Err reports when the device went
// away under a running session (unplugged, sound server gone or the
// device removed), so callers can tell it from configuration errors.
var ErrDeviceLost = errors.New("audio device lost")

// ErrOpen is wrapped by the error of a device that would not open; each
// front end adds how to pick another in its own terms.
var ErrOpen = errors.New("cannot open")

// Stats are running counters for health reporting.
type Stats struct {
	// CaptureOverruns is the number of captured samples (at the device
	// rate) dropped because the capture ring was full; they reach the
	// pipeline as silence so stream positions stay exact.
	CaptureOverruns uint64
	// CaptureGaps is the number of times capture was lost before it
	// reached the callback (the sound server or miniaudio dropped it,
	// which neither reports): seen as fewer samples arriving than the
	// time that passed. CaptureLost is how much audio they lost in all.
	// Up to 2 s of each gap reaches the pipeline as silence, so stream
	// positions keep to device time.
	CaptureGaps uint64
	CaptureLost time.Duration
	// PlaybackUnderruns is the player's count of periods that ran dry
	// while a reply was being queued.
	PlaybackUnderruns uint64
	// Callbacks is the number of device callbacks so far.
	Callbacks uint64
}

// gap is silence the reader puts in at ring position at: n samples for
// what the callback dropped, and for lost, the samples lost before the
// callback (see gapDetector), as far as the fill cap lets them in.
type gap struct{ at, n, lost uint64 }

// Duplex is an open device. Its methods are safe for concurrent use.
type Duplex struct {
	cfg    Config
	name   string // for errors: the resolved capture (and playback) name
	ctx    *malgo.AllocatedContext
	dev    *malgo.Device
	player *audio.Player
	clock  *clock.Stream
	frames chan audio.Frame

	// Shared with the callback. Only atomics, the SPSC ring and
	// preallocated state, so the callback never allocates or blocks.
	ring        *audio.Ring
	wake        chan struct{}
	wakeBatch   atomic.Int64 // how much capture wakes the reader (WakeEvery), in samples
	callbacks   atomic.Uint64
	overruns    atomic.Uint64
	captureGaps atomic.Uint64
	captureLost atomic.Uint64 // samples at the device rate
	gaps        [maxGaps]gap
	gapHead     atomic.Uint64    // reader side
	gapTail     atomic.Uint64    // callback side
	pending     gap              // callback-only: silence owed, not yet published
	now         func() time.Time // callback-only: the clock gaps are measured on
	detect      gapDetector      // callback-only
	// With a front-end: what the callback rendered, mono at the device
	// rate, written sample for sample in step with ring (nil without one).
	farRing    *audio.Ring
	farScratch []float32 // callback-only: downmix buffer

	// Reader-only state.
	rs      *audio.Resampler
	readBuf []float32
	zeros   []float32
	resBuf  []float32
	acc     []float32
	pos     int64
	// Reader-only far-end state, the twin of the capture state above.
	farRs      *audio.Resampler
	farReadBuf []float32
	farResBuf  []float32
	farAcc     []float32

	stallTimeout time.Duration
	startTimeout time.Duration
	closing      atomic.Bool
	quit         chan struct{} // closed by Close
	failed       chan struct{} // closed by fail
	failOnce     sync.Once
	err          atomic.Pointer[error]

	mu      sync.Mutex // orders Start against Close
	started bool
	closed  bool
	wg      sync.WaitGroup
	closeMu sync.Once
	closeEr error
}

// Open initialises the device (stopped) and the capture reader.
func Open(cfg Config) (*Duplex, error) {
	if err := cfg.defaults(); err != nil {
		return nil, err
	}
	ctx, err := initContext(cfg.Backend)
	if err != nil {
		return nil, err
	}
	d, err := open(cfg, ctx)
	if err != nil {
		freeContext(ctx)
		return nil, err
	}
	return d, nil
}

func open(cfg Config, ctx *malgo.AllocatedContext) (*Duplex, error) {
	caps, plays, err := devices(ctx, cfg.Backend)
	if err != nil && (cfg.Capture != "" || cfg.Playback != "") {
		return nil, err
	}
	capID, capName, err := pick(cfg.Backend, "capture", cfg.Capture, caps)
	if err != nil {
		return nil, err
	}
	playID, playName, err := pick(cfg.Backend, "playback", cfg.Playback, plays)
	if err != nil {
		return nil, err
	}

	name := capName
	if playName != capName {
		name = capName + " / " + playName
	}
	d, err := newDuplex(cfg, name)
	if err != nil {
		return nil, err
	}
	d.ctx = ctx
	period := d.period()

	dc := malgo.DefaultDeviceConfig(malgo.Duplex)
	dc.SampleRate = uint32(cfg.Rate)
	dc.PeriodSizeInFrames = uint32(period)
	// Capture cannot be given more buffering than playback here:
	// miniaudio has one period count for both directions, more periods
	// lengthen an ALSA playback buffer (the latency of a barge-in's
	// silence), and with PulseAudio a duplex device drops what overflows
	// miniaudio's own ring of 5 periods whatever the count (a 90 ms stall
	// of the process lost 90 ms with 3, 10 or 50 periods). The capture
	// ring below holds seconds; what is lost before it, gapDetector counts
	// and fills.
	dc.PerformanceProfile = malgo.LowLatency
	dc.Capture.Format = malgo.FormatF32
	dc.Capture.Channels = 1
	dc.Playback.Format = malgo.FormatF32
	dc.Playback.Channels = uint32(cfg.PlaybackChannels)
	// The IDs sit in Go memory inside a config that is handed to C, which
	// cgo allows only for pinned memory; miniaudio copies them during init.
	var pin runtime.Pinner
	defer pin.Unpin()
	if capID != nil {
		pin.Pin(capID)
		dc.Capture.DeviceID = unsafe.Pointer(capID)
	}
	if playID != nil {
		pin.Pin(playID)
		dc.Playback.DeviceID = unsafe.Pointer(playID)
	}
	d.dev, err = malgo.InitDevice(ctx.Context, dc, malgo.DeviceCallbacks{Data: d.process, Stop: d.onStop})
	if err != nil {
		return nil, fmt.Errorf("audio device %q: %w at %d Hz f32 (capture mono, playback %d ch): %w; check that a sound server runs (PulseAudio or PipeWire: pulseaudio --start) and that the device exists and is not held by another program", d.name, ErrOpen, cfg.Rate, cfg.PlaybackChannels, err)
	}

	d.wg.Add(1)
	go d.reader()
	return d, nil
}

// newDuplex builds everything but the malgo device, so the callback and
// the reader can be exercised without one.
func newDuplex(cfg Config, name string) (*Duplex, error) {
	if cfg.Clock == nil {
		cfg.Clock = clock.NewStream(audio.ProcessingRate)
	}
	d := &Duplex{
		cfg:          cfg,
		name:         name,
		clock:        cfg.Clock,
		frames:       make(chan audio.Frame, frameBuffer),
		ring:         audio.NewRing(ringSeconds * cfg.Rate),
		wake:         make(chan struct{}, 1),
		now:          time.Now,
		detect:       newGapDetector(cfg.Rate, cfg.Period),
		stallTimeout: defaultStallTimeout,
		startTimeout: defaultStartTimeout,
		quit:         make(chan struct{}),
		failed:       make(chan struct{}),
	}
	d.player = audio.NewPlayer(audio.Format{Rate: cfg.Rate, Channels: cfg.PlaybackChannels}, cfg.PlaybackBuffer, d.clock)
	if cfg.Rate != audio.ProcessingRate {
		var err error
		if d.rs, err = audio.NewResampler(cfg.Rate, audio.ProcessingRate, 1); err != nil {
			return nil, fmt.Errorf("audio device %q: %w", name, err)
		}
	}
	// One read takes at least a period; the reader loops for more.
	d.readBuf = make([]float32, max(d.period(), 1024))
	d.zeros = make([]float32, len(d.readBuf))
	d.resBuf = make([]float32, 0, len(d.readBuf))
	d.acc = make([]float32, 0, FrameSize)
	if cfg.FrontEnd != nil {
		// Same capacity as the capture ring, so whenever the capture
		// write succeeds the far write does too (see writeFar).
		d.farRing = audio.NewRing(ringSeconds * cfg.Rate)
		d.farScratch = make([]float32, len(d.readBuf))
		d.farReadBuf = make([]float32, len(d.readBuf))
		d.farResBuf = make([]float32, 0, len(d.readBuf))
		d.farAcc = make([]float32, FrameSize)
		if cfg.Rate != audio.ProcessingRate {
			var err error
			if d.farRs, err = audio.NewResampler(cfg.Rate, audio.ProcessingRate, 1); err != nil {
				return nil, fmt.Errorf("audio device %q: %w", name, err)
			}
		}
	}
	return d, nil
}

func (d *Duplex) period() int { return int(audio.Format{Rate: d.cfg.Rate}.Samples(d.cfg.Period)) }

// Start starts the device; capture frames flow from here on.
func (d *Duplex) Start() error {
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.closed {
		return fmt.Errorf("audio device %q: start after close: open it again", d.name)
	}
	if d.started {
		return nil
	}
	if err := d.dev.Start(); err != nil {
		return fmt.Errorf("audio device %q: cannot start: %w; check that it is still connected and not in use", d.name, err)
	}
	d.started = true
	d.wg.Add(1)
	go d.watchdog()
	return nil
}

// Close stops and releases the device and ends the reader, which closes
// Frames. It is safe to call more than once.
func (d *Duplex) Close() error {
	d.closeMu.Do(func() {
		d.mu.Lock()
		d.closed = true
		d.mu.Unlock()
		// Set before stopping so the stop callback this triggers is not
		// mistaken for a disconnect.
		d.closing.Store(true)
		close(d.quit)
		released := make(chan struct{})
		go func() {
			defer close(released)
			// ma_device_uninit alone only flags the worker thread and waits
			// for it, but the PulseAudio worker sleeps in
			// pa_mainloop_iterate until the server sends something, which a
			// server that dropped our streams (device unplugged) never
			// does: Close would hang for ever. Stop wakes the main loop
			// first.
			_ = d.dev.Stop()
			d.dev.Uninit() // no callback runs after this returns
		}()
		select {
		case <-released:
			if err := d.ctx.Uninit(); err != nil {
				d.closeEr = fmt.Errorf("audio device %q: releasing backend: %w", d.name, err)
			}
			d.ctx.Free()
		case <-time.After(shutdownTimeout):
			// Leaking the device (and its context, which it still uses)
			// beats hanging the caller's shutdown.
			d.closeEr = fmt.Errorf("audio device %q did not shut down within %v; its resources were abandoned, restart the process if audio misbehaves", d.name, shutdownTimeout)
		}
		d.wg.Wait()
	})
	return d.closeEr
}

// WakeEvery says how much capture wakes the reader: 0 (the default)
// wakes it every period; more lets a session that only listens for
// speech to begin, or keeps a pre-roll, sleep longer, with the goroutines
// it feeds (at 100 ms, ten times a second instead of a hundred). Frames
// then come in bursts, as late as wait. A shorter wait wakes the reader
// at once.
func (d *Duplex) WakeEvery(wait time.Duration) {
	n := audio.Format{Rate: d.cfg.Rate}.Samples(wait)
	if old := d.wakeBatch.Swap(n); n < old {
		select {
		case d.wake <- struct{}{}:
		default:
		}
	}
}

// Frames delivers capture as 16 kHz mono frames of FrameSize samples with
// contiguous positions. It is closed when the device is closed or stops.
func (d *Duplex) Frames() <-chan audio.Frame { return d.frames }

// Player is the playback queue, in the device's playback format.
func (d *Duplex) Player() *audio.Player { return d.player }

// Clock is the live session clock: the capture position delivered so far.
func (d *Duplex) Clock() *clock.Stream { return d.clock }

// Stats returns the running counters.
func (d *Duplex) Stats() Stats {
	return Stats{
		CaptureOverruns:   d.overruns.Load(),
		CaptureGaps:       d.captureGaps.Load(),
		CaptureLost:       audio.Format{Rate: d.cfg.Rate}.Duration(int64(d.captureLost.Load())),
		PlaybackUnderruns: d.player.Underruns(),
		Callbacks:         d.callbacks.Load(),
	}
}

// Err is why the device stopped on its own, or nil.
func (d *Duplex) Err() error {
	if p := d.err.Load(); p != nil {
		return *p
	}
	return nil
}

func (d *Duplex) fail(err error) {
	d.failOnce.Do(func() {
		d.err.Store(&err)
		close(d.failed)
	})
}
