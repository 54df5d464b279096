package vad

// WindowSize is how many new 16 kHz samples Silero v5 judges at a time
// (32 ms); the detector works on this grid whatever the frame sizes.
const WindowSize = 512

// Kind is the kind of a speech boundary.
type Kind int

const (
	SpeechStart Kind = iota + 1
	SpeechEnd
)

// Event reports a speech boundary at a stream position (16 kHz samples).
type Event struct {
	Kind Kind
	Pos  int64
}

// Result is a VAD's verdict after a frame.
type Result struct {
	// Events are the boundaries confirmed by this frame, which may lie
	// before it (a start is confirmed only after the minimum speech).
	Events []Event
	// Voiced says whether the latest window sounded like speech; the
	// pipeline adds these up to tell an interruption from a cough.
	Voiced bool
	// Prob is the latest speech probability (for level meters).
	Prob float32
	// Pausing says the speech may have just ended: inside a confirmed
	// segment, silence has begun but has not yet lasted long enough to end
	// it. It is the earliest sign that the user has finished, which a
	// speculative reply can start on.
	Pausing bool
}
