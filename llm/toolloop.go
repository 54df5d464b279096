package llm

import (
	"context"
	"strings"
)

// ToolLoop is a reply that may call tools, in rounds, as Qwen3's chat
// template has them: the model writes its calls (read out of its text,
// never said), they are run, their results go back as tool messages after
// the model's own message, and the model is asked again, until it answers
// without a call. The voice reply (package reply) and the text chat both
// run it, each with its own way of saying and running.
type ToolLoop struct {
	// Generate streams the model's reply to conv.
	Generate func(ctx context.Context, conv []Message, emit func(piece string) error) (Stats, error)
	// Say takes the reply's words: its text with the calls left out.
	Say func(text string) error
	// Run runs one round's calls and returns their results, one tool
	// message each, and whether any failed (then the loop ends there:
	// ToolsFailed).
	Run func(ctx context.Context, calls []ToolCall) (results []Message, failed bool, err error)
	// Ran, if set, takes each round that ran to its end: the model's
	// message as it wrote it and the results.
	Ran func(round []Message)
	// Rounds bounds the rounds of calls.
	Rounds int
}

// LoopEnd is how a tool loop ended.
type LoopEnd int

const (
	// Answered: the model's last generation called no tool.
	Answered LoopEnd = iota
	// ToolsFailed: a call could not be read or run.
	ToolsFailed
	// TooManyRounds: the model called tools again after Rounds rounds;
	// those calls were not run.
	TooManyRounds
)

// Converse runs the loop on conv and returns how it ended and the
// generations' figures, summed.
func (l ToolLoop) Converse(ctx context.Context, conv []Message) (LoopEnd, Stats, error) {
	conv = append([]Message(nil), conv...)
	var total Stats
	for round := 0; ; round++ {
		var (
			filter  CallFilter
			written strings.Builder
		)
		stats, err := l.Generate(ctx, conv, func(piece string) error {
			written.WriteString(piece)
			if text := filter.Push(piece); text != "" {
				return l.Say(text)
			}
			return ctx.Err()
		})
		total = total.Add(stats)
		if err != nil {
			return Answered, total, err
		}
		if text := filter.Flush(); text != "" {
			if err := l.Say(text); err != nil {
				return Answered, total, err
			}
		}
		calls := filter.Calls()
		switch {
		case len(calls) == 0:
			return Answered, total, nil
		case round == l.Rounds:
			return TooManyRounds, total, nil
		}
		results, failed, err := l.Run(ctx, calls)
		if err != nil {
			return Answered, total, err
		}
		ran := append([]Message{{Role: Assistant, Content: written.String()}}, results...)
		conv = append(conv, ran...)
		if l.Ran != nil {
			l.Ran(ran)
		}
		if failed {
			return ToolsFailed, total, nil
		}
	}
}

// Add sums the figures of two generations of one reply.
func (s Stats) Add(o Stats) Stats {
	s.PromptTokens += o.PromptTokens
	s.CachedTokens += o.CachedTokens
	s.GeneratedTokens += o.GeneratedTokens
	s.Prefill += o.Prefill
	s.Decode += o.Decode
	if s.FirstToken == 0 {
		s.FirstToken = o.FirstToken
	}
	return s
}
