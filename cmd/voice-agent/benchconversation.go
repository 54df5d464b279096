package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"unicode/utf8"

	"github.com/spf13/cobra"

	"github.com/voiceassistant/voice/internal/memstat"
	"github.com/voiceassistant/voice/llm"
	"github.com/voiceassistant/voice/pipeline"
)

// conversationQuestions are what a long conversation asks, in turn, in
// English and Chinese, of the lengths people speak: a few words to a
// couple of sentences.
var conversationQuestions = []string{
	"What's the weather like in Paris tomorrow?",
	"明天北京会下雨吗？",
	"I'm planning a trip to Japan next spring with my two kids. Which cities would you suggest for a first visit, and how many days should we spend in each?",
	"帮我定一个十分钟的计时器。",
	"How far away is the moon?",
	"我最近睡得不太好，晚上总是醒好几次，白天也很累。你有什么简单的建议吗？",
	"Tell me a short joke.",
	"三加五乘以二等于多少？",
	"Can you remind me what we said about Japan earlier?",
	"给我讲一个关于月亮的小故事，短一点就好。",
	"Set an alarm for six thirty tomorrow morning, please.",
	"上海和杭州之间坐高铁要多久？",
}

// conversationTurn is one turn of the long conversation: its prompt, what
// of it the engine's KV cache held and what it prefilled, and the time
// from the call to the reply's first text.
type conversationTurn struct {
	Turn            int     `json:"turn"`
	HistoryChars    int     `json:"history_chars"`
	PromptTokens    int     `json:"prompt_tokens"`
	CachedTokens    int     `json:"cached_tokens"`
	PrefilledTokens int     `json:"prefilled_tokens"`
	FirstTokenMS    float64 `json:"first_token_ms"`
}

type conversationResult struct {
	Turns []conversationTurn `json:"turns"`
	// FirstTokenP50MS and FirstTokenP95MS are over every turn.
	FirstTokenP50MS float64 `json:"first_token_p50_ms"`
	FirstTokenP95MS float64 `json:"first_token_p95_ms"`
	PeakRSSBytes    int64   `json:"peak_rss_bytes"`
}

// benchConversation runs the long conversation on a generator whose
// replies are a spoken answer's length, and prints it turn by turn.
func (a *app) benchConversation(cmd *cobra.Command, open func(maxTokens int) (pipeline.Generator, func() error, error), turns int) error {
	gen, closeGen, err := open(turnReplyTokens)
	if err != nil {
		return err
	}
	res, err := conversation(cmd.Context(), gen, llm.NewHistory(a.cfg.Stages.SystemPrompt, a.cfg.Stages.HistoryChars), turns)
	if err = errors.Join(err, closeGen()); err != nil {
		return err
	}
	res.PeakRSSBytes = memstat.PeakRSS()
	if a.json {
		return json.NewEncoder(cmd.OutOrStdout()).Encode(res)
	}
	out := cmd.OutOrStdout()
	fmt.Fprintf(out, "%4s %8s %7s %7s %9s %12s\n", "turn", "history", "prompt", "reused", "prefilled", "first token")
	for _, t := range res.Turns {
		fmt.Fprintf(out, "%4d %8d %7d %7d %9d %9.1f ms\n", t.Turn, t.HistoryChars, t.PromptTokens, t.CachedTokens, t.PrefilledTokens, t.FirstTokenMS)
	}
	fmt.Fprintf(out, "first token p50 %.1f ms, p95 %.1f ms; peak RSS %.1f MiB\n", res.FirstTokenP50MS, res.FirstTokenP95MS, float64(res.PeakRSSBytes)/(1<<20))
	return nil
}

// conversation asks the questions in turn in one conversation kept in
// history, each reply heard in full.
func conversation(ctx context.Context, gen pipeline.Generator, history *llm.History, turns int) (conversationResult, error) {
	var res conversationResult
	var first []float64
	for i := range turns {
		history.AddUser(conversationQuestions[i%len(conversationQuestions)])
		msgs := history.Messages()
		st, ms, err := replyTo(ctx, gen, history, msgs)
		if err != nil {
			return res, fmt.Errorf("turn %d: %w", i+1, err)
		}
		chars := 0
		for _, m := range msgs {
			if m.Role != llm.System {
				chars += utf8.RuneCountInString(m.Content)
			}
		}
		first = append(first, ms)
		res.Turns = append(res.Turns, conversationTurn{Turn: i + 1, HistoryChars: chars, PromptTokens: st.PromptTokens,
			CachedTokens: st.CachedTokens, PrefilledTokens: st.PromptTokens - st.CachedTokens, FirstTokenMS: ms})
	}
	res.FirstTokenP50MS, res.FirstTokenP95MS = pipeline.Percentile(first, 50), pipeline.Percentile(first, 95)
	return res, nil
}
