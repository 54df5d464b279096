package standin

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/voiceassistant/voice/internal/clock"
)

// TimedTurn says an utterance's TurnComplete in the pause after it, and 0
// inside one, pauses between its words included, as a semantic detector
// hears an unfinished sentence (bug: it said the utterance before's
// "complete" in a pause inside the next, so a replay with natural pauses
// committed at each of them).
func TestTimedTurn(t *testing.T) {
	clk := clock.NewVirtual()
	d := &TimedTurn{Clock: clk, Script: []Utterance{
		{Start: 0, End: time.Second, Text: "what time is it", TurnComplete: 0.9},
		{Start: 2 * time.Second, End: 4 * time.Second, TurnComplete: 0.8, Words: []Word{
			{Text: "and", Start: 2 * time.Second, End: 2300 * time.Millisecond},
			{Text: "in", Start: 2800 * time.Millisecond, End: 3 * time.Second},
			{Text: "tokyo", Start: 3 * time.Second, End: 4 * time.Second},
		}},
	}}
	for _, tc := range []struct {
		at   time.Duration
		want float64
	}{
		{500 * time.Millisecond, 0},    // the first utterance, not ended
		{1500 * time.Millisecond, 0.9}, // the pause after it
		{2500 * time.Millisecond, 0},   // a pause between "and" and "in"
		{4500 * time.Millisecond, 0.8}, // after the second
	} {
		clk.Advance(tc.at - clk.Now())
		p, err := d.Predict(context.Background(), nil)
		require.NoError(t, err)
		assert.Equal(t, tc.want, p, "at %v", tc.at)
	}
}

// The scripted LLM streams as a tokenizer does: English a word a token,
// Chinese one or two characters, punctuation of its own (bug: a Chinese
// reply came as one token, whole, so its replayed latency meant nothing).
func TestReplyTokens(t *testing.T) {
	for _, tc := range []struct {
		reply string
		want  []string
	}{
		{"It is sunny, today.", []string{"It", " is", " sunny,", " today."}},
		{"今天天气很好，适合散步。", []string{"今天", "天", "气很", "好", "，", "适合", "散", "步", "。"}},
		{"好的。", []string{"好的", "。"}},
		{"这是iPhone 15，很好用。", []string{"这是", "iPhone", " 15", "，", "很", "好用", "。"}},
	} {
		assert.Equal(t, tc.want, replyTokens(tc.reply), tc.reply)
	}
}

// The scripted recognizer hears Chinese a character at a time, as X-ASR
// emits it, and writes it without spaces.
func TestHeardWords(t *testing.T) {
	assert.Equal(t, []string{"不", "对"}, heardWords("不对"))
	assert.Equal(t, []string{"what", "time", "is", "it"}, heardWords("what time is it"))
	assert.Equal(t, []string{"用", "iPhone", "拍"}, heardWords("用iPhone拍"))
	assert.Equal(t, "用iPhone拍", joinHeard(heardWords("用iPhone拍")))
	assert.Equal(t, "what time is it", joinHeard(heardWords("what time is it")))
}
