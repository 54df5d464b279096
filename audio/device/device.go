// Package device is the live audio device: one malgo (miniaudio) duplex
// device that captures the microphone and plays the assistant's voice from
// the same callback, so both directions run on one device clock. It is the
// only package that uses cgo; everything after it works on audio.Frame.
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

import (
	"errors"
	"fmt"
	"runtime"
	"strings"
	"sync"
	"sync/atomic"
	"time"
	"unsafe"

	"github.com/gen2brain/malgo"

	"github.com/voiceassistant/voice/audio"
	"github.com/voiceassistant/voice/internal/clock"
)

// backendNull is miniaudio's null backend. malgo v0.11.24 declares
// malgo.BackendNull as 13, but miniaudio 0.11 has ma_backend_custom there
// and ma_backend_null after it, so InitContext with malgo.BackendNull
// fails with "No backend".
const backendNull = malgo.Backend(14)

// realBackends is what "auto" tries, in miniaudio's default priority order.
// It leaves out the null backend on purpose: falling back to it would look
// like a working microphone that hears nothing.
var realBackends = func() []malgo.Backend {
	var b []malgo.Backend
	for i := malgo.BackendWasapi; i <= malgo.BackendWebaudio; i++ {
		b = append(b, malgo.Backend(i))
	}
	return b
}()

var backendNames = map[string][]malgo.Backend{
	"":           realBackends,
	"auto":       realBackends,
	"pulseaudio": {malgo.BackendPulseaudio},
	"pulse":      {malgo.BackendPulseaudio},
	"alsa":       {malgo.BackendAlsa},
	"jack":       {malgo.BackendJack},
	"null":       {backendNull},
}

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

// Config selects and shapes the device.
type Config struct {
	// Backend is "" (auto: the platform's real backends, never null),
	// "pulseaudio", "alsa", "jack" or "null".
	Backend string `yaml:"backend"`
	// Capture and Playback name the devices; "" is the system default.
	// A name matches exactly first, then as a unique case-insensitive
	// substring.
	Capture  string `yaml:"capture"`
	Playback string `yaml:"playback"`
	// Rate is the device sample rate (default 48000); capture is
	// resampled to 16 kHz after the callback.
	Rate int `yaml:"rate"`
	// PlaybackChannels is the playback channel count (default 1).
	PlaybackChannels int `yaml:"playback_channels"`
	// Period is the callback period (default 10 ms).
	Period time.Duration `yaml:"period"`
	// PlaybackBuffer is the capacity of the player queue (default 5 s).
	PlaybackBuffer time.Duration `yaml:"playback_buffer"`
	// Clock is the session clock the device advances as it captures, so
	// stages can be built with it before the device is opened; nil makes
	// a new one.
	Clock *clock.Stream `yaml:"-"`
	// FrontEnd, if set, cleans the capture (echo cancellation, noise
	// suppression, gain control) with what the speaker plays as its
	// reference. Every sample the callback renders is handed to it,
	// downmixed to mono and converted to 16 kHz frames like the capture,
	// and Frames delivers what its Near returns.
	//
	// Alignment: far frame k (FrontEnd.Far) covers the same device
	// samples, rendered in the same callback periods, as capture frame k
	// (FrontEnd.Near), and Far is always called first. The echo of a far
	// frame therefore reaches the microphone later than frame k, by the
	// playback and capture latencies plus the acoustic path; covering
	// that is the front-end's delay setting or estimation. Captured
	// samples lost to an overrun are replaced by silence on both sides,
	// so the alignment holds across overruns.
	//
	// A Far or Near error ends the session like a device error: Err
	// returns it and Frames closes.
	FrontEnd audio.FrontEnd `yaml:"-"`
}

// ErrOpen is wrapped by the error of a device that would not open; each
// front end adds how to pick another in its own terms.
var ErrOpen = errors.New("cannot open")

// DefaultConfig is the configuration a zero Config's fields stand for: the
// system's default devices at 48 kHz, mono playback, 10 ms periods and 5 s
// queued for the speaker.
func DefaultConfig() Config {
	return Config{Rate: 48000, PlaybackChannels: 1, Period: 10 * time.Millisecond, PlaybackBuffer: 5 * time.Second}
}

func (c *Config) defaults() error {
	def := DefaultConfig()
	if c.Rate == 0 {
		c.Rate = def.Rate
	}
	if c.PlaybackChannels == 0 {
		c.PlaybackChannels = def.PlaybackChannels
	}
	if c.Period == 0 {
		c.Period = def.Period
	}
	if c.PlaybackBuffer == 0 {
		c.PlaybackBuffer = def.PlaybackBuffer
	}
	if err := (audio.Format{Rate: c.Rate, Channels: c.PlaybackChannels}).Validate(); err != nil {
		return fmt.Errorf("audio device config: %w", err)
	}
	if c.Period < time.Millisecond || c.Period > time.Second {
		return fmt.Errorf("audio device config: period %v out of range (1ms..1s)", c.Period)
	}
	if c.PlaybackBuffer < c.Period {
		return fmt.Errorf("audio device config: playback buffer %v is shorter than one period (%v)", c.PlaybackBuffer, c.Period)
	}
	return nil
}

// Info describes one device a backend offers.
type Info struct {
	Name    string `json:"name"`
	Kind    string `json:"kind"` // "capture" or "playback"
	Default bool   `json:"default"`
}

// Stats are running counters for health reporting.
type Stats struct {
	// CaptureOverruns is the number of captured samples (at the device
	// rate) dropped because the capture ring was full; they reach the
	// pipeline as silence so stream positions stay exact.
	CaptureOverruns uint64
	// PlaybackUnderruns is the player's count of periods that ran dry
	// while a reply was being queued.
	PlaybackUnderruns uint64
	// Callbacks is the number of device callbacks so far.
	Callbacks uint64
}

// gap records captured samples the callback had to drop, at the ring
// write position where they belong.
type gap struct{ at, n uint64 }

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
	callbacks   atomic.Uint64
	overruns    atomic.Uint64
	gaps        [maxGaps]gap
	gapHead     atomic.Uint64 // reader side
	gapTail     atomic.Uint64 // callback side
	pendingDrop uint64        // callback-only: dropped, not yet published as a gap
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

// List returns the capture and playback devices the backend offers.
func List(backend string) ([]Info, error) {
	ctx, err := initContext(backend)
	if err != nil {
		return nil, err
	}
	defer freeContext(ctx)
	caps, plays, err := devices(ctx, backend)
	if err != nil {
		return nil, err
	}
	var out []Info
	for _, d := range caps {
		out = append(out, Info{Name: d.Name(), Kind: "capture", Default: d.IsDefault != 0})
	}
	for _, d := range plays {
		out = append(out, Info{Name: d.Name(), Kind: "playback", Default: d.IsDefault != 0})
	}
	return out, nil
}

func backendLabel(b string) string {
	if b == "" {
		return "auto"
	}
	return b
}

func initContext(backend string) (*malgo.AllocatedContext, error) {
	bs, ok := backendNames[backend]
	if !ok {
		return nil, fmt.Errorf("audio backend %q unknown: use \"\" (auto), \"pulseaudio\", \"alsa\", \"jack\" or \"null\"", backend)
	}
	// PulseAudio shows this name in its stream lists (pactl, pavucontrol),
	// which is how a user finds out who holds the microphone.
	silenceALSA()
	appName := []byte("voiceassistant\x00")
	var pin runtime.Pinner
	pin.Pin(&appName[0])
	defer pin.Unpin()
	ctx, err := malgo.InitContext(bs, malgo.ContextConfig{
		Pulse: malgo.PulseContextConfig{PApplicationName: &appName[0]},
	}, nil)
	if err != nil {
		return nil, fmt.Errorf("audio backend %s: cannot initialise (%v): is the sound server running and the backend installed?", backendLabel(backend), err)
	}
	return ctx, nil
}

func freeContext(ctx *malgo.AllocatedContext) {
	_ = ctx.Uninit()
	ctx.Free()
}

func devices(ctx *malgo.AllocatedContext, backend string) (caps, plays []malgo.DeviceInfo, err error) {
	if caps, err = ctx.Devices(malgo.Capture); err == nil {
		plays, err = ctx.Devices(malgo.Playback)
	}
	if err != nil {
		return nil, nil, fmt.Errorf("audio backend %s: cannot list devices: %v", backendLabel(backend), err)
	}
	return caps, plays, nil
}

// pick resolves a configured device name against the enumeration. It
// returns nil for the default device together with a name for messages.
func pick(backend, kind, want string, infos []malgo.DeviceInfo) (*malgo.DeviceID, string, error) {
	if want == "" {
		for i := range infos {
			if infos[i].IsDefault != 0 {
				return nil, infos[i].Name(), nil
			}
		}
		return nil, "default " + kind + " device", nil
	}
	names := make([]string, len(infos))
	var exact, sub []int
	for i := range infos {
		names[i] = infos[i].Name()
		switch {
		case names[i] == want:
			exact = append(exact, i)
		case strings.Contains(strings.ToLower(names[i]), strings.ToLower(want)):
			sub = append(sub, i)
		}
	}
	hits := exact
	if len(hits) == 0 {
		hits = sub
	}
	if len(hits) == 1 {
		id := infos[hits[0]].ID
		return &id, names[hits[0]], nil
	}
	list := "none"
	if len(names) > 0 {
		list = `"` + strings.Join(names, `", "`) + `"`
	}
	if len(hits) > 1 {
		var amb []string
		for _, i := range hits {
			amb = append(amb, names[i])
		}
		return nil, "", fmt.Errorf("%s device %q is ambiguous on backend %s: it matches %q; give a longer or exact name (available %s devices: %s)",
			kind, want, backendLabel(backend), amb, kind, list)
	}
	return nil, "", fmt.Errorf("%s device %q not found on backend %s; available %s devices: %s",
		kind, want, backendLabel(backend), kind, list)
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
		return fmt.Errorf("audio device %q: cannot start: %v; check that it is still connected and not in use", d.name, err)
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
				d.closeEr = fmt.Errorf("audio device %q: releasing backend: %v", d.name, err)
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

// process is the device callback body. It runs on miniaudio's real-time
// thread: no allocation, no locks, no blocking.
func (d *Duplex) process(out, in []byte, _ uint32) {
	d.callbacks.Add(1)
	captured := 0
	if len(in) >= 4 {
		captured = d.capture(unsafe.Slice((*float32)(unsafe.Pointer(&in[0])), len(in)/4))
	}
	var played []float32
	if len(out) >= 4 {
		played = unsafe.Slice((*float32)(unsafe.Pointer(&out[0])), len(out)/4)
		d.player.Fill(played)
	}
	if d.farRing != nil {
		d.writeFar(played, captured)
	}
	select {
	case d.wake <- struct{}{}:
	default:
	}
}

// capture writes a period into the ring and returns how many of its
// samples (a prefix) went in; the rest were dropped.
func (d *Duplex) capture(in []float32) int {
	if d.pendingDrop > 0 {
		// Publish the earlier drop before writing anything after it, so
		// the reader can put the silence exactly where the audio was lost.
		// Until both the ring and the gap list have room, keep dropping.
		if d.ring.Free() == 0 || d.gapTail.Load()-d.gapHead.Load() >= maxGaps {
			d.pendingDrop += uint64(len(in))
			d.overruns.Add(uint64(len(in)))
			return 0
		}
		t := d.gapTail.Load()
		d.gaps[t%maxGaps] = gap{at: d.ring.Written(), n: d.pendingDrop}
		d.gapTail.Store(t + 1)
		d.pendingDrop = 0
	}
	n := d.ring.Write(in)
	if n < len(in) {
		d.pendingDrop += uint64(len(in) - n)
		d.overruns.Add(uint64(len(in) - n))
	}
	return n
}

// writeFar puts the first n frames of what was just rendered into the far
// ring, downmixed to mono: exactly as many samples as capture kept, so
// both rings hold the same stretch of device time at the same positions.
// What capture dropped is dropped here too and becomes silence on both
// sides (the gap list is shared). A duplex callback renders as many
// frames as it captures; should it render fewer, the rest is silence.
//
// The far write cannot come up short: the rings have equal capacities,
// equal write positions after every callback, and the reader consumes
// the far ring first, so it never has less room than the capture ring.
func (d *Duplex) writeFar(played []float32, n int) {
	ch := d.cfg.PlaybackChannels
	frames := len(played) / ch
	scale := 1 / float32(ch)
	for off := 0; off < n; {
		s := d.farScratch[:min(n-off, len(d.farScratch))]
		for i := range s {
			f := off + i
			switch {
			case f >= frames:
				s[i] = 0
			case ch == 1:
				s[i] = played[f]
			default:
				var sum float32
				for _, v := range played[f*ch : f*ch+ch] {
					sum += v
				}
				s[i] = sum * scale
			}
		}
		d.farRing.Write(s)
		off += len(s)
	}
}

// onStop runs on miniaudio's thread whenever the device stops. Unless we
// are closing, that means the device went away: the PulseAudio backend
// reports a suspended device this way, other backends a failed stream.
func (d *Duplex) onStop() {
	if d.closing.Load() {
		return
	}
	d.fail(fmt.Errorf("audio device %q stopped unexpectedly (disconnected?): check the device and open it again: %w", d.name, ErrDeviceLost))
}

// watchdog catches devices that die silently. When PulseAudio drops a
// stream (its sink or source was unloaded or unplugged), miniaudio gets
// no stop notification: its main loop just waits for a server that will
// never write again. A device that goes quiet is therefore declared dead:
// after stallTimeout once audio flowed, after startTimeout if it never
// started.
func (d *Duplex) watchdog() {
	defer d.wg.Done()
	t := time.NewTicker(d.stallTimeout / 4)
	defer t.Stop()
	last, since, flowing := d.callbacks.Load(), time.Now(), false
	for {
		select {
		case <-d.quit:
			return
		case <-d.failed:
			return
		case now := <-t.C:
			if c := d.callbacks.Load(); c != last {
				last, since, flowing = c, now, true
				continue
			}
			quiet := now.Sub(since)
			switch {
			case flowing && quiet > d.stallTimeout:
				d.fail(fmt.Errorf("audio device %q stopped delivering audio (no callback for %v; disconnected?): check the device and open it again: %w",
					d.name, quiet.Round(time.Millisecond), ErrDeviceLost))
				return
			case !flowing && quiet > d.startTimeout:
				d.fail(fmt.Errorf("audio device %q started but delivered no audio within %v: check that it is connected and not suspended, then open it again: %w",
					d.name, d.startTimeout, ErrDeviceLost))
				return
			}
		}
	}
}

// reader turns the ring into 16 kHz frames. It may block on a slow
// consumer; the callback never waits for it.
func (d *Duplex) reader() {
	defer d.wg.Done()
	defer close(d.frames)
	for {
		select {
		case <-d.quit:
			return
		case <-d.failed:
			// Deliver what was captured before the device went away.
			d.drain()
			return
		case <-d.wake:
			if !d.drain() {
				return
			}
		}
	}
}

// drain processes everything captured so far; false means Close was
// called while it waited on the consumer.
func (d *Duplex) drain() bool {
	for {
		// Load the fill level before the gap list: a gap below the write
		// position seen here was published before that write, so it is
		// visible below.
		avail := uint64(d.ring.Len())
		if d.farRing != nil {
			// The callback writes the far ring just after the capture
			// ring; take only what both hold.
			avail = min(avail, uint64(d.farRing.Len()))
		}
		rd := d.ring.Consumed()
		if h := d.gapHead.Load(); h < d.gapTail.Load() {
			g := d.gaps[h%maxGaps]
			if g.at == rd {
				d.gapHead.Store(h + 1)
				if !d.silence(g.n) {
					return false
				}
				continue
			}
			avail = min(avail, g.at-rd)
		}
		if avail == 0 {
			return true
		}
		k := min(avail, uint64(len(d.readBuf)))
		var far []float32
		if d.farRing != nil {
			// Far first: the far ring must never have less free space
			// than the capture ring (see writeFar).
			far = d.farReadBuf[:d.farRing.Read(d.farReadBuf[:k])]
		}
		n := d.ring.Read(d.readBuf[:k])
		if far != nil && len(far) != n {
			d.fail(fmt.Errorf("audio device %q: internal error: far-end stream out of step with capture (%d vs %d samples)", d.name, len(far), n))
			return false
		}
		if !d.resample(d.readBuf[:n], far) {
			return false
		}
	}
}

// silence stands in for n dropped device-rate samples.
func (d *Duplex) silence(n uint64) bool {
	for n > 0 {
		k := min(n, uint64(len(d.zeros)))
		var far []float32
		if d.farRing != nil {
			far = d.zeros[:k]
		}
		if !d.resample(d.zeros[:k], far) {
			return false
		}
		n -= k
	}
	return true
}

// resample converts device-rate capture to 16 kHz frames and sends them.
// far, when there is a front-end, is the rendered signal for the same
// samples (equal length); it goes through its own resampler, which
// yields as many samples as the capture one, into its own frames, so
// far frame k and capture frame k cover the same stretch.
func (d *Duplex) resample(in, far []float32) bool {
	if d.rs != nil {
		d.resBuf = d.rs.Process(in, d.resBuf[:0])
		in = d.resBuf
	}
	if d.farRs != nil && far != nil {
		d.farResBuf = d.farRs.Process(far, d.farResBuf[:0])
		far = d.farResBuf
	}
	if d.farRing != nil && len(far) != len(in) {
		d.fail(fmt.Errorf("audio device %q: internal error: far-end resampler out of step with capture (%d vs %d samples)", d.name, len(far), len(in)))
		return false
	}
	for len(in) > 0 {
		at := len(d.acc)
		k := copy(d.acc[at:FrameSize], in)
		d.acc = d.acc[:at+k]
		in = in[k:]
		if d.farRing != nil {
			copy(d.farAcc[at:at+k], far)
			far = far[k:]
		}
		if len(d.acc) < FrameSize {
			break
		}
		samples := d.acc
		// Consumers keep frames, so each gets its own buffer.
		d.acc = make([]float32, 0, FrameSize)
		if fe := d.cfg.FrontEnd; fe != nil {
			farFrame := d.farAcc
			d.farAcc = make([]float32, FrameSize)
			if err := fe.Far(farFrame); err != nil {
				d.fail(fmt.Errorf("audio device %q: front-end: %w", d.name, err))
				return false
			}
			out, err := fe.Near(samples)
			if err != nil {
				d.fail(fmt.Errorf("audio device %q: front-end: %w", d.name, err))
				return false
			}
			if len(out) != FrameSize {
				d.fail(fmt.Errorf("audio device %q: front-end returned %d samples for a %d-sample frame", d.name, len(out), FrameSize))
				return false
			}
			samples = out
		}
		f := audio.Frame{Format: audio.Mono16k, Pos: d.pos, Samples: samples}
		d.pos += FrameSize
		// Advanced before the send so a consumer never holds a frame
		// that ends after the clock's now.
		d.clock.Advance(FrameSize)
		select {
		case d.frames <- f:
		case <-d.quit:
			return false
		}
	}
	return true
}
