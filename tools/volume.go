package tools

import (
	"context"
	"errors"
	"fmt"
	"math"
	"sync"
)

// Volumer is what set_volume turns up and down: the player's master
// volume (audio.Player), 0..1.
type Volumer interface {
	SetVolume(float32)
	Volume() float32
}

// volumeStep is what "up" and "down" change, in points of 100: five steps
// from silence to full, few enough to get anywhere by voice.
const volumeStep = 20

// NewVolume is set_volume, on v.
func NewVolume(v Volumer) Tool {
	s := &volume{v: v}
	return newTool("set_volume", "Change how loud you speak.",
		`{"type":"object","properties":{`+
			`"action":{"type":"string","enum":["up","down","set","mute","unmute"],"description":"What to do"},`+
			`"level":{"type":"integer","description":"Volume 0 to 100, only with set"}},`+
			`"required":["action"]}`,
		s.call)
}

type volume struct {
	v Volumer

	mu    sync.Mutex
	muted bool // by mute, and still silent
	saved int  // the level before mute, which unmute restores
}

type volumeArgs struct {
	Action string `json:"action"`
	Level  *int   `json:"level"`
}

type volumeResult struct {
	Volume int  `json:"volume"`
	Muted  bool `json:"muted"`
}

func (s *volume) call(_ context.Context, a volumeArgs) (any, error) {
	switch {
	case a.Action == "":
		return nil, errors.New("action is required: up, down, set, mute or unmute")
	case a.Action == "set" && a.Level == nil:
		return nil, errors.New("set needs level, 0 to 100")
	case a.Action == "set" && (*a.Level < 0 || *a.Level > 100):
		return nil, fmt.Errorf("level must be 0 to 100, not %d", *a.Level)
	case a.Action != "set" && a.Level != nil:
		return nil, fmt.Errorf("level goes only with set, not with %s", a.Action)
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	cur := int(math.Round(float64(s.v.Volume()) * 100))
	// Another control (the host, a key) may have set a level since mute.
	muted := s.muted && cur == 0
	base := cur
	if muted {
		base = s.saved
	}
	var next int
	switch a.Action {
	case "up":
		next = min(base+volumeStep, 100)
	case "down":
		next = max(base-volumeStep, 0)
	case "set":
		next = *a.Level
	case "mute":
		if !muted {
			s.saved = cur
		}
		s.muted = true
		s.v.SetVolume(0)
		return volumeResult{0, true}, nil
	case "unmute":
		next = base
		if next == 0 {
			// Unmuted to silence, the user would hear no change at all.
			next = volumeStep
		}
	default:
		return nil, fmt.Errorf("action must be up, down, set, mute or unmute, not %q", a.Action)
	}
	s.muted = false
	s.v.SetVolume(float32(next) / 100)
	return volumeResult{next, false}, nil
}
