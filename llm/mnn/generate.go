//go:build mnn

package mnn

/*
#include <stdlib.h>
#include "shim.h"
*/
import "C"

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"
	"unicode/utf8"
	"unsafe"

	"github.com/voiceassistant/voice/llm"
)

// tailSlack is what a turn's last batch holds besides the template's
// tokens after the user's words: the final transcript's closing
// punctuation, which the partial transcripts lack, and a word or two
// tokenized otherwise once it is followed.
const tailSlack = 3

// templateTail is how many tokens the chat template puts after the user's
// words in conv's prompt (conv ends with the user's turn; ChatML's are 5,
// Qwen3's, with its empty think block, 9); the caller holds the engine.
func (m *Model) templateTail(conv []llm.Message) (int, error) {
	whole, err := m.render(conv)
	if err != nil {
		return 0, err
	}
	start, found, err := m.nextStart(conv)
	if err != nil || !found {
		return 0, err
	}
	n, err := m.countTokens(whole)
	if err != nil {
		return 0, err
	}
	k, err := m.countTokens(start)
	return n - k, err
}

// CountTokens is how many tokens the model's tokenizer makes of text, or
// its character count where it cannot say (a closed model): what the
// history's token budget counts (llm.History.BoundTokens). It does not
// wait for a reply or prefill under way: MNN's tokenizers encode from
// tables they only read (transformers/llm/engine/src/tokenizer/tokenizer.hpp).
func (m *Model) CountTokens(text string) int {
	m.life.RLock()
	defer m.life.RUnlock()
	if m.l != nil {
		if n, err := m.countTokens(text); err == nil {
			return n
		}
	}
	return utf8.RuneCountInString(text)
}

func (m *Model) countTokens(text string) (int, error) {
	ctext := C.CString(text)
	defer C.free(unsafe.Pointer(ctext))
	var (
		n    C.int
		cerr *C.char
	)
	if C.voice_llm_count_tokens(m.l, ctext, &n, &cerr) != 0 {
		return 0, fmt.Errorf("mnn: tokenizer: %w", takeErr(cerr, "failed"))
	}
	return int(n), nil
}

// Generate streams the reply to conv. The prompt is prefilled in engine
// calls of the model's batch of tokens (past what the KV cache already holds of
// it), and decoded in calls of a few milliseconds each (one token, or as
// many as fit when tokens are fast), so that a cancelled ctx stops it
// within one call while the cost of calling in is spread over many
// tokens. A ctx cancelled before the engine is free stops it before it
// starts.
func (m *Model) Generate(ctx context.Context, conv []llm.Message, emit func(string) error) (llm.Stats, error) {
	return m.generate(ctx, conv, emit, m.cfg.maxNewTokens())
}

// Prefill runs into the KV cache, without replying, what every next
// prompt of conv starts with: the conversation as the chat template will
// render it once the user has spoken, up to the user's words, or, where
// conv ends in a user message (the words of a turn still being spoken, or
// of one the next joins), up to the end of that message's words. Run while
// the assistant is idle (at start-up with the system prompt, after each
// reply, or with the user's words so far), it takes off the next reply's path what
// would otherwise be prefilled there: the reply just given as the
// template renders it in history (a Qwen3-style template renders the
// reply it generates into with an empty think block, and earlier replies
// without one), the whole conversation once the history has been trimmed,
// and the user's words so far. A ctx cancelled (the next reply is wanted)
// stops it within one batch; what it ran stays cached.
//
// A template that does not render the user's words as given (so that the
// start cannot be cut from it) gets nothing prefilled.
func (m *Model) Prefill(ctx context.Context, conv []llm.Message) (llm.Stats, error) {
	if err := m.acquire(ctx); err != nil {
		return llm.Stats{}, err
	}
	defer m.release()
	start, found, err := m.nextStart(conv)
	if err != nil || !found {
		return llm.Stats{}, err
	}
	return m.run(ctx, start, false, nil, 0)
}

// nextStart is the text every next prompt of conv starts with (Prefill),
// and whether the template renders the user's words so that it can be
// cut; the caller holds the engine.
func (m *Model) nextStart(conv []llm.Message) (string, bool, error) {
	next := slices.Clone(conv)
	if n := len(next); n > 0 && next[n-1].Role == llm.User {
		next[n-1].Content += nextUserMarker
	} else {
		next = append(next, llm.Message{Role: llm.User, Content: nextUserMarker})
	}
	text, err := m.render(next)
	if err != nil {
		return "", false, err
	}
	start, _, found := strings.Cut(text, nextUserMarker)
	return start, found, nil
}

// nextUserMarker stands for the user's next words in the prompt Prefill
// renders, to be cut at.
const nextUserMarker = "[[voice-agent: the user speaks on]]"

// Prompt is the text the engine prefills for conv: the model's chat
// template applied with the engine's template context, which decides
// whether a Qwen3-style model thinks (Config.Settings).
func (m *Model) Prompt(conv []llm.Message) (string, error) {
	_ = m.acquire(context.Background())
	defer m.release()
	return m.render(conv)
}

// render applies the chat template to conv; the caller holds the engine.
func (m *Model) render(conv []llm.Message) (string, error) {
	if m.l == nil {
		return "", errors.New("mnn: model closed")
	}
	roles, contents, free := cMessages(conv)
	defer free()
	var text, cerr *C.char
	if C.voice_llm_apply_template(m.l, roles, contents, C.int(len(conv)), &text, &cerr) != 0 {
		return "", fmt.Errorf("mnn: chat template: %w", takeErr(cerr, "failed"))
	}
	defer C.free(unsafe.Pointer(text))
	return C.GoString(text), nil
}

// RollsBack is true: a cancelled reply leaves tokens in the KV cache that
// the next reply's prompt does not share, and those are dropped before it
// is prefilled (voice_llm_prepare).
func (m *Model) RollsBack() bool { return true }

func (m *Model) generate(ctx context.Context, conv []llm.Message, emit func(string) error, limit int) (llm.Stats, error) {
	if err := m.acquire(ctx); err != nil {
		return llm.Stats{}, err
	}
	defer m.release()
	text, err := m.render(conv)
	if err != nil {
		return llm.Stats{}, err
	}
	return m.run(ctx, text, true, emit, limit)
}

// run prefills the prompt text past what the KV cache holds of it and,
// for a reply, decodes up to limit tokens of it into emit; the caller
// holds the engine.
func (m *Model) run(ctx context.Context, text string, reply bool, emit func(string) error, limit int) (llm.Stats, error) {
	start := time.Now()
	ctext := C.CString(text)
	defer C.free(unsafe.Pointer(ctext))
	var (
		cerr          *C.char
		reused, total C.int
		creply        C.int
	)
	if reply {
		creply = 1
	}
	if C.voice_llm_prepare(m.l, ctext, C.int(m.batch), creply, &reused, &total, &cerr) != 0 {
		return llm.Stats{}, m.failed(fmt.Errorf("mnn: prompt: %w", takeErr(cerr, "failed")))
	}
	stats := llm.Stats{PromptTokens: int(total), CachedTokens: int(reused)}
	if reused == total {
		return stats, nil // nothing new: the engine's figures are the last reply's
	}
	err := m.prefill(ctx, int(total-reused))
	var firstToken time.Duration
	if err == nil && reply {
		err = m.decode(ctx, emit, limit, func() { firstToken = time.Since(start) })
	}
	if err != nil && !errors.Is(err, context.Canceled) && !errors.Is(err, context.DeadlineExceeded) {
		err = m.failed(err)
	}
	st := m.stats()
	st.PromptTokens, st.CachedTokens, st.FirstToken = stats.PromptTokens, stats.CachedTokens, firstToken
	return st, err
}

// prefill runs the left tokens of the prepared prompt through the model,
// a batch at a time.
func (m *Model) prefill(ctx context.Context, left int) error {
	for left > 0 {
		if err := ctx.Err(); err != nil {
			return err
		}
		var (
			cerr  *C.char
			cleft C.int
		)
		if C.voice_llm_prefill(m.l, &cleft, &cerr) != 0 {
			return fmt.Errorf("mnn: prefill: %w", takeErr(cerr, "failed"))
		}
		left = int(cleft)
	}
	return m.engineErr()
}

// decode generates up to limit tokens and hands their text to emit;
// first is called once the first token's text is out. A step returns a
// token's text while the engine runs that token through the model for
// the next one (voice_llm_step), so the text is on its way a forward pass
// sooner; the engine's last pass is waited for before decode returns, the
// engine then free for whatever comes next.
func (m *Model) decode(ctx context.Context, emit func(string) error, limit int, first func()) error {
	defer m.step(0) // after a cancellation or a failed emit: the pass under way, its text dropped
	s := newStream(emit)
	var pace pace
	for batch, done := 1, 0; done < limit; {
		if err := ctx.Err(); err != nil {
			return err
		}
		batch = min(batch, limit-done)
		text, stopped, err := m.step(batch)
		if err != nil {
			return err
		}
		now := time.Now()
		if done == 0 {
			first()
		}
		s.write(text)
		if s.err != nil {
			return s.err
		}
		if stopped {
			break
		}
		done += batch
		batch = pace.next(now, batch)
	}
	rest, _, err := m.step(0)
	if err != nil {
		return err
	}
	s.write(rest)
	if err := m.engineErr(); err != nil {
		return err
	}
	return s.flush()
}

// step starts a decoding call of tokens tokens once the one before has
// ended (0: starts none) and returns the text written since the last
// step, in place until the next (stream.write copies it), and whether the
// model has ended the reply.
func (m *Model) step(tokens int) ([]byte, bool, error) {
	var (
		cerr    *C.char
		text    *C.char
		size    C.size_t
		stopped C.int
	)
	if C.voice_llm_step(m.l, C.int(tokens), &stopped, &text, &size, &cerr) != 0 {
		return nil, false, fmt.Errorf("mnn: decode: %w", takeErr(cerr, "failed"))
	}
	return cBytes(text, size), stopped != 0, nil
}

// holdAfterText, on, keeps the engine at each token's text, before it
// runs the token through the model, until it is turned off: how a test
// sees the text handed out before that pass.
func (m *Model) holdAfterText(on bool) {
	var c C.int
	if on {
		c = 1
	}
	C.voice_llm_hold_after_text(m.l, c)
}
