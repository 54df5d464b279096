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
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"time"
	"unsafe"

	"github.com/voiceassistant/voice/internal/derived"
	"github.com/voiceassistant/voice/internal/malloc"
	"github.com/voiceassistant/voice/llm"
)

// Built says whether this binary has the MNN engine.
const Built = true

// Version is the version of MNN this binary was built with.
func Version() string { return C.GoString(C.voice_llm_mnn_version()) }

// Model is a loaded MNN LLM. One generation runs at a time.
type Model struct {
	// engine is held by whoever drives the engine: a semaphore rather than
	// a mutex, so a generation cancelled while it waits (the user barged
	// in on a reply that had not started) gives up instead of queueing a
	// prefill nobody will hear.
	engine chan struct{}
	// life is held to read the engine without taking it (CountTokens),
	// and to destroy it.
	life sync.RWMutex
	l    *C.voice_llm
	cfg  Config
	// batch is how many tokens every prefill call takes (prefillTokens),
	// set by warmUp.
	batch int
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

// release lets the engine go, and logs what it printed meanwhile.
func (m *Model) release() {
	drainEngineOutput()
	<-m.engine
}

// Open creates the engine from the model directory, applies cfg and loads
// the weights.
func Open(cfg Config) (*Model, error) {
	path, err := cfg.configPath()
	if err != nil {
		return nil, err
	}
	sources, err := modelFiles(cfg.Dir)
	if err != nil {
		return nil, fmt.Errorf("mnn: %w", err)
	}
	settings := cfg.engineSettings("")
	layout, fileBytes := poolLayout(cfg.ConfigFile, settings), mmapBytes(path, settings)
	mapped, err := openPool(sources, layout, fileBytes)
	if errors.Is(err, derived.ErrStopped) {
		return nil, fmt.Errorf("mnn: %s: %w", cfg.Dir, err)
	}
	if !checking && (err != nil || mapped.making) {
		// Checked in a child first (check.go): there is no sealed pool to
		// say that these files loaded. The pool the child seals is
		// mapped here.
		mapped.release()
		if checkErr := checkInChild(cfg); checkErr != nil {
			return nil, checkErr
		}
		if err == nil {
			mapped, err = openPool(sources, layout, fileBytes)
		}
	}
	if err != nil {
		onHeap(cfg.Dir, err)
	}
	m, err := load(cfg, path, mapped)
	if errors.Is(err, errShortPool) {
		onHeap(cfg.Dir, err)
		m, err = load(cfg, path, pool{release: func() {}})
	}
	return m, err
}

// onHeap says, in one line, that the weights of the model in dir go onto
// the heap (more anonymous memory, the same replies), and why.
func onHeap(dir string, why error) {
	slog.Warn("mnn: the weights are loaded onto the heap, not mapped from a file; each start checks them in a child process first, as no sealed file records that they loaded", "model", dir, "why", why)
}

// load creates the engine from the config file at path and loads the
// weights, mapped from pool's folder (onto the heap if it has none),
// whose making it then seals.
func load(cfg Config, path string, pool pool) (*Model, error) {
	defer pool.release()
	defer drainEngineOutput()
	m := &Model{engine: make(chan struct{}, 1), cfg: cfg}
	keepStdoutClean()
	cpath := C.CString(path)
	defer C.free(unsafe.Pointer(cpath))
	var cerr *C.char
	m.l = C.voice_llm_create(cpath, &cerr)
	if m.l == nil {
		return nil, fmt.Errorf("mnn: %s: %w", path, takeErr(cerr, "create failed"))
	}
	settings := cfg.engineSettings(pool.dir)
	if err := m.setConfig(settings); err != nil {
		m.Close()
		return nil, fmt.Errorf("mnn: %s: %w", path, err)
	}
	if C.voice_llm_load(m.l, &cerr) != 0 {
		m.Close()
		return nil, fmt.Errorf("mnn: %s: %w", path, takeErr(cerr, "load failed"))
	}
	if again, ok := templateSettings(settings); ok {
		if err := m.setConfig(again); err != nil {
			m.Close()
			return nil, fmt.Errorf("mnn: %s: %w", path, err)
		}
	}
	if err := m.warmUp(); err != nil {
		m.Close()
		return nil, fmt.Errorf("mnn: %s: first run: %w", path, err)
	}
	if err := pool.seal(); errors.Is(err, errShortPool) {
		m.Close()
		return nil, err
	} else if err != nil {
		slog.Warn("mnn: the mapped weights could not be sealed; they are made again at the next load", "dir", pool.dir, "err", err)
	}
	// What the load and the first run freed goes back to the system,
	// not to the heap's free lists (onnx.Open does the same).
	malloc.Trim()
	return m, nil
}

// setConfig merges settings into the engine's config.
func (m *Model) setConfig(settings map[string]any) error {
	js, err := json.Marshal(settings)
	if err != nil {
		return fmt.Errorf("settings: %w", err)
	}
	cs := C.CString(string(js))
	defer C.free(unsafe.Pointer(cs))
	var cerr *C.char
	if C.voice_llm_set_config(m.l, cs, &cerr) != 0 {
		return fmt.Errorf("settings %s: %w", js, takeErr(cerr, "set_config failed"))
	}
	return nil
}

// SetTools tells the model of tools: every prompt rendered after it has
// them (Qwen3's template puts them in its system turn), and none (nil or
// empty) brings back the template's prompt without tools. They are the
// template context's "tools", beside what that context holds already
// (enable_thinking, a package's context.json): MNN's apply_chat_template
// renders with that context and an empty tools list, which sets none
// (transformers/llm/engine/src/tokenizer/tokenizer.cpp:1046-1054,
// transformers/llm/engine/src/tokenizer/jinja.hpp:2234-2236). The next
// prefill keeps of the KV cache what its prompt still shares with it:
// where the tools changed, the system turn's start.
func (m *Model) SetTools(tools []llm.ToolSpec) error {
	_ = m.acquire(context.Background())
	defer m.release()
	if m.l == nil {
		return errors.New("mnn: model closed")
	}
	tctx, err := m.templateContext()
	if err != nil {
		return err
	}
	delete(tctx, "tools")
	if len(tools) > 0 {
		js, err := json.Marshal(templateTools(tools))
		if err != nil {
			return fmt.Errorf("mnn: tools: %w", err)
		}
		tctx["tools"] = js
	}
	// set_config merges an object into an object key by key
	// (transformers/llm/engine/src/ujson.hpp:292-302), which can set the
	// tools but never drop them: the context is replaced, by a null
	// first, which replaces the object.
	for _, c := range []any{nil, tctx} {
		if err := m.setConfig(map[string]any{"jinja": map[string]any{"context": c}}); err != nil {
			return fmt.Errorf("mnn: tools: %w", err)
		}
	}
	return nil
}

// templateTool is a tool as Hugging Face's apply_chat_template takes it,
// and so as chat templates are written to render it.
type templateTool struct {
	Type     string       `json:"type"`
	Function llm.ToolSpec `json:"function"`
}

// noParameters is Hugging Face's schema of a function without arguments
// (transformers.utils.get_json_schema): a template renders a tool's
// parameters as given, and a null would tell a model trained on such
// schemas nothing.
var noParameters = json.RawMessage(`{"type": "object", "properties": {}}`)

func templateTools(tools []llm.ToolSpec) []templateTool {
	out := make([]templateTool, len(tools))
	for i, t := range tools {
		if len(t.Parameters) == 0 {
			t.Parameters = noParameters
		}
		out[i] = templateTool{Type: "function", Function: t}
	}
	return out
}

// templateContext is the chat template's context as the engine holds it:
// its config's jinja.context (transformers/llm/engine/src/llm.cpp:111-135).
func (m *Model) templateContext() (map[string]json.RawMessage, error) {
	var text, cerr *C.char
	if C.voice_llm_dump_config(m.l, &text, &cerr) != 0 {
		return nil, fmt.Errorf("mnn: config: %w", takeErr(cerr, "failed"))
	}
	defer C.free(unsafe.Pointer(text))
	var config struct {
		Jinja struct {
			Context map[string]json.RawMessage `json:"context"`
		} `json:"jinja"`
	}
	if err := json.Unmarshal([]byte(C.GoString(text)), &config); err != nil {
		return nil, fmt.Errorf("mnn: the chat template's context: %w", err)
	}
	if config.Jinja.Context == nil {
		return map[string]json.RawMessage{}, nil
	}
	return config.Jinja.Context, nil
}

// warmUp runs a few tokens through the engine and forgets them: its first
// forward passes after loading allocate and plan (about 40 times slower a
// token on the tiny model), which belongs in Open, not in the user's first
// reply. It also times a batch of minPrefill tokens, run again once the
// engine has run one, to choose the model's batch (no shorter than the
// template's tokens after the user's words and tailSlack), and runs a
// batch of that length, which every later one has.
func (m *Model) warmUp() error {
	defer C.voice_llm_reset(m.l)
	m.batch = minPrefill
	hello := []llm.Message{{Role: llm.User, Content: "Hello"}}
	quiet := func(string) error { return nil }
	if _, err := m.generate(context.Background(), hello, quiet, 1); err != nil {
		return err
	}
	// The same prompt again: the KV cache holds it, and one batch is
	// run again to end it.
	st, err := m.generate(context.Background(), hello, quiet, 1)
	if err != nil {
		return err
	}
	m.batch = prefillTokens(st.Prefill, minPrefill)
	// The prompt's start is prefilled before the reply (Prefill after the
	// last one, the user's words by a speculative reply at their pause),
	// so a reply's own prefill is the end of the user's words and the
	// template's tokens after them: in one batch, the first token waits
	// for one call, not two.
	tail, err := m.templateTail(hello)
	if err != nil {
		return err
	}
	if m.batch = max(m.batch, min(tail+tailSlack, maxPrefill)); m.batch > minPrefill {
		C.voice_llm_reset(m.l)
		long := []llm.Message{{Role: llm.User, Content: strings.Repeat("Hello ", m.batch)}}
		_, err = m.generate(context.Background(), long, quiet, 1)
	}
	return err
}

// engineErr reports an internal error the engine recorded in its status.
func (m *Model) engineErr() error {
	if m.raw().status == statusInternalError {
		return errors.New("mnn: the engine reported an internal error")
	}
	return nil
}

// failed clears the engine after an error: nothing it holds is trusted.
func (m *Model) failed(err error) error {
	C.voice_llm_reset(m.l)
	return err
}

// cBytes views the engine's text in place; stream.write copies it.
func cBytes(text *C.char, n C.size_t) []byte {
	if n == 0 {
		return nil
	}
	return unsafe.Slice((*byte)(unsafe.Pointer(text)), int(n))
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
	m.life.Lock()
	defer m.life.Unlock()
	if m.l != nil {
		C.voice_llm_destroy(m.l)
		m.l = nil
	}
	return nil
}

const statusInternalError = 4

type rawStats struct {
	status            int
	promptLen, genLen int
	cached            int // tokens the KV cache holds
	prefill, decode   time.Duration
}

func (m *Model) raw() rawStats {
	var s C.voice_llm_stats
	C.voice_llm_stats_get(m.l, &s)
	return rawStats{
		status: int(s.status), promptLen: int(s.prompt_len), genLen: int(s.gen_seq_len), cached: int(s.all_seq_len),
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

// modelFiles are the files of the export in dir: what the derived
// weights are derived from.
func modelFiles(dir string) ([]string, error) {
	entries, err := os.ReadDir(dir)
	if err != nil {
		return nil, err
	}
	var files []string
	for _, e := range entries {
		// A Hugging Face snapshot's files are symlinks into its blobs:
		// what they point at is the model.
		path := filepath.Join(dir, e.Name())
		if info, err := os.Stat(path); err == nil && info.Mode().IsRegular() {
			files = append(files, path)
		}
	}
	return files, nil
}
