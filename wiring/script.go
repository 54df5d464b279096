package wiring

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"os"
	"time"

	"github.com/voiceassistant/voice/standin"
)

// Script is the JSON file read by the scripted stand-ins: what the user
// says when (for the scripted recognizer) and what the assistant answers.
type Script struct {
	User []struct {
		StartMS float64 `json:"start_ms"`
		EndMS   float64 `json:"end_ms"`
		Text    string  `json:"text"`
		// TurnComplete is what the scripted turn detector says in the
		// pause after this utterance: the probability that the user has
		// finished (default 1). A lower value makes the pause one the
		// user goes on after.
		TurnComplete *float64 `json:"turn_complete"`
		// Words optionally time each word; by default they share the
		// utterance evenly.
		Words []struct {
			Text    string  `json:"text"`
			StartMS float64 `json:"start_ms"`
			EndMS   float64 `json:"end_ms"`
		} `json:"words"`
	} `json:"user"`
	Replies         []string `json:"replies"`
	FirstTokenMS    float64  `json:"first_token_ms"`
	TokensPerSecond float64  `json:"tokens_per_second"`
}

// maxScriptMS bounds every time in a script (a day), so a typo cannot
// overflow a duration.
const maxScriptMS = 24 * 3600 * 1000

// ParseScript reads a script; name labels errors.
func ParseScript(data []byte, name string) (*Script, error) {
	var s Script
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&s); err != nil {
		return nil, fmt.Errorf("script %s: %w", name, err)
	}
	inRange := func(ms float64) bool { return ms >= 0 && ms <= maxScriptMS }
	for i, u := range s.User {
		if !inRange(u.StartMS) || !inRange(u.EndMS) || u.EndMS < u.StartMS {
			return nil, fmt.Errorf("script %s: user[%d]: start_ms %v and end_ms %v must satisfy 0 <= start <= end <= %d", name, i, u.StartMS, u.EndMS, maxScriptMS)
		}
		if p := u.TurnComplete; p != nil && (math.IsNaN(*p) || *p < 0 || *p > 1) {
			return nil, fmt.Errorf("script %s: user[%d]: turn_complete %v is not a probability (0 to 1)", name, i, *p)
		}
		for j, w := range u.Words {
			if w.StartMS < u.StartMS || w.EndMS > u.EndMS || w.EndMS < w.StartMS {
				return nil, fmt.Errorf("script %s: user[%d].words[%d]: %v-%v ms lies outside its utterance %v-%v ms", name, i, j, w.StartMS, w.EndMS, u.StartMS, u.EndMS)
			}
		}
	}
	if !inRange(s.FirstTokenMS) {
		return nil, fmt.Errorf("script %s: first_token_ms %v is not between 0 and %d", name, s.FirstTokenMS, maxScriptMS)
	}
	if s.TokensPerSecond < 0 || s.TokensPerSecond > 1e6 {
		return nil, fmt.Errorf("script %s: tokens_per_second %v is not between 0 (all at once) and 1e6", name, s.TokensPerSecond)
	}
	return &s, nil
}

// Utterances are the script's user speech for the scripted recognizer.
func (s *Script) Utterances() []standin.Utterance {
	var out []standin.Utterance
	for _, u := range s.User {
		utt := standin.Utterance{Start: msDur(u.StartMS), End: msDur(u.EndMS), Text: u.Text, TurnComplete: 1}
		if u.TurnComplete != nil {
			utt.TurnComplete = *u.TurnComplete
		}
		for _, w := range u.Words {
			utt.Words = append(utt.Words, standin.Word{Text: w.Text, Start: msDur(w.StartMS), End: msDur(w.EndMS)})
		}
		out = append(out, utt)
	}
	return out
}

func loadScript(path string) (*Script, error) {
	if path == "" {
		return nil, errors.New("the scripted stand-ins need --script FILE (JSON with \"user\" and \"replies\")")
	}
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("script: %w", err)
	}
	return ParseScript(data, path)
}

func msDur(ms float64) time.Duration { return time.Duration(ms * float64(time.Millisecond)) }
