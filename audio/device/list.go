package device

// Backends and their devices: which miniaudio backends a Config may name,
// the devices each offers, and how a configured name picks one.

import (
	"fmt"
	"runtime"
	"strings"

	"github.com/gen2brain/malgo"
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

// Info describes one device a backend offers.
type Info struct {
	Name    string `json:"name"`
	Kind    string `json:"kind"` // "capture" or "playback"
	Default bool   `json:"default"`
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
		return nil, fmt.Errorf("audio backend %s: cannot initialise (%w): is the sound server running and the backend installed?", backendLabel(backend), err)
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
		return nil, nil, fmt.Errorf("audio backend %s: cannot list devices: %w", backendLabel(backend), err)
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
