// Package frontend is the capture-side audio front end: acoustic echo
// cancellation (AEC) against the playback signal, noise suppression (NS) and
// automatic gain control (AGC), on 10 ms frames of 16 kHz mono float audio.
//
// The processing is WebRTC's AudioProcessing module (the Debian/Ubuntu
// package libwebrtc-audio-processing-dev, webrtc-audio-processing 0.3),
// reached through cgo and a small extern "C" shim (shim.cpp). Because cgo
// needs the library headers, that implementation is only built with the
// build tag webrtcapm:
//
//	apt-get install libwebrtc-audio-processing-dev
//	go test -tags webrtcapm ./audio/frontend/
//
// Without the tag the package still compiles, but New returns
// ErrUnavailable.
//
// # Which echo canceller
//
// webrtc-audio-processing 0.3 offers two echo cancellers: EchoCancellation
// (the full-band "AEC", a.k.a. AEC2: a frequency-domain NLMS filter followed
// by a non-linear suppressor) and EchoControlMobile ("AECM", a fixed-point,
// low-complexity canceller for phones with short, fixed echo paths). AEC3
// does not exist in 0.3 (it arrived in later WebRTC releases, packaged as
// webrtc-audio-processing-1). This package uses EchoCancellation because it
// cancels much more echo than AECM on loudspeaker/room paths, and enables its
// "extended filter" (longer tail, more robust delay tracking) and
// "delay-agnostic" mode (internal render/capture delay estimation, so a
// slightly wrong Config.DelayMS does not break cancellation), with high
// suppression. The high-pass filter is always on.
//
// AGC is the digital adaptive AGC (kAdaptiveDigital) with the limiter
// enabled; the analog "experimental AGC" is disabled since there is no mic
// volume to drive.
//
// # Call pattern
//
// For every 10 ms of audio sent to the speaker call Far with exactly what was
// played, and for every 10 ms captured call Near. Far and Near may be called
// from different goroutines; the Processor serialises them. DelayMS (and
// SetDelay) is the time between a sample being passed to Far and its echo
// reaching Near, as WebRTC's set_stream_delay_ms defines it.
package frontend

import (
	"errors"
	"fmt"
)

const (
	// SampleRate is the only supported sample rate.
	SampleRate = 16000
	// FrameSize is the number of samples in one 10 ms frame.
	FrameSize = SampleRate / 100

	// DefaultAGCTargetDBFS is the AGC target used when Config.AGCTargetDBFS
	// is zero: -3 dBFS peak envelope (WebRTC's default and convention), which
	// puts normal speech at roughly -20 dBFS RMS.
	DefaultAGCTargetDBFS = 3
	// agcCompressionGainDB is the maximum gain of the digital compressor
	// stage (WebRTC range 0..90, WebRTC default 9). 20 dB lets quiet
	// (-40 dBFS) speech reach the target; at 9 dB it stops ~14 dB short.
	agcCompressionGainDB = 20
)

// ErrUnavailable is returned by New when the package was built without the
// WebRTC audio processing library.
var ErrUnavailable = errors.New("frontend: built without WebRTC audio processing (install libwebrtc-audio-processing-dev and build with -tags webrtcapm)")

// ErrClosed is returned by calls on a closed Processor.
var ErrClosed = errors.New("frontend: processor is closed")

// Config selects the processing stages.
type Config struct {
	AEC bool // acoustic echo cancellation against the Far stream
	NS  bool // noise suppression
	AGC bool // automatic gain control (digital)

	// DelayMS is the initial render→capture delay in milliseconds (see
	// SetDelay). Must be >= 0.
	DelayMS int
	// NSLevel is the noise suppression aggressiveness: 0 low, 1 moderate,
	// 2 high, 3 very high.
	NSLevel int
	// AGCTargetDBFS is the AGC target peak level in WebRTC's convention:
	// a positive number of dB below full scale (3 = -3 dBFS), 1..31.
	// Zero means DefaultAGCTargetDBFS.
	AGCTargetDBFS int
}

func (c *Config) normalize() error {
	if c.DelayMS < 0 || c.DelayMS > 500 {
		return fmt.Errorf("frontend: DelayMS %d out of range [0, 500]", c.DelayMS)
	}
	if c.NSLevel < 0 || c.NSLevel > 3 {
		return fmt.Errorf("frontend: NSLevel %d out of range [0, 3]", c.NSLevel)
	}
	if c.AGCTargetDBFS == 0 {
		c.AGCTargetDBFS = DefaultAGCTargetDBFS
	}
	if c.AGCTargetDBFS < 0 || c.AGCTargetDBFS > 31 {
		return fmt.Errorf("frontend: AGCTargetDBFS %d out of range [1, 31] (3 means -3 dBFS)", c.AGCTargetDBFS)
	}
	return nil
}

func checkFrame(what string, frame []float32) error {
	if len(frame) != FrameSize {
		return fmt.Errorf("frontend: %s frame has %d samples, want exactly %d (10 ms at %d Hz mono)", what, len(frame), FrameSize, SampleRate)
	}
	return nil
}
