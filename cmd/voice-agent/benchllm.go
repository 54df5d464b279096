package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"runtime"
	"slices"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/voiceassistant/voice/audio"
	"github.com/voiceassistant/voice/internal/clock"
	"github.com/voiceassistant/voice/internal/memstat"
	"github.com/voiceassistant/voice/llm"
	"github.com/voiceassistant/voice/pipeline"
	"github.com/voiceassistant/voice/wiring"
)

// benchCmd groups the benchmarks that write JSON.
func (a *app) benchCmd() *cobra.Command {
	cmd := &cobra.Command{Use: "bench", Short: "Measure the speed of a stage"}
	cmd.AddCommand(a.benchLLMCmd(), a.benchPipelineCmd(), a.benchStagesCmd())
	return cmd
}

// benchLLMCmd measures the language model like llama-bench and MNN's
// llm_bench: one warm-up, then five runs of each test, reporting medians.
func (a *app) benchLLMCmd() *cobra.Command {
	var runs, turns int
	cmd := &cobra.Command{
		Use: "llm [--llm-model-dir DIR] [--conversation N] [--json]",
		Example: `  voice-agent bench llm --llm-model-dir llm/mnn/testdata/tiny-llm --json
  voice-agent bench llm --conversation 40   # a long conversation, turn by turn
  scripts/bench-llm   # the same beside MNN's own llm_bench`,
		Short: "Prefill and decode speed of the language model (512-token prompt, 128 and 256 tokens out), and its first token in a conversation",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) (err error) {
			open := func(maxTokens int) (pipeline.Generator, func() error, error) {
				st := a.cfg.Stages
				st.LLMMaxTokens = maxTokens
				return wiring.NewGenerator(st, clock.NewStream(audio.ProcessingRate))
			}
			if turns > 0 {
				return a.benchConversation(cmd, open, turns)
			}
			res, err := benchLLM(cmd.Context(), open, a.cfg.Stages.SystemPrompt, runs)
			if err != nil {
				return err
			}
			if a.json {
				return json.NewEncoder(cmd.OutOrStdout()).Encode(res)
			}
			for _, t := range res.Tests {
				fmt.Fprintf(cmd.OutOrStdout(), "%-11s prompt %4d tok  gen %4d tok  prefill %8.1f tok/s  decode %8.1f tok/s  binding %.2f ms/reply\n",
					t.Name, t.PromptTokens, t.GeneratedTokens, t.PrefillTokS, t.DecodeTokS, t.BindingMS)
			}
			if t := res.Turn; t != nil {
				fmt.Fprintf(cmd.OutOrStdout(), "%-11s prompt %4d tok, %d new  first token %.1f ms\n", t.Name, t.PromptTokens, t.PromptTokens-t.CachedTokens, t.FirstTokenMS)
			}
			fmt.Fprintf(cmd.OutOrStdout(), "peak RSS %.1f MiB, %s/%s, %d CPUs\n", float64(res.PeakRSSBytes)/(1<<20), res.GOOS, res.GOARCH, res.CPUs)
			return nil
		},
	}
	cmd.Flags().IntVar(&runs, "runs", 5, "measured runs per test (after one warm-up)")
	cmd.Flags().IntVar(&turns, "conversation", 0, "instead, N turns of one conversation in English and Chinese, the history bounded as the assistant bounds it: per turn the tokens prefilled and reused and the first token's time")
	return a.stageFlags(cmd, wiring.LLMFlags)
}

type llmBenchTest struct {
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

// llmTurnTest is what a user waits for in a conversation: from the call
// to the reply's first text, for a spoken question after a few exchanges
// the KV cache holds (as the pipeline keeps them), medians.
type llmTurnTest struct {
	Name         string  `json:"name"`
	PromptTokens int     `json:"prompt_tokens"`
	CachedTokens int     `json:"cached_tokens"`
	FirstTokenMS float64 `json:"first_token_ms"`
	Runs         int     `json:"runs"`
}

type llmBenchResult struct {
	Tests        []llmBenchTest `json:"tests"`
	Turn         *llmTurnTest   `json:"turn,omitempty"`
	PeakRSSBytes int64          `json:"peak_rss_bytes"`
	GOOS         string         `json:"goos"`
	GOARCH       string         `json:"goarch"`
	CPUs         int            `json:"cpus"`
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

// benchLLM runs each test on a generator opened by open, which bounds its
// replies to the test's length (as llm_bench does; the scripted double
// ends its replies by itself).
func benchLLM(ctx context.Context, open func(maxTokens int) (pipeline.Generator, func() error, error), system string, runs int) (res llmBenchResult, err error) {
	res = llmBenchResult{GOOS: runtime.GOOS, GOARCH: runtime.GOARCH, CPUs: runtime.NumCPU()}
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
		t, err := benchTurn(ctx, gen, system, runs)
		res.Turn = &t
		return err
	}); err != nil {
		return res, err
	}
	res.PeakRSSBytes = memstat.PeakRSS()
	return res, nil
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
func benchTurn(ctx context.Context, gen pipeline.Generator, system string, runs int) (llmTurnTest, error) {
	t := llmTurnTest{Name: "turn", Runs: runs}
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
func benchLLMTest(ctx context.Context, gen pipeline.Generator, n, runs int, prompt *string) (t llmBenchTest, err error) {
	if *prompt == "" {
		if *prompt, err = promptOf(ctx, gen, 512); err != nil {
			return t, err
		}
	}
	t = llmBenchTest{Name: fmt.Sprintf("pp512+tg%d", n), Runs: runs}
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
