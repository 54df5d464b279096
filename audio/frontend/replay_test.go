//go:build webrtcapm

package frontend

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/voiceassistant/voice/audio"
	"github.com/voiceassistant/voice/internal/clock"
	"github.com/voiceassistant/voice/llm"
	"github.com/voiceassistant/voice/pipeline"
	"github.com/voiceassistant/voice/standin"
	"github.com/voiceassistant/voice/tts/chunk"
)

// replayWithEcho runs a conversation whose reply is played through a
// simulated echo path back into the microphone, with or without the
// echo canceller, and returns the pauses for what the assistant heard,
// the confirmed barge-ins and the replies played to their end.
func replayWithEcho(t *testing.T, aec bool, user []standin.Utterance) (paused, barge []pipeline.Event, finished int) {
	t.Helper()
	clk := clock.NewVirtual()
	cfg := pipeline.DefaultConfig()
	cfg.VAD = standin.NewEnergyVAD()
	cfg.ASR = &standin.ScriptedASR{Script: user}
	cfg.LLM = &standin.ScriptedLLM{Clock: clk, TokensPerSecond: 20, FirstToken: 100 * time.Millisecond,
		Replies: []string{"Once upon a time there was a small robot who loved to sing songs about the sea, the sky and the stars above the hills.", "Okay."}}
	cfg.NewChunker = func() pipeline.Chunker { return chunk.New(chunk.DefaultConfig()) }
	cfg.TTS = standin.NewToneTTS()
	cfg.History = llm.NewHistory("", 0)
	dev := audio.VirtualConfig{
		Input: standin.Voice(14*time.Second, user...),
		Echo:  &audio.Echo{Delay: 60 * time.Millisecond, Gain: 0.5},
	}
	if aec {
		p, err := New(Config{AEC: true, NS: true, DelayMS: 60})
		require.NoError(t, err)
		t.Cleanup(p.Close)
		dev.FrontEnd = p
	}
	_, err := pipeline.Replay(context.Background(), clk, cfg, dev, func(e pipeline.Event) {
		switch e.Type {
		case pipeline.EvBargeInPending:
			paused = append(paused, e)
		case pipeline.EvBargeIn:
			barge = append(barge, e)
		case pipeline.EvPlaybackStop:
			finished++
		}
	})
	require.NoError(t, err)
	return paused, barge, finished
}

var question = standin.Utterance{Start: 300 * time.Millisecond, End: 1300 * time.Millisecond, Text: "tell me a story"}

func TestEchoDoesNotInterruptWithAEC(t *testing.T) {
	paused, barge, finished := replayWithEcho(t, true, []standin.Utterance{question})
	assert.Empty(t, paused, "the assistant paused for its own echo")
	assert.Empty(t, barge, "the assistant interrupted itself through its own echo")
	assert.Equal(t, 1, finished, "the whole reply was played")
}

func TestEchoInterruptsWithoutAEC(t *testing.T) {
	// Proves the test above can fail: the same replay without the echo
	// canceller hears its own reply as the user and pauses for it.
	paused, _, _ := replayWithEcho(t, false, []standin.Utterance{question})
	assert.NotEmpty(t, paused)
}

func TestUserStillInterruptsWithAEC(t *testing.T) {
	stop := standin.Utterance{Start: 5 * time.Second, End: 6 * time.Second, Text: "stop please"}
	paused, barge, _ := replayWithEcho(t, true, []standin.Utterance{question, stop})
	// Paused as soon as the voice is heard, cancelled at the first word
	// ("stop", the first half of the utterance).
	require.Len(t, paused, 1)
	assert.GreaterOrEqual(t, paused[0].At, stop.Start)
	assert.Less(t, paused[0].At, stop.Start+300*time.Millisecond)
	require.Len(t, barge, 1)
	assert.GreaterOrEqual(t, barge[0].At, stop.Start+500*time.Millisecond)
	assert.Less(t, barge[0].At, stop.Start+700*time.Millisecond)
}
