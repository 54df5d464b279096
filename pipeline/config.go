package pipeline

import (
	"fmt"
	"slices"
	"time"

	"github.com/voiceassistant/voice/internal/clock"
	"github.com/voiceassistant/voice/llm"
	"github.com/voiceassistant/voice/pipeline/listen"
	"github.com/voiceassistant/voice/pipeline/reply"
	"github.com/voiceassistant/voice/turn"
)

// Config assembles a pipeline. Clock, Device, VAD, ASR, LLM, History and
// NewChunker are required; Turn and TTS are optional (without a turn model
// the endpointer commits on silence, without TTS replies are text only).
type Config struct {
	Clock      clock.Clock
	Device     Device
	VAD        VAD
	ASR        ASR
	Turn       TurnDetector
	LLM        Generator
	NewChunker func() Chunker
	TTS        Synthesizer
	History    *llm.History

	Endpoint turn.Config
	BargeIn  BargeIn
	// PreRoll is audio kept before the VAD's speech start and given to the
	// recognizer, so the first phoneme is not clipped.
	PreRoll time.Duration
	// TurnWindow is the most audio given to the turn model (Smart Turn
	// was trained on up to 8 s).
	TurnWindow time.Duration
	// HalfDuplex closes the microphone while the assistant responds and
	// for HalfDuplex.Tail after its last sample (the room's echo tail),
	// for setups without echo cancellation: no self-interruption, but no
	// barge-in either. Speech still going on when the microphone opens is
	// the next turn, with what it captured since the last sample played
	// as pre-roll.
	HalfDuplex HalfDuplex
	// Speculate starts the reply at the user's first pause, before the
	// turn is committed (a speculative reply: speculate.go), if the LLM rolls back.
	Speculate bool
	// Interrupt, if set, stops the reply whenever a value arrives: the
	// user's stop key (the desktop app's Esc). It acts as a barge-in that
	// needs no speech to decide: speech already over the reply becomes the
	// next turn, and a speculated reply, not heard yet, is left alone. As
	// with capture frames, the sender takes a hold on the clock before
	// each send (clock.Clock.Hold) and the pipeline releases it once it
	// has acted, so on a virtual clock the stop lands at one audio time.
	Interrupt <-chan struct{}
	// Commands, if set, takes the host's commands (Command).
	Commands <-chan Command
	// Activation is what opens a user turn: any speech, or the host's
	// talk button (listen.Activation).
	Activation Activation
	// Alive, if set, is called once per round of Run's loop, from the
	// loop: a stage that blocks the loop stops the calls, which is what a
	// watchdog (systemd's, package sdnotify) watches for. It must not
	// block.
	Alive func()
	// Need, if set, is told what the session needs of its capture, on
	// each change (from Run's goroutine): a device may then wake less
	// often, and a front end rest (see Need).
	Need func(Need)
	// Tools, if set, are what the model may call (tools.Registry): a
	// reply runs the calls the model writes, as ToolPolicy says
	// (reply.Converse). Nil: replies are all speech.
	Tools      Toolbox
	ToolPolicy reply.ToolPolicy
	// Notices, if set, takes texts the assistant says of its own accord
	// (a timer that fired), each as OpSay's: after a reply under way, and
	// cut by a barge-in as any reply. As with commands, the sender holds
	// the clock before each send and the session releases it.
	Notices <-chan string
	// Continue is when speech right after a commit continues that turn.
	Continue Continuation
	// ComputeScale puts each stage's measured compute, times this, on the
	// clock (package compute); 0 leaves compute free, for replays whose
	// figures are the same on every run.
	ComputeScale float64
	// measureCompute, when set (only tests set it: export_test.go), is
	// what compute is measured on instead of the wall clock: one that
	// only the stages' calls move makes the figures exact.
	measureCompute func() time.Time
}

// Need is what a session needs of its capture at a moment.
type Need int

const (
	// NeedPrompt is each frame as soon as it is captured: a turn is
	// open, or a reply is under way (speech over it is decided frame by
	// frame).
	NeedPrompt Need = iota
	// NeedListen is every frame, but a few periods late will do: the
	// session listens for speech to begin, and a turn opened that much
	// later holds the same audio (its end, which the user waits on, is
	// decided on prompt frames).
	NeedListen
	// NeedPreRoll is the capture only kept for a turn's pre-roll: no
	// stage listens (an idle push or host-wake session, see
	// listen.Listener.Idle) and nothing plays or waits to be said. The
	// front end (echo cancellation, noise suppression) may rest too:
	// nothing plays for it to cancel, and the pre-roll may be heard as
	// captured.
	NeedPreRoll
)

// Continuation is when speech right after a commit continues that turn
// (listen.Continuation).
type Continuation = listen.Continuation

// Activation is what opens a user turn (listen.Activation).
type Activation = listen.Activation

// ActivationMode names an activation.
type ActivationMode = listen.ActivationMode

// The activations.
const (
	ActivateAlways = listen.ActivateAlways
	ActivatePush   = listen.ActivatePush
	ActivateWake   = listen.ActivateWake
)

// HalfDuplex configures microphone gating.
type HalfDuplex struct {
	Enabled bool
	Tail    time.Duration
}

// Validate names a tail that makes no sense, by its config key. The tail
// keeps the microphone shut after a reply's last sample while the room's
// echo and the device's output latency die out: well under a second. A
// longer one than 10 s leaves the assistant deaf to the answer to its own
// question.
func (h HalfDuplex) Validate() error {
	if h.Tail < 0 || h.Tail > 10*time.Second {
		return fmt.Errorf("half_duplex_tail: %v is not between 0 and 10s", h.Tail)
	}
	return nil
}

// DefaultConfig fills in the policy knobs; the stages are up to the caller.
func DefaultConfig() Config {
	return Config{
		Endpoint:   turn.DefaultConfig(),
		BargeIn:    DefaultBargeIn(),
		HalfDuplex: HalfDuplex{Tail: 300 * time.Millisecond},
		PreRoll:    700 * time.Millisecond,
		TurnWindow: 8 * time.Second,
		Speculate:  true,
		Activation: Activation{Mode: ActivateAlways, Phrases: listen.DefaultWakePhrases(), FollowUp: listen.DefaultFollowUp},
		Continue:   Continuation{Window: 1500 * time.Millisecond, MaxHeard: 300 * time.Millisecond},
	}
}

func (c Config) validate() error {
	var missing []string
	for name, ok := range map[string]bool{
		"Clock": c.Clock != nil, "Device": c.Device != nil, "VAD": c.VAD != nil,
		"ASR": c.ASR != nil, "LLM": c.LLM != nil, "History": c.History != nil,
		"NewChunker": c.NewChunker != nil,
	} {
		if !ok {
			missing = append(missing, name)
		}
	}
	if len(missing) > 0 {
		slices.Sort(missing)
		return fmt.Errorf("pipeline: config lacks %v", missing)
	}
	if err := c.Endpoint.Validate(); err != nil {
		return fmt.Errorf("pipeline: %w", err)
	}
	if err := c.BargeIn.Validate(); err != nil {
		return fmt.Errorf("pipeline: %w", err)
	}
	if err := c.Activation.Validate(); err != nil {
		return fmt.Errorf("pipeline: %w", err)
	}
	if err := c.Continue.Validate(); err != nil {
		return fmt.Errorf("pipeline: %w", err)
	}
	if err := c.HalfDuplex.Validate(); err != nil {
		return fmt.Errorf("pipeline: %w", err)
	}
	for name, d := range map[string]time.Duration{"pre-roll": c.PreRoll, "turn window": c.TurnWindow} {
		if d < 0 || d > time.Minute {
			return fmt.Errorf("pipeline: %s %v is not between 0 and 1m", name, d)
		}
	}
	return nil
}
