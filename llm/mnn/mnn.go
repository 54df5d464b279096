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
	"slices"
	"strings"
	"sync"
	"time"
	"unicode/utf8"
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

func (m *Model) release() { <-m.engine }

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
	layout := poolLayout(cfg.ConfigFile, cfg.engineSettings(""))
	pool, err := openPool(sources, layout)
	if err == nil && pool.making && !inCheck() {
		// Made and checked in a child first (check.go); the pool it
		// seals is mapped here.
		pool.release()
		if err := checkInChild(cfg); err != nil {
			return nil, err
		}
		pool, err = openPool(sources, layout)
	}
	if err != nil {
		// The weights then go onto the heap: more anonymous memory, the
		// same replies.
		slog.Warn("mnn: the weights are loaded onto the heap, not mapped from a file", "model", cfg.Dir, "why", err)
	}
	defer pool.release()
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
	if err := pool.seal(); err != nil {
		slog.Warn("mnn: the mapped weights could not be sealed; they are made again at the next load", "dir", pool.dir, "err", err)
	}
	// What the load and the first run freed goes back to the system,
	// not to the heap's free lists (onnx.Open does the same).
	malloc.Trim()
	return m, nil
}

// pool is the folder of the weights MNN rearranges for the CPU at the
// first load and maps from then on (use_mmap), kept in the user's cache
// per model (internal/derived): their file names do not say which model
// they are of.
type pool struct {
	dir     string
	release func()
	// making: MNN writes the pool at this load; sealed once it loaded.
	making bool
}

// poolSuffix ends the name of every file MNN writes into the pool (the
// weights, then an empty sync marker once they are whole).
const poolSuffix = ".static"

// openPool returns the pool for the model of sources, or an error that
// says why the weights cannot be mapped (and what to do), with a pool
// that maps nothing.
//
// MNN trusts a pool whose sync marker exists and writes a new one through
// a shared mapping of a 1 GiB sparse file: a pool damaged since it was
// made (zeroed, cut short, deleted, swapped for a symlink) gives empty
// replies at every start, and a disk that fills while MNN writes kills
// the process with SIGBUS. So a pool is used only as it was sealed, made
// again otherwise, and made only where the disk has room for it.
func openPool(sources []string, layout string) (pool, error) {
	none := pool{release: func() {}}
	dir, release, err := derived.Acquire("mnn", Version()+" "+layout, sources...)
	if err != nil {
		return none, err
	}
	files, _ := filepath.Glob(filepath.Join(dir, "*"+poolSuffix))
	if len(files) > 0 {
		err := derived.Verify(dir)
		if err == nil {
			return pool{dir: dir, release: release}, nil
		}
		level := slog.LevelWarn
		if errors.Is(err, derived.ErrUnsealed) {
			level = slog.LevelInfo // made by an earlier agent, or by a load that did not finish
		}
		slog.Log(context.Background(), level, "mnn: the mapped weights are not as they were made; making them again", "dir", dir, "why", err)
	}
	// New files, not the old ones rewritten: an agent that maps them
	// keeps its pages, and a symlink planted in the folder is not
	// written through.
	for _, f := range append(files, filepath.Join(dir, derived.SealFile)) {
		if err := os.Remove(f); err != nil && !errors.Is(err, os.ErrNotExist) {
			release()
			return none, err
		}
	}
	need := poolBytes(sources)
	free, err := freeBytes(dir)
	if err == nil && free < need {
		err = fmt.Errorf("%d MiB free in %s, where the mapped weights need about %d MiB; free some space", free>>20, dir, need>>20)
	}
	if err != nil {
		release()
		return none, err
	}
	return pool{dir: dir, release: release, making: true}, nil
}

// layoutSettings are the engine settings (alibaba/MNN
// transformers/llm/engine/src/llmconfig.hpp) by which MNN packs the
// weights it writes into the pool: the backend, its precision, memory and
// power modes, its threads, and how it quantizes at run time. A pool made
// under others is not read right under these.
var layoutSettings = []string{"backend_type", "thread_num", "precision", "power", "memory", "dynamic_option"}

// poolLayout names the layout a pool is made for: the config file the
// engine starts from (the model's files are the pool's sources already)
// and the layout settings given over it.
func poolLayout(configFile string, settings map[string]any) string {
	key := map[string]any{"config": configFile}
	for _, name := range layoutSettings {
		if v, ok := settings[name]; ok {
			key[name] = v
		}
	}
	js, _ := json.Marshal(key) // keys sorted: one layout, one name
	return string(js)
}

// freeBytes is derived.FreeBytes, or a test's full disk.
var freeBytes = derived.FreeBytes

// poolBytes is what a pool of the model of sources takes on disk: MNN's
// rearranged weights are about an eighth larger than llm.mnn.weight
// (184 MiB for MNN-Pocket's 163).
func poolBytes(sources []string) uint64 {
	return uint64(derived.Bytes(sources))*5/4 + 16<<20
}

// seal records the pool MNN has just made (derived.Seal).
func (p pool) seal() error {
	if !p.making {
		return nil
	}
	files, err := filepath.Glob(filepath.Join(p.dir, "*"+poolSuffix))
	if err != nil || len(files) == 0 {
		return fmt.Errorf("MNN wrote no weights into %s (%v)", p.dir, err)
	}
	names := make([]string, len(files))
	for i, f := range files {
		names[i] = filepath.Base(f)
	}
	return derived.Seal(p.dir, names...)
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
// first is called once the first token is out.
func (m *Model) decode(ctx context.Context, emit func(string) error, limit int, first func()) error {
	s := newStream(emit)
	for batch, done := 1, 0; done < limit; {
		if err := ctx.Err(); err != nil {
			return err
		}
		batch = min(batch, limit-done)
		var (
			cerr    *C.char
			text    *C.char
			size    C.size_t
			stopped C.int
		)
		start := time.Now()
		if C.voice_llm_step(m.l, C.int(batch), &stopped, &text, &size, &cerr) != 0 {
			return fmt.Errorf("mnn: decode: %w", takeErr(cerr, "failed"))
		}
		took := time.Since(start)
		if done == 0 {
			first()
		}
		s.write(cBytes(text, size))
		if s.err != nil {
			return s.err
		}
		if stopped != 0 {
			break
		}
		done += batch
		batch = stepTokens(took, batch)
	}
	if err := m.engineErr(); err != nil {
		return err
	}
	return s.flush()
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
