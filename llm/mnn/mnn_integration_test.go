//go:build mnn

package mnn

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/voiceassistant/voice/internal/testenv"
	"github.com/voiceassistant/voice/llm"
	"github.com/voiceassistant/voice/tts/chunk"
)

// openTiny opens the tiny model with the batch MNN-Pocket has on a slow
// CPU: the tiny model's own (maxPrefill) is longer than its prompts.
func openTiny(t testing.TB, maxTokens int) *Model {
	m, err := Open(Config{Dir: testenv.TinyLLM(t), ConfigFile: "config_greedy.json", Threads: 1, MaxNewTokens: maxTokens})
	require.NoError(t, err)
	t.Cleanup(func() { require.NoError(t, m.Close()) })
	m.batch = minPrefill
	return m
}

// Loading times a batch and sizes the model's batch to prefillBudget: the
// tiny model, a thousand times faster than MNN-Pocket, gets a longer one
// (the longest, unless the machine is very busy).
func TestBatchFitsTheModelsSpeed(t *testing.T) {
	m, err := Open(Config{Dir: testenv.TinyLLM(t), ConfigFile: "config_greedy.json", Threads: 1})
	require.NoError(t, err)
	defer m.Close()
	assert.Greater(t, m.batch, minPrefill)
	assert.LessOrEqual(t, m.batch, maxPrefill)
}

func generate(t *testing.T, m *Model, ctx context.Context, conv []llm.Message, stopAfter int, cancel func()) (string, llm.Stats, error) {
	var out strings.Builder
	n := 0
	st, err := m.Generate(ctx, conv, func(p string) error {
		out.WriteString(p)
		if n++; n == stopAfter && cancel != nil {
			cancel()
		}
		return nil
	})
	return out.String(), st, err
}

var hello = []llm.Message{{Role: llm.System, Content: "you are a test"}, {Role: llm.User, Content: "hello there"}}

func TestGenerateIsDeterministicAndBounded(t *testing.T) {
	m := openTiny(t, 32)
	a, st, err := generate(t, m, context.Background(), hello, 0, nil)
	require.NoError(t, err)
	assert.Equal(t, 32, st.GeneratedTokens, "the tiny model never stops by itself")
	assert.Greater(t, st.PromptTokens, 0)
	assert.Greater(t, st.Decode, time.Duration(0))
	assert.NotEmpty(t, a)

	m2 := openTiny(t, 32)
	b, _, err := generate(t, m2, context.Background(), hello, 0, nil)
	require.NoError(t, err)
	assert.Equal(t, a, b, "greedy decoding of the same prompt")
}

// A token's text is handed out before the engine runs that token through
// the model for the next one: MNN's loop writes it first
// (transformers/llm/engine/src/speculative_decoding/generate.cpp:79-94),
// and the first text of a reply no longer waits a forward pass more. The
// engine is held at the text; at the first piece the KV cache holds every
// token but the latest, which the pass after the text runs.
func TestTextComesBeforeItsForwardPass(t *testing.T) {
	m := openTiny(t, 8)
	m.holdAfterText(true)
	type seen struct{ cached, generated int }
	var first *seen
	done := make(chan error, 1)
	var st llm.Stats
	go func() {
		var err error
		st, err = m.Generate(context.Background(), hello, func(string) error {
			if first == nil {
				r := m.raw()
				first = &seen{r.cached, r.genLen}
				m.holdAfterText(false)
			}
			return nil
		})
		done <- err
	}()
	select {
	case err := <-done:
		require.NoError(t, err)
	case <-time.After(30 * time.Second):
		m.holdAfterText(false)
		require.Fail(t, "the reply waited for the engine held at its text: the text was not handed out before the pass after it")
	}
	require.NotNil(t, first)
	assert.Equal(t, st.PromptTokens+first.generated-1, first.cached,
		"at the first text the latest token has not been run through the model yet")
	assert.Equal(t, 8, st.GeneratedTokens, "the reply still has its tokens")
}

// A cancellation on the first text stops the engine within one engine
// call (stepBudget), long before the end of a long reply (a tenth of a
// millisecond a token here).
func TestCancelStopsTheEngine(t *testing.T) {
	const long = 4096
	m := openTiny(t, long)
	ctx, cancel := context.WithCancel(context.Background())
	text, st, err := generate(t, m, ctx, hello, 1, cancel)
	require.ErrorIs(t, err, context.Canceled)
	t.Logf("%d tokens generated when the cancellation on the first text landed", st.GeneratedTokens)
	assert.Less(t, st.GeneratedTokens, long/4, "stopped soon after the cancellation")
	assert.NotEmpty(t, text)

	// The engine is usable again, and the interrupted reply left nothing
	// behind: the same prompt again gives the same reply as on a model
	// whose first reply ran to its end. (Both keep the prompt in the KV
	// cache and drop the reply; a fresh model would prefill the prompt's
	// last token in one batch with the rest, which rounds differently.)
	after, st, err := generate(t, m, context.Background(), hello, 0, nil)
	require.NoError(t, err)
	assert.Equal(t, st.PromptTokens-m.batch, st.CachedTokens, "the prompt was kept, the reply dropped (and a batch run again to end the prompt)")
	whole := openTiny(t, long)
	_, _, err = generate(t, whole, context.Background(), hello, 0, nil)
	require.NoError(t, err)
	again, _, err := generate(t, whole, context.Background(), hello, 0, nil)
	require.NoError(t, err)
	assert.Equal(t, again, after)
}

func TestKVCacheIsReusedAcrossTurns(t *testing.T) {
	m := openTiny(t, 16)
	reply, first, err := generate(t, m, context.Background(), hello, 0, nil)
	require.NoError(t, err)
	assert.Zero(t, first.CachedTokens, "a fresh engine")
	conv := append(append([]llm.Message{}, hello...),
		llm.Message{Role: llm.Assistant, Content: reply},
		llm.Message{Role: llm.User, Content: "and again"})
	_, second, err := generate(t, m, context.Background(), conv, 0, nil)
	require.NoError(t, err)
	t.Logf("first prompt %d tokens; second %d, of which %d cached", first.PromptTokens, second.PromptTokens, second.CachedTokens)
	// Only the new turn is prefilled, not the whole conversation again.
	assert.GreaterOrEqual(t, second.CachedTokens, first.PromptTokens-1)
}

// A reply the model wrote in tokens other than the ones the tokenizer
// makes of its text stays in the KV cache as written, and only the next
// turn is prefilled: MNN's own prompt cache keeps the reply as generated
// and prefills the new text (transformers/llm/engine/src/llm.cpp:1174-1245).
// Matched by ids alone, the rest of the conversation was prefilled again
// from the first such token (82 of 113 tokens cached here).
func TestReplyWrittenInOtherTokensStaysCached(t *testing.T) {
	m := openTiny(t, 64)
	conv := []llm.Message{{Role: llm.System, Content: "you are a test"}, {Role: llm.User, Content: "tell me 9 things about x-ray"}}
	reply, first, err := generate(t, m, context.Background(), conv, 0, nil)
	require.NoError(t, err)
	require.NotEqual(t, first.GeneratedTokens, m.CountTokens(reply), "the reply as written is not the tokenizer's tokens of its text")
	conv = append(conv, llm.Message{Role: llm.Assistant, Content: reply}, llm.Message{Role: llm.User, Content: "and again"})
	_, second, err := generate(t, m, context.Background(), conv, 0, nil)
	require.NoError(t, err)
	held := first.PromptTokens + first.GeneratedTokens
	assert.Greater(t, second.CachedTokens, held-m.batch, "the prompt and the reply as written stay cached (but for a batch run again to end the prompt)")
	assert.LessOrEqual(t, second.CachedTokens, held)
}

// A prefilled system prompt is not prefilled again by the first turn.
func TestPrefilledSystemPromptIsReused(t *testing.T) {
	system := []llm.Message{{Role: llm.System, Content: strings.Repeat("you are a test of the system prompt ", 4)}}
	turn := append(slices.Clone(system), llm.Message{Role: llm.User, Content: "hello there"})
	_, cold, err := generate(t, openTiny(t, 8), context.Background(), turn, 0, nil)
	require.NoError(t, err)
	require.Zero(t, cold.CachedTokens, "a fresh engine")

	m := openTiny(t, 8)
	_, err = m.Prefill(context.Background(), system)
	require.NoError(t, err)
	_, warm, err := generate(t, m, context.Background(), turn, 0, nil)
	require.NoError(t, err)
	t.Logf("first turn %d tokens, of which %d cached after the system prompt's prefill", warm.PromptTokens, warm.CachedTokens)
	// The system prompt is most of the turn's prompt.
	assert.Greater(t, warm.CachedTokens, cold.PromptTokens/2)
}

// Every prefill call has the model's batch of tokens: a turn whose new tokens do
// not fill the last batch runs again some that the KV cache holds, and so
// does a prompt prefilled from the start. What the cache holds after it is
// the prompt and the reply, nothing missing and nothing twice, for the next
// turn to build on.
func TestPromptsArePrefilledInWholeBatches(t *testing.T) {
	m := openTiny(t, 8)
	remainders := map[int]bool{}
	for words := 1; words <= m.batch; words++ {
		m.Reset()
		conv := append(slices.Clone(hello), llm.Message{Role: llm.User, Content: strings.Repeat("go ", words)})
		reply, first, err := generate(t, m, context.Background(), conv, 0, nil)
		require.NoError(t, err)
		require.Zero(t, first.CachedTokens)
		remainders[first.PromptTokens%m.batch] = true

		conv = append(conv, llm.Message{Role: llm.Assistant, Content: reply}, llm.Message{Role: llm.User, Content: "and then"})
		_, next, err := generate(t, m, context.Background(), conv, 0, nil)
		require.NoError(t, err)
		assert.GreaterOrEqual(t, next.CachedTokens, first.PromptTokens+first.GeneratedTokens-m.batch, "%d words: the conversation so far is kept", words)
		assert.Zero(t, (next.PromptTokens-next.CachedTokens)%m.batch, "%d words: whole batches", words)
	}
	assert.Greater(t, len(remainders), m.batch/2, "prompts end at many places in a batch")
}

func TestBadModelDirectories(t *testing.T) {
	_, err := Open(Config{Dir: t.TempDir()})
	require.Error(t, err)
	assert.Contains(t, err.Error(), "config.json")

	dir := t.TempDir()
	require.NoError(t, os.WriteFile(filepath.Join(dir, "config.json"), []byte(`{"llm_model": "missing.mnn", "llm_weight": "missing.weight"}`), 0o644))
	_, err = Open(Config{Dir: dir})
	require.Error(t, err, "a config whose model files are missing")

	require.NoError(t, os.WriteFile(filepath.Join(dir, "config.json"), []byte(`not json`), 0o644))
	_, err = Open(Config{Dir: dir})
	require.Error(t, err, "a corrupt config")
}

// Creating and destroying engines, and cancelling replies, must not leak.
func TestNoLeaksOverManyCycles(t *testing.T) {
	if testing.Short() {
		t.Skip("slow")
	}
	dir := testenv.TinyLLM(t)
	rss := func() int64 {
		runtime.GC()
		data, _ := os.ReadFile("/proc/self/statm")
		var pages, res int64
		_, _ = fmt.Sscan(string(data), &pages, &res)
		return res * int64(os.Getpagesize())
	}
	cycle := func() {
		m, err := Open(Config{Dir: dir, ConfigFile: "config_greedy.json", Threads: 1, MaxNewTokens: 4})
		require.NoError(t, err)
		ctx, cancel := context.WithCancel(context.Background())
		_, _, _ = generate(t, m, ctx, hello, 2, cancel)
		require.NoError(t, m.Close())
	}
	for range 300 { // warm up allocators (the first few hundred cycles grow the heap)
		cycle()
	}
	before := rss()
	for range 1000 {
		cycle()
	}
	grown := rss() - before
	t.Logf("RSS grew by %d KiB over 1000 create/cancel/destroy cycles", grown/1024)
	assert.Less(t, grown, int64(20<<20))
}

// After a reply cut short, the conversation goes on with only the heard
// part: the engine notices the KV cache no longer matches and prefills
// the conversation again, and decoding works as before.
func TestTurnAfterAnInterruptedReply(t *testing.T) {
	m := openTiny(t, 32)
	ctx, cancel := context.WithCancel(context.Background())
	partial, _, err := generate(t, m, ctx, hello, 1, cancel)
	require.ErrorIs(t, err, context.Canceled)
	heard := partial[:len(partial)/2]
	conv := append(append([]llm.Message{}, hello...),
		llm.Message{Role: llm.Assistant, Content: heard, Interrupted: true},
		llm.Message{Role: llm.User, Content: "go on"})
	reply, st, err := generate(t, m, context.Background(), conv, 0, nil)
	require.NoError(t, err)
	assert.NotEmpty(t, reply)
	assert.Equal(t, 32, st.GeneratedTokens)

	// A fresh engine given the same conversation prefills the same prompt
	// and answers the same.
	freshReply, fresh, err := generate(t, openTiny(t, 32), context.Background(), conv, 0, nil)
	require.NoError(t, err)
	assert.Equal(t, fresh.PromptTokens, st.PromptTokens, "the whole conversation was prefilled again")
	assert.Equal(t, freshReply, reply)
}

// A reply cancelled while an earlier one holds the engine gives up at
// once, without a prefill (bug: it queued on a mutex and then ran its
// whole, uninterruptible prefill after the earlier reply, delaying the
// reply after it in turn).
func TestCancelledWhileWaitingNeverPrefills(t *testing.T) {
	m := openTiny(t, 64)
	holding, release := make(chan struct{}), make(chan struct{})
	var releaseOnce sync.Once
	letGo := func() { releaseOnce.Do(func() { close(release) }) }
	t.Cleanup(letGo) // before the model is closed, even when the test fails
	first := make(chan error, 1)
	go func() {
		var once bool
		_, err := m.Generate(context.Background(), hello, func(string) error {
			if !once {
				once = true
				close(holding)
				<-release
			}
			return nil
		})
		first <- err
	}()
	<-holding

	ctx, cancel := context.WithCancel(context.Background())
	type result struct {
		st  llm.Stats
		err error
	}
	second := make(chan result, 1)
	go func() {
		st, err := m.Generate(ctx, hello, func(string) error { return nil })
		second <- result{st, err}
	}()
	cancel()
	select {
	case r := <-second:
		require.ErrorIs(t, r.err, context.Canceled)
		assert.Zero(t, r.st.PromptTokens, "no prefill for a cancelled reply")
	case <-time.After(10 * time.Second):
		require.FailNow(t, "the cancelled reply is still waiting for the engine")
	}
	letGo()
	require.NoError(t, <-first)

	// Cancelled before it was even asked: no prefill either.
	st, err := m.Generate(ctx, hello, func(string) error { return nil })
	require.ErrorIs(t, err, context.Canceled)
	assert.Zero(t, st.PromptTokens)
}

// cancelAfter is a context that reports itself cancelled from its n-th
// Err call on: the binding checks it before every engine call, so it
// cancels after a known number of them.
type cancelAfter struct {
	context.Context
	n     int
	calls int
}

func (c *cancelAfter) Err() error {
	if c.calls++; c.calls >= c.n {
		return context.Canceled
	}
	return nil
}

// A long prompt is prefilled in several engine calls, so a cancellation
// (a barge-in, a dropped speculation) stops it after the call in progress;
// what was prefilled stays in the KV cache for the next reply that shares
// it.
func TestLongPrefillStopsWithinOneBatch(t *testing.T) {
	m := openTiny(t, 8)
	long := []llm.Message{{Role: llm.User, Content: strings.Repeat("tell me about the river bank ", 120)}}
	var pieces int
	// Err is asked once as the engine is taken, then before each batch.
	st, err := m.Generate(&cancelAfter{Context: context.Background(), n: 3}, long, func(string) error {
		pieces++
		return nil
	})
	require.ErrorIs(t, err, context.Canceled)
	assert.Zero(t, pieces, "cancelled during the prefill")
	assert.Zero(t, st.GeneratedTokens)
	assert.Greater(t, st.PromptTokens, 4*m.batch, "a long prompt")

	// One batch went in before the cancellation: the next reply to the
	// same prompt starts from it (from fewer of its tokens, for the rest
	// to be whole batches).
	_, st, err = generate(t, m, context.Background(), long, 0, nil)
	require.NoError(t, err)
	assert.Positive(t, st.CachedTokens)
	assert.LessOrEqual(t, st.CachedTokens, m.batch)
	assert.Zero(t, (st.PromptTokens-st.CachedTokens)%m.batch)
	assert.Equal(t, 8, st.GeneratedTokens)
}

// A speculative reply to a transcript the user then went on from is rolled
// back: the reply to the longer transcript is the one a model that never
// saw the speculation gives after the same shared start.
func TestSpeculationRollsBack(t *testing.T) {
	partial := []llm.Message{hello[0], {Role: llm.User, Content: "hello"}}
	m := openTiny(t, 8)
	_, _, err := generate(t, m, context.Background(), partial, 0, nil)
	require.NoError(t, err)
	after, st, err := generate(t, m, context.Background(), hello, 0, nil)
	require.NoError(t, err)
	assert.Positive(t, st.CachedTokens, "the shared start is kept")
	assert.Less(t, st.CachedTokens, st.PromptTokens-1, "the rest is prefilled again")

	// A model that held the same shared start, with a different reply
	// after it, answers the same.
	other := openTiny(t, 8)
	_, _, err = generate(t, other, context.Background(), []llm.Message{hello[0], {Role: llm.User, Content: "hello world, how are you"}}, 0, nil)
	require.NoError(t, err)
	want, st2, err := generate(t, other, context.Background(), hello, 0, nil)
	require.NoError(t, err)
	require.Equal(t, st.CachedTokens, st2.CachedTokens, "the same shared start")
	assert.Equal(t, want, after)
}

// A reply cut off by a barge-in is remembered as the model wrote it, up to
// the last word heard (the pipeline's history, through chunk.Source): the
// KV cache holds those tokens, so the next turn is prefilled only past
// them, where the same words as spoken would be prefilled again.
func TestCutReplyRememberedAsWrittenStaysCached(t *testing.T) {
	m := openTiny(t, 24)
	next := func(remembered string) llm.Stats {
		m.Reset()
		reply, first, err := generate(t, m, context.Background(), hello, 0, nil)
		require.NoError(t, err)
		words := strings.Fields(chunk.Speakable(reply))
		require.Greater(t, len(words), 4, "reply %q", reply)
		heard := strings.Join(words[:len(words)*3/4], " ")
		if remembered == "written" {
			var ok bool
			heard, ok = chunk.Source(reply, heard)
			require.True(t, ok)
		}
		conv := append(slices.Clone(hello), llm.Message{Role: llm.Assistant, Content: heard, Interrupted: true}, llm.Message{Role: llm.User, Content: "go on"})
		_, st, err := generate(t, m, context.Background(), conv, 0, nil)
		require.NoError(t, err)
		t.Logf("%s %q of %q: %d of %d prompt tokens cached, after %d", remembered, heard, reply, st.CachedTokens, st.PromptTokens, first.PromptTokens)
		return st
	}
	written, spoken := next("written"), next("spoken")
	assert.Greater(t, written.CachedTokens, spoken.CachedTokens)
	assert.Less(t, written.PromptTokens-written.CachedTokens, spoken.PromptTokens-spoken.CachedTokens, "fewer tokens prefilled")
}
