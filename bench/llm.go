package bench

import (
	"context"
	"errors"
	"fmt"
	"runtime"
	"slices"
	"strings"
	"time"

	"github.com/voiceassistant/voice/audio"
	"github.com/voiceassistant/voice/internal/clock"
	"github.com/voiceassistant/voice/internal/memstat"
	"github.com/voiceassistant/voice/llm"
	"github.com/voiceassistant/voice/pipeline"
	"github.com/voiceassistant/voice/wiring"
)

// LLMTest is one test of LLM: a 512-token prompt and a reply of a given
// length, medians over its runs.
type LLMTest struct {
	Name            string `json:"name"`
	PromptTokens    int    `json:"prompt_tokens"`
	GeneratedTokens int    `json:"generated_tokens"`
	// PrefillTokS and DecodeTokS are timed by the engine, as llm_bench
	// and llama-bench time theirs.
	PrefillTokS float64 `json:"prefill_tok_s"`
	DecodeTokS  float64 `json:"decode_tok_s"`
	// BindingMS is what a reply costs beyond the engine's own prefill and
	// decode, timed by the caller: the chat template, the prompt cache,
	// the hand-over of text.
	BindingMS float64 `json:"binding_ms"`
	Runs      int     `json:"runs"`
}

// TurnTest is what a user waits for in a conversation: from the call
// to the reply's first text, for a spoken question after a few exchanges
// the KV cache holds (as the pipeline keeps them), medians.
type TurnTest struct {
	Name         string  `json:"name"`
	PromptTokens int     `json:"prompt_tokens"`
	CachedTokens int     `json:"cached_tokens"`
	FirstTokenMS float64 `json:"first_token_ms"`
	Runs         int     `json:"runs"`
}

// LLMResult is what LLM measured.
type LLMResult struct {
	Measured     Measured  `json:"measured"`
	Tests        []LLMTest `json:"tests"`
	Turn         *TurnTest `json:"turn,omitempty"`
	PeakRSSBytes int64     `json:"peak_rss_bytes"`
	GOOS         string    `json:"goos"`
	GOARCH       string    `json:"goarch"`
	CPUs         int       `json:"cpus"`
}

// benchText is cut to the length that makes a 512-token prompt with the
// model's own tokenizer (see promptOf); the measured count is reported.
var benchText = strings.Fields(strings.Repeat("The quick brown fox jumps over the lazy dog near the river bank. ", 200))

// promptOf finds the number of words of benchText that the model counts as
// about want tokens, by measuring and scaling a few times.
func promptOf(ctx context.Context, gen pipeline.Generator, want int) (string, error) {
	words := 400
	for range 4 {
		st, _, err := generateOnce(ctx, gen, strings.Join(benchText[:words], " "))
		if err != nil {
			return "", err
		}
		if st.PromptTokens == 0 || abs(st.PromptTokens-want) <= want/50 {
			break
		}
		words = min(len(benchText), max(1, words*want/st.PromptTokens))
	}
	return strings.Join(benchText[:words], " "), nil
}

func abs(n int) int { return max(n, -n) }

// LLM measures the language model of s like llama-bench and MNN's
// llm_bench: one warm-up, then runs runs of each test, reporting medians.
// Each test opens the model bounding its replies to the test's length (as
// llm_bench does; the scripted double ends its replies by itself).
func LLM(ctx context.Context, s wiring.Stages, runs int) (res LLMResult, err error) {
	res = LLMResult{GOOS: runtime.GOOS, GOARCH: runtime.GOARCH, CPUs: runtime.NumCPU()}
	open := generatorOpener(s)
	// One model at a time: the peak is what one costs.
	with := func(maxTokens int, run func(pipeline.Generator) error) error {
		gen, closeGen, err := open(maxTokens)
		if err != nil {
			return err
		}
		return errors.Join(run(gen), closeGen())
	}
	var prompt string
	for _, n := range []int{128, 256} {
		if err := with(n, func(gen pipeline.Generator) error {
			t, err := benchLLMTest(ctx, gen, n, runs, &prompt)
			res.Tests = append(res.Tests, t)
			return err
		}); err != nil {
			return res, err
		}
	}
	if err := with(turnReplyTokens, func(gen pipeline.Generator) error {
		t, err := benchTurn(ctx, gen, s.SystemPrompt, runs)
		res.Turn = &t
		return err
	}); err != nil {
		return res, err
	}
	res.PeakRSSBytes = memstat.PeakRSS()
	return res, nil
}

// generatorOpener opens the language model of s with its replies bounded
// to maxTokens, the bound being fixed when the model is opened.
func generatorOpener(s wiring.Stages) func(maxTokens int) (pipeline.Generator, func() error, error) {
	return func(maxTokens int) (pipeline.Generator, func() error, error) {
		s.LLMMaxTokens = maxTokens
		return wiring.NewGenerator(s, clock.NewStream(audio.ProcessingRate))
	}
}

// turnReplyTokens bounds the replies of the turn test: a spoken answer.
const turnReplyTokens = 48

// spokenQuestions are what the turn test asks, one after another.
var spokenQuestions = []string{
	"What's the weather like in Paris tomorrow?",
	"Set a timer for ten minutes.",
	"How far away is the moon?",
	"Tell me a short joke.",
	"What time is it in Tokyo right now?",
	"Remind me to call my mother at six.",
}

// benchTurn asks the questions in turn in one conversation, three before
// the measured ones, each reply heard in full and kept in the history.
func benchTurn(ctx context.Context, gen pipeline.Generator, system string, runs int) (TurnTest, error) {
	t := TurnTest{Name: "turn", Runs: runs}
	history := llm.NewHistory(system, 0)
	var first []float64
	for i := -3; i < runs; i++ {
		history.AddUser(spokenQuestions[(i+3)%len(spokenQuestions)])
		st, firstMS, err := replyTo(ctx, gen, history, history.Messages())
		if err != nil {
			return t, err
		}
		if i < 0 {
			continue
		}
		t.PromptTokens, t.CachedTokens = st.PromptTokens, st.CachedTokens
		first = append(first, firstMS)
	}
	t.FirstTokenMS = median(first)
	return t, nil
}

// replyTo generates the reply to msgs, heard in full and kept in history,
// and times the call to the reply's first text.
func replyTo(ctx context.Context, gen pipeline.Generator, history *llm.History, msgs []llm.Message) (llm.Stats, float64, error) {
	var (
		reply   strings.Builder
		firstAt time.Duration
	)
	start := time.Now()
	st, err := gen.Generate(ctx, msgs, func(piece string) error {
		if firstAt == 0 {
			firstAt = time.Since(start)
		}
		reply.WriteString(piece)
		return nil
	})
	if err == nil {
		history.AddAssistant(reply.String(), false)
	}
	return st, float64(firstAt) / float64(time.Millisecond), err
}

// benchLLMTest runs one test on gen, whose replies are n tokens long at
// most; the first test also finds the prompt the others use.
func benchLLMTest(ctx context.Context, gen pipeline.Generator, n, runs int, prompt *string) (t LLMTest, err error) {
	if *prompt == "" {
		if *prompt, err = promptOf(ctx, gen, 512); err != nil {
			return t, err
		}
	}
	t = LLMTest{Name: fmt.Sprintf("pp512+tg%d", n), Runs: runs}
	var prefill, decode, binding []float64
	for i := -1; i < runs; i++ { // i = -1 is the warm-up
		st, wall, err := generateOnce(ctx, gen, *prompt)
		if err != nil {
			return t, err
		}
		if i < 0 {
			continue
		}
		t.PromptTokens, t.GeneratedTokens = st.PromptTokens, st.GeneratedTokens
		prefill = append(prefill, rate(st.PromptTokens, st.Prefill))
		decode = append(decode, rate(st.GeneratedTokens, st.Decode))
		binding = append(binding, float64(wall-st.Prefill-st.Decode)/float64(time.Millisecond))
	}
	t.PrefillTokS, t.DecodeTokS, t.BindingMS = median(prefill), median(decode), median(binding)
	return t, nil
}

// generateOnce runs prompt as a fresh conversation (its first word changes
// every time, so no KV reuse flatters the prefill figure) to the end of
// the reply, and times the call.
func generateOnce(ctx context.Context, gen pipeline.Generator, prompt string) (llm.Stats, time.Duration, error) {
	benchRun++
	conv := []llm.Message{{Role: llm.User, Content: fmt.Sprintf("%d %s", benchRun, prompt)}}
	start := time.Now()
	st, err := gen.Generate(ctx, conv, func(string) error { return nil })
	return st, time.Since(start), err
}

var benchRun int

func rate(tokens int, d time.Duration) float64 {
	if d <= 0 {
		return 0
	}
	return float64(tokens) / d.Seconds()
}

func median(v []float64) float64 {
	if len(v) == 0 {
		return 0
	}
	s := slices.Clone(v)
	slices.Sort(s)
	return s[len(s)/2]
}
