// Package vad detects speech in the 16 kHz mono capture stream: a model
// (the Silero VAD v5 session in vad/silero) judges one 512-sample window at
// a time, and Detector turns its probabilities into speech segments,
// implementing pipeline.VAD. This package is pure Go; the ONNX session
// lives in the subpackage so the pipeline depends on the types and the
// state machine only.
//
// # Semantics
//
// The detector follows the model authors' get_speech_timestamps, turned
// into a stream so that it never needs to see the future. Windows are cut
// at the stream's first position and every WindowSize samples after it,
// whatever the sizes of the frames fed, so a window at position w covers
// [w, w+512). With T = Threshold and E = ExitThreshold, each window's
// probability p moves the state machine:
//
//   - p >= T: clears a tentative end; outside a segment, opens one that
//     starts at w.
//   - p < E inside a segment: the first such window sets a tentative end at
//     its own start. The segment ends there once a window of this kind
//     starts at least MinSilence after the tentative end. Windows with
//     E <= p < T change nothing: they neither set, clear nor complete a
//     tentative end (hysteresis, exactly as in the reference).
//
// A segment counts only if it is longer than MinSpeech. SpeechStart is
// reported as soon as that is certain, that is once the end of the latest
// window, or the tentative end if there is one, lies more than MinSpeech
// after the start; segments too short to count produce no events at all.
// The reported start is the segment's start minus SpeechPad, but never
// before the stream's first sample nor before the previous segment's
// reported end (with the default settings the latter cannot happen; the
// reference instead splits too-short gaps between segments in half, which
// needs the future). SpeechEnd is reported when the end is confirmed, at
// the tentative end plus SpeechPad, but never past the end of the window
// that confirmed it.
//
// Between a tentative end and its confirmation (or the speech resuming)
// the detector reports Pausing, for a segment whose start was reported.
//
// Flush ends the stream like get_speech_timestamps ends a recording: the
// partial last window is zero-padded and judged like any other, and a
// segment still open (even one with a tentative end) ends at the last
// sample of audio if it is longer than MinSpeech.
//
// Every decision depends only on the sequence of windows, and every
// reported position only on window positions, so the events a stream
// produces, concatenated, are identical whatever the frame sizes, and
// identical to Segments on the whole recording. Only when they are
// reported differs: an event is reported by the call whose frame completes
// the window that decides it.
package vad
