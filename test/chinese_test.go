package test

import (
	"encoding/json"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/voiceassistant/voice/audio/testspeech"
	"github.com/voiceassistant/voice/internal/testenv"
	"github.com/voiceassistant/voice/pipeline"
)

// talk is a spoken three-turn conversation in one language: a question,
// a backchannel over its reply that must not interrupt, a second
// question after the reply, and an interruption over the second reply.
type talk struct {
	lang, voice                              string
	question, backchannel, second, interrupt string
	replies                                  []string
}

var talks = []talk{
	{
		lang: "en", voice: "en-us",
		question: "what is the weather like today", backchannel: "yeah", second: "and tomorrow",
		interrupt: "no I meant in shanghai",
		replies: []string{
			"It is sunny in Beijing today, with a high of fifteen degrees.",
			"Tomorrow it will rain all day, so take an umbrella and a warm coat with you when you go out.",
			"In Shanghai it will be cloudy and mild.",
		},
	},
	{
		lang: "zh", voice: "cmn",
		question: "今天天气怎么样", backchannel: "嗯", second: "明天呢",
		interrupt: "不对我问的是上海",
		replies: []string{
			"今天北京是晴天，最高气温十五度，最低三度，很适合出去散步。",
			"明天会下一整天的雨，出门的时候记得带上雨伞，再穿一件厚一点的外套，晚上会更冷。",
			"上海明天多云，气温比较温和。",
		},
	},
}

// record speaks the conversation and writes it and its script for the
// doubles (the scripted recognizer hears each utterance; the scripted
// turn detector calls every pause after one complete).
func (c talk) record(t *testing.T) (wav, script string) {
	t.Helper()
	say := func(text string) testspeech.Part { return testspeech.Part{Text: text, Voice: c.voice} }
	quiet := func(d time.Duration) testspeech.Part { return testspeech.Part{Silence: d} }
	return spoken(t, c.lang, c.replies, 150, 30,
		quiet(500*time.Millisecond), say(c.question),
		quiet(time.Second), say(c.backchannel), // over the first reply
		quiet(9*time.Second), say(c.second),
		quiet(1500*time.Millisecond), say(c.interrupt), // over the second reply
		quiet(6*time.Second),
	)
}

// replayed is what a replay of a conversation shows.
type replayed struct {
	commits                    []string
	pending, bargeIns, resumed int
	ignored, continued         int
	firstChunks                []string // each turn's first chunk
	voiceToVoice               []float64
}

func replayTalk(t *testing.T, bin, wav, script string, extra ...string) replayed {
	t.Helper()
	args := append([]string{"replay", wav, "--json", "--vad", "silero", "--asr", "scripted", "--turn", "scripted",
		"--llm", "scripted", "--tts", "tone", "--script", script, "--compute-scale", "1"}, extra...)
	out, stderr, err := run(t, bin, args...)
	require.NoError(t, err, stderr)
	var r replayed
	seen := map[int]bool{}
	for _, line := range strings.Split(strings.TrimSpace(out), "\n") {
		var e struct {
			Type    string                `json:"type"`
			Turn    int                   `json:"turn"`
			Text    string                `json:"text"`
			Metrics *pipeline.TurnMetrics `json:"metrics"`
		}
		require.NoError(t, json.Unmarshal([]byte(line), &e))
		switch e.Type {
		case "turn_commit":
			r.commits = append(r.commits, e.Text)
		case "barge_in_pending":
			r.pending++
		case "barge_in":
			r.bargeIns++
		case "barge_in_resumed":
			r.resumed++
		case "speech_ignored":
			r.ignored++
		case "turn_continued":
			r.continued++
		case "tts_chunk":
			if !seen[e.Turn] {
				seen[e.Turn] = true
				r.firstChunks = append(r.firstChunks, e.Text)
			}
		case "turn_metrics":
			r.voiceToVoice = append(r.voiceToVoice, e.Metrics.EndToEndMS)
		}
	}
	return r
}

// The assistant's own language end to end: a Mandarin conversation
// (espeak-ng's cmn voice, real Silero) replayed as the English one is,
// with the doubles and compute on the clock: the same turns, the 嗯 over
// a reply resumes it, the interruption cuts the next, each reply's first
// chunk is short (at most 8 characters in Chinese), and Chinese voice to
// voice is within 50 ms of English's.
func TestChineseConversation(t *testing.T) {
	testenv.Model(t, "silero_vad_v5.onnx")
	p50 := map[string]float64{}
	for _, c := range talks {
		t.Run(c.lang, func(t *testing.T) {
			wav, script := c.record(t)
			r := replayTalk(t, binary, wav, script)
			t.Logf("%s: commits %q, first chunks %q, voice to voice %v ms", c.lang, r.commits, r.firstChunks, r.voiceToVoice)
			assert.Equal(t, []string{c.question, c.second, c.interrupt}, r.commits)
			assert.Equal(t, 1, r.resumed, "the backchannel over the first reply resumes it")
			assert.Equal(t, 1, r.bargeIns, "the interruption cuts the second reply")
			assert.Zero(t, r.ignored)
			require.Len(t, r.firstChunks, 3)
			for _, fc := range r.firstChunks {
				if c.lang == "zh" {
					assert.LessOrEqual(t, utf8.RuneCountInString(fc), 8, "first chunk %q", fc)
				} else {
					assert.LessOrEqual(t, len(strings.Fields(fc)), 2, "first chunk %q", fc)
				}
			}
			require.Len(t, r.voiceToVoice, 3)
			p50[c.lang] = pipeline.Percentile(r.voiceToVoice, 50)
		})
	}
	if len(p50) == 2 {
		t.Logf("voice to voice p50: en %.0f ms, zh %.0f ms", p50["en"], p50["zh"])
		assert.InDelta(t, p50["en"], p50["zh"], 50, "Chinese voice to voice within 50 ms of English's")
	}
}

// With the simulated echo path and WebRTC's echo canceller the same
// conversations go as they do without an echo: the canceller keeps the
// replies' own voice from pausing them.
func TestChineseConversationWithEcho(t *testing.T) {
	testenv.Model(t, "silero_vad_v5.onnx")
	if err := exec.Command("pkg-config", "--exists", "webrtc-audio-processing").Run(); err != nil {
		testenv.Missing(t, "WebRTC audio processing not installed (scripts/setup installs it)")
	}
	withAPM := filepath.Join(t.TempDir(), "voice-agent")
	out, err := exec.Command("go", "build", "-tags", "webrtcapm", "-o", withAPM, "../cmd/voice-agent").CombinedOutput()
	require.NoError(t, err, string(out))
	for _, c := range talks {
		t.Run(c.lang, func(t *testing.T) {
			wav, script := c.record(t)
			r := replayTalk(t, withAPM, wav, script, "--echo-gain", "0.3", "--echo-delay", "60ms")
			t.Logf("%s with echo: commits %q, %d paused, %d resumed, voice to voice %v ms", c.lang, r.commits, r.pending, r.resumed, r.voiceToVoice)
			assert.Equal(t, []string{c.question, c.second, c.interrupt}, r.commits)
			assert.Equal(t, 1, r.bargeIns)
			// The noise suppressor may take a lone 嗯 for noise: then it
			// does not even pause the reply. Whatever pauses it, other
			// than the interruption, resumes it.
			assert.Equal(t, r.pending-1, r.resumed, "every pause but the interruption resumed")
			assert.Zero(t, r.ignored)
		})
	}
}
