package wiring

import (
	"cmp"
	"fmt"
	"log/slog"
	"sync"
	"time"

	"github.com/voiceassistant/voice/audio"
	"github.com/voiceassistant/voice/internal/clock"
	"github.com/voiceassistant/voice/llm"
	"github.com/voiceassistant/voice/pipeline"
	"github.com/voiceassistant/voice/pipeline/reply"
	"github.com/voiceassistant/voice/tools"
	"github.com/voiceassistant/voice/tts/normalize"
)

// Tools is what the assistant may do besides talk (package tools).
type Tools struct {
	// Enabled gives the model the built-in tools, and the host's
	// (control socket); off, replies are all speech, as before tools.
	Enabled bool `yaml:"enabled"`
	// Disable names built-in tools the model is not given (get_time,
	// timer, note, set_volume, repeat_last_reply).
	Disable []string `yaml:"disable"`
	// NotesFile is where the note tool keeps the notes (default
	// $XDG_STATE_HOME/voice-agent/notes.json).
	NotesFile string `yaml:"notes_file"`
	// HostTimeout is how long a call to one of the host's tools waits for
	// its answer (default 10s).
	HostTimeout time.Duration `yaml:"host_timeout"`
	// AckAfter is how long a tool runs before the reply says "One
	// moment." (default 400ms); Rounds bounds a reply's rounds of calls
	// (default 3). See reply.ToolPolicy.
	AckAfter time.Duration `yaml:"ack_after"`
	Rounds   int           `yaml:"rounds"`
}

// DefaultTools are off, with the policy's defaults spelt out, so that
// `voice-agent config` prints them.
func DefaultTools() Tools {
	p := reply.DefaultToolPolicy()
	return Tools{Disable: []string{}, HostTimeout: DefaultHostTimeout, AckAfter: p.AckAfter, Rounds: p.Rounds}
}

// DefaultHostTimeout is how long a host tool's call waits for its answer:
// a photo or a phone's lookup takes a second or two, and a host that has
// not answered in ten has gone.
const DefaultHostTimeout = 10 * time.Second

// Validate names a setting that makes no sense by its config key.
func (t Tools) Validate() error {
	if t.HostTimeout < 0 || t.HostTimeout > 5*time.Minute {
		return fmt.Errorf("tools.host_timeout: %v is not between 0 (10s) and 5m", t.HostTimeout)
	}
	if t.AckAfter < 0 || t.AckAfter > 10*time.Second {
		return fmt.Errorf("tools.ack_after: %v is not between 0 (400ms) and 10s", t.AckAfter)
	}
	if t.Rounds < 0 || t.Rounds > 10 {
		return fmt.Errorf("tools.rounds: %d is not between 0 (3) and 10", t.Rounds)
	}
	_, err := tools.Disable(nil, t.Disable)
	if err != nil {
		return fmt.Errorf("tools.disable: %w", err)
	}
	return nil
}

// Policy is the reply's tool policy the settings make, defaults filled
// in.
func (t Tools) Policy() reply.ToolPolicy {
	d := reply.DefaultToolPolicy()
	return reply.ToolPolicy{AckAfter: cmp.Or(t.AckAfter, d.AckAfter), Rounds: cmp.Or(t.Rounds, d.Rounds)}
}

// Toolset is a session's tools: the registry the model calls into (the
// host adds its own), the timers that speak up when they go off, and the
// volume the set_volume tool turns, which plays through the player it is
// given (Attach) once the session has one.
type Toolset struct {
	Registry *tools.Registry
	Timers   *tools.Timers
	Volume   *Volume
}

// NewToolset makes the built-in tools t leaves on into reg (a new one if
// nil) for a session on clk with history hist, and tells gen of every
// change to the tools where it takes them (llm.ToolUser). Close stops the
// timers.
func NewToolset(t Tools, clk clock.Clock, hist *llm.History, gen pipeline.Generator, reg *tools.Registry) (*Toolset, error) {
	if err := t.Validate(); err != nil {
		return nil, err
	}
	notesFile := t.NotesFile
	if notesFile == "" {
		var err error
		if notesFile, err = tools.DefaultNotesPath(); err != nil {
			return nil, err
		}
	}
	notes, err := tools.NewNotes(notesFile)
	if err != nil {
		return nil, err
	}
	if reg == nil {
		reg = &tools.Registry{}
	}
	ts := &Toolset{Registry: reg, Timers: tools.NewTimers(clk, time.Now), Volume: &Volume{level: 1}}
	ts.Timers.Lang = func() normalize.Language { return normalize.Detect(hist.Last(llm.User)) }
	builtins := []tools.Tool{tools.NewTime(time.Now)}
	builtins = append(builtins, ts.Timers.Tools()...)
	builtins = append(builtins, notes.Tools()...)
	builtins = append(builtins, tools.NewVolume(ts.Volume), tools.NewRepeat(func() string { return hist.Last(llm.Assistant) }))
	if builtins, err = tools.Disable(builtins, t.Disable); err != nil {
		ts.Close()
		return nil, err
	}
	reg.Add(builtins...)
	if u, ok := gen.(llm.ToolUser); ok {
		reg.OnChange(func(specs []llm.ToolSpec) {
			if err := u.SetTools(specs); err != nil {
				slog.Error("the model could not be told of the tools", "error", err)
			}
		})
	}
	return ts, nil
}

// Close stops the timers.
func (ts *Toolset) Close() error {
	ts.Timers.Close()
	return nil
}

// Volume is the assistant's own volume (tools.Volumer): kept here until
// the session's player exists, and then the player's.
type Volume struct {
	mu     sync.Mutex
	level  float32
	player *audio.Player
}

// Attach plays the volume through p from now on.
func (v *Volume) Attach(p *audio.Player) {
	v.mu.Lock()
	defer v.mu.Unlock()
	v.player = p
	p.SetVolume(v.level)
}

func (v *Volume) SetVolume(level float32) {
	v.mu.Lock()
	defer v.mu.Unlock()
	v.level = min(max(level, 0), 1)
	if v.player != nil {
		v.player.SetVolume(v.level)
	}
}

func (v *Volume) Volume() float32 {
	v.mu.Lock()
	defer v.mu.Unlock()
	return v.level
}
