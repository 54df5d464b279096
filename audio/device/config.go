package device

// The device configuration and its defaults.

import (
	"fmt"
	"time"

	"github.com/voiceassistant/voice/audio"
	"github.com/voiceassistant/voice/internal/clock"
)

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
	// samples lost to an overrun, or before the callback (see
	// OnCaptureGap), are replaced by silence on both sides, so the
	// alignment holds across them.
	//
	// A Far or Near error ends the session like a device error: Err
	// returns it and Frames closes.
	FrontEnd audio.FrontEnd `yaml:"-"`
	// OnCaptureGap, if set, is told of each stretch of capture lost
	// before the device callback (see Stats.CaptureGaps): lost is how
	// much, at the session time where the silence standing in for it
	// starts. It runs on the goroutine that sends Frames, so it must be
	// quick.
	OnCaptureGap func(at, lost time.Duration) `yaml:"-"`
}

// DefaultConfig is the configuration a zero Config's fields stand for: the
// system's default devices at 48 kHz, mono playback, 10 ms periods and 5 s
// queued for the speaker.
func DefaultConfig() Config {
	return Config{Rate: 48000, PlaybackChannels: 1, Period: 10 * time.Millisecond, PlaybackBuffer: 5 * time.Second}
}

// MinRate and MaxRate bound a device's sample rate: miniaudio's own
// bounds (MA_MIN_SAMPLE_RATE, MA_MAX_SAMPLE_RATE).
const (
	MinRate = 8000
	MaxRate = 384000
)

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
		return fmt.Errorf("device.rate, device.playback_channels: %w", err)
	}
	if c.Rate < MinRate || c.Rate > MaxRate {
		return fmt.Errorf("device.rate: %d Hz is out of range (%d..%d)", c.Rate, MinRate, MaxRate)
	}
	if c.Period < time.Millisecond || c.Period > time.Second {
		return fmt.Errorf("device.period: %v is out of range (1ms..1s)", c.Period)
	}
	if c.PlaybackBuffer < c.Period {
		return fmt.Errorf("device.playback_buffer: %v is shorter than one period (device.period, %v)", c.PlaybackBuffer, c.Period)
	}
	return nil
}

// Validate reports the first setting out of range, by its config key, so
// `voice-agent config` refuses what opening the device would: a mistake
// in the file is found when it is written, not at the next session.
func (c Config) Validate() error {
	return c.defaults()
}
