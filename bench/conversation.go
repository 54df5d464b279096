package bench

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"
	"unicode"
	"unicode/utf8"

	"github.com/voiceassistant/voice/internal/memstat"
	"github.com/voiceassistant/voice/llm"
	"github.com/voiceassistant/voice/pipeline"
	"github.com/voiceassistant/voice/wiring"
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

// ConversationTurn is one turn of the long conversation: what was
// prefilled before it, as the pipeline does with a generator that can
// (pipeline.Prefiller): after the last reply, then the question's words
// as the speculative reply prefills them at the user's first pause (the
// partial transcript, without the final one's closing punctuation);
// its prompt, what of it the engine's KV cache held and what it
// prefilled, the time from the call to the reply's first text, and the
// process's anonymous memory after it.
type ConversationTurn struct {
	Turn         int `json:"turn"`
	HistoryChars int `json:"history_chars"`
	// IdleTokens is the prompt's start prefilled after the last reply,
	// of which IdlePrefilled were not held already, in IdleMS.
	IdleTokens    int     `json:"idle_tokens"`
	IdlePrefilled int     `json:"idle_prefilled_tokens"`
	IdleMS        float64 `json:"idle_prefill_ms"`
	// SpokenTokens is the prompt's start with the question's words,
	// prefilled at the user's pause in SpokenMS.
	SpokenTokens int     `json:"spoken_tokens"`
	SpokenMS     float64 `json:"spoken_prefill_ms"`
	PromptTokens int     `json:"prompt_tokens"`
	// NewTokens are the prompt's past its start prefilled while idle: the
	// user's turn and the template's tokens around it.
	NewTokens       int `json:"new_tokens"`
	CachedTokens    int `json:"cached_tokens"`
	PrefilledTokens int `json:"prefilled_tokens"`
	// FirstTokenMS is the time from the call to the reply's first token
	// where the engine says (llm.Stats.FirstToken), else to its first
	// text; FirstTextMS to its first text, which a character cut across
	// tokens delays by a token or more.
	FirstTokenMS float64 `json:"first_token_ms"`
	FirstTextMS  float64 `json:"first_text_ms"`
	AnonBytes    int64   `json:"anon_bytes"`
}

// ConversationResult is what Conversation measured.
type ConversationResult struct {
	Measured Measured           `json:"measured"`
	Turns    []ConversationTurn `json:"turns"`
	// The first token's and first text's p50 and p95 are over every
	// turn.
	FirstTokenP50MS float64 `json:"first_token_p50_ms"`
	FirstTokenP95MS float64 `json:"first_token_p95_ms"`
	FirstTextP50MS  float64 `json:"first_text_p50_ms"`
	FirstTextP95MS  float64 `json:"first_text_p95_ms"`
	// MostPrefilledPastNew is the most a turn prefilled past its new
	// tokens (what rounds them up to the engine's batch, or a start the
	// cache did not hold).
	MostPrefilledPastNew int   `json:"most_prefilled_past_new"`
	PeakRSSBytes         int64 `json:"peak_rss_bytes"`
}

// Conversation runs turns turns of one long conversation, in English and
// Chinese, on the language model of s with its replies a spoken answer's
// length and the history bounded as the assistant bounds it.
func Conversation(ctx context.Context, s wiring.Stages, turns int) (ConversationResult, error) {
	gen, closeGen, err := generatorOpener(s)(turnReplyTokens)
	if err != nil {
		return ConversationResult{}, err
	}
	res, err := conversation(ctx, gen, wiring.NewHistory(s, gen), turns)
	if err = errors.Join(err, closeGen()); err != nil {
		return res, err
	}
	res.PeakRSSBytes = memstat.PeakRSS()
	return res, nil
}

// conversation asks the questions in turn in one conversation kept in
// history, each reply heard in full, the conversation's next start
// prefilled between them where gen can.
func conversation(ctx context.Context, gen pipeline.Generator, history *llm.History, turns int) (ConversationResult, error) {
	var res ConversationResult
	var firstToken, firstText []float64
	prefiller, _ := gen.(pipeline.Prefiller)
	prefill := func(conv []llm.Message) (llm.Stats, float64, error) {
		start := time.Now()
		st, err := prefiller.Prefill(ctx, conv)
		return st, float64(time.Since(start).Microseconds()) / 1000, err
	}
	for i := range turns {
		var turn ConversationTurn
		question := conversationQuestions[i%len(conversationQuestions)]
		if prefiller != nil {
			idle, ms, err := prefill(history.Messages())
			if err != nil {
				return res, fmt.Errorf("turn %d: prefill after the reply: %w", i+1, err)
			}
			turn.IdleMS, turn.IdleTokens, turn.IdlePrefilled = ms, idle.PromptTokens, idle.PromptTokens-idle.CachedTokens
			spoken, ms, err := prefill(history.WithUser(strings.TrimRightFunc(question, unicode.IsPunct)))
			if err != nil {
				return res, fmt.Errorf("turn %d: prefill of the question's words: %w", i+1, err)
			}
			turn.SpokenMS, turn.SpokenTokens = ms, spoken.PromptTokens
		}
		history.AddUser(question)
		msgs := history.Messages()
		st, ms, err := replyTo(ctx, gen, history, msgs)
		if err != nil {
			return res, fmt.Errorf("turn %d: %w", i+1, err)
		}
		for _, m := range msgs {
			if m.Role != llm.System {
				turn.HistoryChars += utf8.RuneCountInString(m.Content)
			}
		}
		turn.Turn, turn.PromptTokens, turn.CachedTokens, turn.FirstTextMS = i+1, st.PromptTokens, st.CachedTokens, ms
		turn.FirstTokenMS = ms
		if st.FirstToken > 0 {
			turn.FirstTokenMS = float64(st.FirstToken.Microseconds()) / 1000
		}
		firstToken, firstText = append(firstToken, turn.FirstTokenMS), append(firstText, ms)
		turn.NewTokens, turn.PrefilledTokens = st.PromptTokens-turn.IdleTokens, st.PromptTokens-st.CachedTokens
		turn.AnonBytes = memstat.Now().Anon
		res.MostPrefilledPastNew = max(res.MostPrefilledPastNew, turn.PrefilledTokens-turn.NewTokens)
		res.Turns = append(res.Turns, turn)
	}
	res.FirstTokenP50MS, res.FirstTokenP95MS = pipeline.Percentile(firstToken, 50), pipeline.Percentile(firstToken, 95)
	res.FirstTextP50MS, res.FirstTextP95MS = pipeline.Percentile(firstText, 50), pipeline.Percentile(firstText, 95)
	return res, nil
}
