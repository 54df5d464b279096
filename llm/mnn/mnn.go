//go:build mnn

package mnn

/*
#cgo CXXFLAGS: -std=c++17
#cgo LDFLAGS: -lMNN -lstdc++
#include <stdlib.h>
#include "shim.h"
*/
import "C"

import (
	"context"
	"errors"
	"fmt"
	"os"
	"time"
	"unsafe"

	"github.com/voiceassistant/voice/llm"
)

// Built says whether this binary has the MNN engine.
const Built = true

// Model is a loaded MNN LLM. One generation runs at a time.
type Model struct {
	// engine is held by whoever drives the engine: a semaphore rather than
	// a mutex, so a generation cancelled while it waits (the user barged
	// in on a reply that had not started) gives up instead of queueing a
	// prefill nobody will hear.
	engine chan struct{}
	l      *C.voice_llm
	cfg    Config
	tmp    string
}

// acquire takes the engine, or returns ctx's error once ctx is done.
func (m *Model) acquire(ctx context.Context) error {
	select {
	case m.engine <- struct{}{}:
	case <-ctx.Done():
		return ctx.Err()
	}
	if err := ctx.Err(); err != nil {
		// Cancelled just as the engine came free: no prefill either.
		m.release()
		return err
	}
	return nil
}

func (m *Model) release() { <-m.engine }

// Open creates the engine from the model directory, applies cfg and loads
// the weights.
func Open(cfg Config) (*Model, error) {
	path, err := cfg.configPath()
	if err != nil {
		return nil, err
	}
	tmp, err := os.MkdirTemp("", "voice-mnn-")
	if err != nil {
		return nil, err
	}
	m := &Model{engine: make(chan struct{}, 1), cfg: cfg, tmp: tmp}
	keepStdoutClean()
	cpath := C.CString(path)
	defer C.free(unsafe.Pointer(cpath))
	var cerr *C.char
	m.l = C.voice_llm_create(cpath, &cerr)
	if m.l == nil {
		os.RemoveAll(tmp)
		return nil, fmt.Errorf("mnn: %s: %w", path, takeErr(cerr, "create failed"))
	}
	settings, err := cfg.engineSettings(tmp)
	if err != nil {
		m.Close()
		return nil, err
	}
	cs := C.CString(settings)
	defer C.free(unsafe.Pointer(cs))
	if C.voice_llm_set_config(m.l, cs, &cerr) != 0 {
		m.Close()
		return nil, fmt.Errorf("mnn: %s: settings %s: %w", path, settings, takeErr(cerr, "set_config failed"))
	}
	if C.voice_llm_load(m.l, &cerr) != 0 {
		m.Close()
		return nil, fmt.Errorf("mnn: %s: %w", path, takeErr(cerr, "load failed"))
	}
	return m, nil
}

// Generate streams the reply to conv. Decoding runs in engine calls of a
// few milliseconds each (one token, or as many as fit when tokens are
// fast), so that a cancelled ctx stops it within one call while the cost
// of calling in is spread over many tokens. A ctx cancelled before the
// engine is free stops it before the prefill, which the engine cannot
// interrupt.
func (m *Model) Generate(ctx context.Context, conv []llm.Message, emit func(string) error) (llm.Stats, error) {
	if err := m.acquire(ctx); err != nil {
		return llm.Stats{}, err
	}
	defer m.release()
	if m.l == nil {
		return llm.Stats{}, errors.New("mnn: model closed")
	}
	s := &stream{emit: emit}
	roles, contents, free := cMessages(conv)
	defer free()

	var (
		cerr *C.char
		text *C.char
		size C.size_t
	)
	if C.voice_llm_prefill(m.l, roles, contents, C.int(len(conv)), &text, &size, &cerr) != 0 {
		return m.stats(), fmt.Errorf("mnn: prefill: %w", takeErr(cerr, "failed"))
	}
	s.write(cBytes(text, size))
	var err error
	limit := m.cfg.maxNewTokens()
	for batch, done := 1, 0; done < limit; {
		if err = ctx.Err(); err != nil {
			break
		}
		batch = min(batch, limit-done)
		var stopped C.int
		start := time.Now()
		if C.voice_llm_step(m.l, C.int(batch), &stopped, &text, &size, &cerr) != 0 {
			err = fmt.Errorf("mnn: decode: %w", takeErr(cerr, "failed"))
			break
		}
		took := time.Since(start)
		s.write(cBytes(text, size))
		if s.err != nil {
			err = s.err
			break
		}
		if stopped != 0 {
			break
		}
		done += batch
		batch = stepTokens(took, batch)
	}
	if err == nil {
		err = s.flush()
	}
	stats := m.stats()
	if m.raw().status == statusInternalError {
		err = errors.Join(err, errors.New("mnn: the engine reported an internal error"))
	}
	m.settle(conv, s.text.String(), err)
	return stats, err
}

// cBytes views the engine's text in place; stream.write copies it.
func cBytes(text *C.char, n C.size_t) []byte {
	if n == 0 {
		return nil
	}
	return unsafe.Slice((*byte)(unsafe.Pointer(text)), int(n))
}

// settle leaves the engine's prompt cache describing what its KV cache
// holds: the conversation and the reply as far as it was generated (also
// when it was cut off), so the next turn prefills only what is new. If the
// conversation then continues differently (an interrupted reply is
// remembered only as far as it was heard), the engine sees the mismatch
// and prefills the conversation again from the start. After an engine
// error nothing is trusted and the state is cleared.
func (m *Model) settle(conv []llm.Message, reply string, err error) {
	if err != nil && !errors.Is(err, context.Canceled) && !errors.Is(err, context.DeadlineExceeded) {
		C.voice_llm_reset(m.l)
		return
	}
	if reply != "" {
		conv = append(conv[:len(conv):len(conv)], llm.Message{Role: llm.Assistant, Content: reply})
	}
	roles, contents, free := cMessages(conv)
	defer free()
	var cerr *C.char
	if C.voice_llm_sync_prompt_cache(m.l, roles, contents, C.int(len(conv)), &cerr) != 0 {
		takeErr(cerr, "")
		C.voice_llm_reset(m.l)
	}
}

// Reset forgets the conversation held in the KV cache.
func (m *Model) Reset() {
	_ = m.acquire(context.Background())
	defer m.release()
	if m.l != nil {
		C.voice_llm_reset(m.l)
	}
}

// Close releases the engine; it is safe to call twice.
func (m *Model) Close() error {
	_ = m.acquire(context.Background())
	defer m.release()
	if m.l != nil {
		C.voice_llm_destroy(m.l)
		m.l = nil
	}
	if m.tmp != "" {
		os.RemoveAll(m.tmp)
		m.tmp = ""
	}
	return nil
}

const statusInternalError = 4

type rawStats struct {
	status            int
	promptLen, genLen int
	prefill, decode   time.Duration
}

func (m *Model) raw() rawStats {
	var s C.voice_llm_stats
	C.voice_llm_stats_get(m.l, &s)
	return rawStats{
		status: int(s.status), promptLen: int(s.prompt_len), genLen: int(s.gen_seq_len),
		prefill: time.Duration(s.prefill_us) * time.Microsecond, decode: time.Duration(s.decode_us) * time.Microsecond,
	}
}

func (m *Model) stats() llm.Stats {
	r := m.raw()
	return llm.Stats{PromptTokens: r.promptLen, GeneratedTokens: r.genLen, Prefill: r.prefill, Decode: r.decode}
}

func cMessages(conv []llm.Message) (roles, contents **C.char, free func()) {
	n := max(len(conv), 1)
	size := C.size_t(n) * C.size_t(unsafe.Sizeof(uintptr(0)))
	r := (**C.char)(C.malloc(size))
	c := (**C.char)(C.malloc(size))
	rs := unsafe.Slice(r, n)
	cs := unsafe.Slice(c, n)
	for i, msg := range conv {
		rs[i] = C.CString(string(msg.Role))
		cs[i] = C.CString(msg.Content)
	}
	return r, c, func() {
		for i := range conv {
			C.free(unsafe.Pointer(rs[i]))
			C.free(unsafe.Pointer(cs[i]))
		}
		C.free(unsafe.Pointer(r))
		C.free(unsafe.Pointer(c))
	}
}

func takeErr(cerr *C.char, fallback string) error {
	if cerr == nil {
		return errors.New(fallback)
	}
	defer C.free(unsafe.Pointer(cerr))
	return errors.New(C.GoString(cerr))
}
