// Package audio holds the PCM types every stage shares: frames that know
// where they sit in the stream, ring buffers, reframing, WAV files,
// resampling, and the virtual devices used for replay.
package audio

import (
	"fmt"
	"time"
)

// ProcessingRate is the rate of the capture path after the device: every
// model on the listening side (VAD, ASR, Smart Turn) expects 16 kHz mono.
const ProcessingRate = 16000

// Format describes interleaved float32 PCM.
type Format struct {
	Rate     int
	Channels int
}

// Mono16k is the capture-path format.
var Mono16k = Format{Rate: ProcessingRate, Channels: 1}

func (f Format) String() string { return fmt.Sprintf("%d Hz/%dch", f.Rate, f.Channels) }

// The largest format any stage processes: Validate, the WAV reader and the
// resampler all hold to these.
const (
	formatMaxChannels = 32
	formatMaxRate     = 768000
)

// Validate rejects formats no stage can process.
func (f Format) Validate() error {
	if f.Rate <= 0 || f.Rate > formatMaxRate {
		return fmt.Errorf("audio: sample rate %d out of range", f.Rate)
	}
	if f.Channels <= 0 || f.Channels > formatMaxChannels {
		return fmt.Errorf("audio: channel count %d out of range", f.Channels)
	}
	return nil
}

// Duration of n sample frames (one sample per channel) in this format.
func (f Format) Duration(n int64) time.Duration {
	return time.Duration(n * int64(time.Second) / int64(f.Rate))
}

// Samples is the number of sample frames that last d, rounded down.
func (f Format) Samples(d time.Duration) int64 {
	return int64(d) * int64(f.Rate) / int64(time.Second)
}

// Frame is a block of interleaved samples together with its position in the
// stream, so every downstream measurement can be made in audio time.
type Frame struct {
	Format
	// Pos is the index of the first sample frame in the stream.
	Pos     int64
	Samples []float32
}

// Len is the number of sample frames (samples per channel).
func (f Frame) Len() int { return len(f.Samples) / f.Channels }

// End is the stream position just past the frame.
func (f Frame) End() int64 { return f.Pos + int64(f.Len()) }

// Start and Stop are the frame's bounds in audio time.
func (f Frame) Start() time.Duration { return f.Duration(f.Pos) }
func (f Frame) Stop() time.Duration  { return f.Duration(f.End()) }
