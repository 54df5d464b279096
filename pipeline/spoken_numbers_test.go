package pipeline_test

import (
	"context"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"

	"github.com/voiceassistant/voice/pipeline"
	"github.com/voiceassistant/voice/standin"
	"github.com/voiceassistant/voice/tts/normalize"
)

// readingTTS is a tone synthesizer that records what MOSS-TTS-Nano would
// be given to speak: each chunk read by tts/normalize in the language the
// pipeline passes, as tts/moss's Synthesize reads it.
type readingTTS struct {
	*standin.ToneTTS
	mu   sync.Mutex
	read []string
}

func (r *readingTTS) Synthesize(ctx context.Context, text string, lang normalize.Language, emit func([]float32) error) error {
	r.mu.Lock()
	r.read = append(r.read, normalize.Reply(text, lang))
	r.mu.Unlock()
	return r.ToneTTS.Synthesize(ctx, text, lang, emit)
}

func (r *readingTTS) spoken() string {
	r.mu.Lock()
	defer r.mu.Unlock()
	return strings.Join(r.read, "")
}

// Replies with numbers, dates, money and units are spoken as words in the
// reply's language, end to end: the scripted LLM's reply is chunked,
// passed to synthesis with its language, and read. A bare expression
// ("1+1=2" on a line of its own) follows the reply's words before it, and a reply of
// nothing but one follows the conversation.
func TestRepliesWithNumbersAreSpokenInTheirLanguage(t *testing.T) {
	for _, tc := range []struct {
		name, question, reply string
		want, notWant         []string
	}{
		{
			name:     "English",
			question: "what is on tomorrow",
			reply:    "The meeting is on 2026-11-30 at 10:30. Tickets cost $12.50 each. It is 5 km away, and 3/4 of us are going.",
			want: []string{"November thirtieth, twenty twenty-six", "ten thirty", "twelve dollars fifty cents",
				"five kilometers", "three quarters"},
		},
		{
			name:     "Chinese",
			question: "明天有什么安排",
			reply:    "会议在2026年11月30日10:30开始。票价¥12.5，距离5km，3/4的人会去。",
			want:     []string{"二零二六年十一月三十日", "十点三十分", "十二点五元", "五公里", "四分之三"},
		},
		{
			name:     "Chinese, bare expressions after words",
			question: "算一下",
			reply:    "我算一下。\n1+1=2;\n3/4",
			want:     []string{"一加一等于二", "四分之三"},
			notWant:  []string{"plus", "quarters"},
		},
		{
			name:     "Chinese, nothing but an expression",
			question: "一加一等于几",
			reply:    "1+1=2",
			want:     []string{"一加一等于二"},
		},
		{
			name:     "English, nothing but an expression",
			question: "what is one plus one",
			reply:    "1+1=2",
			want:     []string{"one plus one equals two"},
		},
		{
			name:     "mixed",
			question: "how much is it",
			reply:    "我用的是iPhone15，价格$999。It weighs 170g.",
			want:     []string{"iPhone十五", "九百九十九美元", "one hundred seventy grams"},
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			tts := &readingTTS{ToneTTS: standin.NewToneTTS()}
			s := scenario{
				length:          12 * time.Second,
				user:            []standin.Utterance{{Start: 300 * time.Millisecond, End: 1200 * time.Millisecond, Text: tc.question}},
				replies:         []string{tc.reply},
				tokensPerSecond: -1,
				tune:            func(c *pipeline.Config) { c.TTS = tts },
			}
			s.run(t)
			spoken := tts.spoken()
			for _, w := range tc.want {
				assert.Contains(t, spoken, w)
			}
			for _, w := range tc.notWant {
				assert.NotContains(t, spoken, w)
			}
		})
	}
}
