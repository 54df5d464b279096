// Package turn decides when the user has finished speaking: the
// endpointing policy (silence, the turn model's verdict, a fallback) over
// any turn model; Smart Turn v3 is in turn/smartturn.
package turn

import (
	"fmt"
	"math"
	"time"
)

// Config holds the endpointing thresholds. Times are audio time.
type Config struct {
	// CandidateSilence is the pause after which the turn model is asked
	// whether the user has finished (default 200 ms). The VAD reports
	// shorter pauses too (between words); asking then would only waste a
	// model run and risk an early commit.
	CandidateSilence time.Duration `yaml:"candidate_silence"`
	// CompleteThreshold is the turn model's probability above which a
	// pause ends the turn. 0.5, strictly above, is Smart Turn's own
	// decision (pipecat-ai/smart-turn inference.py).
	CompleteThreshold float64 `yaml:"complete_threshold"`
	// StableFor is how long the partial transcript must stay unchanged
	// before a commit, so the reply does not start from words the
	// recognizer is still revising.
	StableFor time.Duration `yaml:"stable_for"`
	// SilenceWithoutModel ends the turn after this much silence when no
	// turn model is loaded: long enough to span a breath between clauses,
	// short enough to feel responsive.
	SilenceWithoutModel time.Duration `yaml:"silence_without_model"`
	// FallbackSilence commits whatever the turn model says, so a user who
	// trails off is never left waiting.
	FallbackSilence time.Duration `yaml:"fallback_silence"`
}

// DefaultConfig follows the architecture: candidate on the VAD's short
// silence, the model decides, ~3 s fallback.
func DefaultConfig() Config {
	return Config{
		CandidateSilence:    200 * time.Millisecond,
		CompleteThreshold:   0.5,
		StableFor:           100 * time.Millisecond,
		SilenceWithoutModel: 700 * time.Millisecond,
		FallbackSilence:     3 * time.Second,
	}
}

// Validate names the first threshold that makes no sense, by its config
// key under endpoint.
func (c Config) Validate() error {
	for _, d := range []struct {
		key string
		v   time.Duration
	}{
		{"candidate_silence", c.CandidateSilence}, {"stable_for", c.StableFor},
		{"silence_without_model", c.SilenceWithoutModel}, {"fallback_silence", c.FallbackSilence},
	} {
		if d.v < 0 || d.v > time.Minute {
			return fmt.Errorf("endpoint.%s: %v is not between 0 and 1m", d.key, d.v)
		}
	}
	switch {
	case math.IsNaN(c.CompleteThreshold) || c.CompleteThreshold < 0 || c.CompleteThreshold > 1:
		return fmt.Errorf("endpoint.complete_threshold: %v is not between 0 and 1", c.CompleteThreshold)
	case c.FallbackSilence < c.CandidateSilence:
		return fmt.Errorf("endpoint.fallback_silence: %v is shorter than candidate_silence %v, so the turn model would never be asked", c.FallbackSilence, c.CandidateSilence)
	}
	return nil
}

// Decision is what the endpointer wants next.
type Decision int

const (
	// Wait: keep listening.
	Wait Decision = iota
	// Predict: run the turn model on the turn so far and report it with
	// Predicted.
	Predict
	// Commit: the user's turn is over.
	Commit
)

// Reason says why a turn was committed.
type Reason string

const (
	ReasonComplete Reason = "complete" // the turn model said so
	ReasonSilence  Reason = "silence"  // no model: enough silence
	ReasonFallback Reason = "fallback" // the model said incomplete for too long
)

// Endpointer is the endpointing state machine for one user turn. It does
// no I/O, so it is driven the same way live and in replay.
type Endpointer struct {
	cfg      Config
	hasModel bool

	speaking    bool
	silentSince time.Duration // end of the last speech segment
	candidate   bool          // a pause waiting for a verdict
	predicted   bool          // the model has judged this pause
	complete    bool

	text        string
	textChanged time.Duration
}

// NewEndpointer returns a policy; hasModel says whether a turn model will
// answer Predict decisions.
func NewEndpointer(cfg Config, hasModel bool) *Endpointer {
	return &Endpointer{cfg: cfg, hasModel: hasModel}
}

// SpeechStart cancels any pending candidate: the user is talking again.
func (e *Endpointer) SpeechStart() {
	e.speaking = true
	e.candidate, e.predicted, e.complete = false, false, false
}

// SpeechEnd makes the pause a candidate end of turn.
func (e *Endpointer) SpeechEnd(at time.Duration) {
	e.speaking = false
	e.silentSince = at
	e.candidate, e.predicted, e.complete = true, false, false
}

// Transcript reports the latest partial transcript.
func (e *Endpointer) Transcript(text string, at time.Duration) {
	if text != e.text {
		e.text = text
		e.textChanged = at
	}
}

// Predicted reports the turn model's completion probability.
func (e *Endpointer) Predicted(prob float64) {
	e.predicted = true
	e.complete = prob > e.cfg.CompleteThreshold
}

// Update is called as audio time passes and says what to do now.
func (e *Endpointer) Update(now time.Duration) (Decision, Reason) {
	if e.speaking || !e.candidate {
		return Wait, ""
	}
	silence := now - e.silentSince
	if silence >= e.cfg.FallbackSilence {
		return Commit, ReasonFallback
	}
	stable := now-e.textChanged >= e.cfg.StableFor
	if !e.hasModel {
		if silence >= e.cfg.SilenceWithoutModel && stable {
			return Commit, ReasonSilence
		}
		return Wait, ""
	}
	if !e.predicted {
		if silence < e.cfg.CandidateSilence {
			return Wait, ""
		}
		return Predict, ""
	}
	if e.complete && stable {
		return Commit, ReasonComplete
	}
	return Wait, ""
}
