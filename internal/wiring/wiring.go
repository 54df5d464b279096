// Package wiring is the one place where concrete stage backends are chosen
// and built, shared by cmd/voice-agent and the GUI, so the pipeline never
// imports a stage implementation.
package wiring

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/voiceassistant/voice/asr/xasr"
	"github.com/voiceassistant/voice/assets"
	"github.com/voiceassistant/voice/audio"
	"github.com/voiceassistant/voice/audio/frontend"
	"github.com/voiceassistant/voice/internal/clock"
	"github.com/voiceassistant/voice/internal/onnx"
	"github.com/voiceassistant/voice/llm"
	"github.com/voiceassistant/voice/llm/mnn"
	"github.com/voiceassistant/voice/pipeline"
	"github.com/voiceassistant/voice/pipeline/pipelinetest"
	"github.com/voiceassistant/voice/tts/chunk"
	"github.com/voiceassistant/voice/tts/moss"
	"github.com/voiceassistant/voice/turn"
	"github.com/voiceassistant/voice/turn/smartturn"
	"github.com/voiceassistant/voice/vad"
	"github.com/voiceassistant/voice/vad/silero"
)

// Backend names. The real models are the defaults; the test doubles are
// there for demos and tests and must be asked for by name.
const (
	VADSilero    = "silero"
	VADEnergy    = "energy" // test double
	ASRXASR      = "xasr"
	ASRScripted  = "scripted" // test double
	TurnSmart    = "smart-turn"
	TurnScripted = "scripted" // test double
	TurnNone     = "none"
	LLMMNN       = "mnn"
	LLMScripted  = "scripted" // test double
	TTSMoss      = "moss"
	TTSTone      = "tone" // test double
	TTSNone      = "none"
)

// Stages selects and configures the backends.
type Stages struct {
	VAD  string `yaml:"vad"`
	ASR  string `yaml:"asr"`
	Turn string `yaml:"turn"`
	LLM  string `yaml:"llm"`
	TTS  string `yaml:"tts"`
	// Script drives the scripted doubles (see Script).
	Script   string `yaml:"script"`
	ModelDir string `yaml:"model_dir"`
	// VADModel and TurnModel override where the models are looked for
	// (default: ModelDir, then the copies scripts/setup installs).
	VADModel    string `yaml:"vad_model"`
	TurnModel   string `yaml:"turn_model"`
	ASRModelDir string `yaml:"asr_model_dir"`
	LLMModelDir string `yaml:"llm_model_dir"`
	// TTSModelDir is the MOSS-TTS-Nano ONNX set; TTSCodecDir its audio
	// tokenizer (default: where the set's manifest points); Voice a
	// built-in voice.
	TTSModelDir string `yaml:"tts_model_dir"`
	TTSCodecDir string `yaml:"tts_codec_dir"`
	Voice       string `yaml:"voice"`
	// LLMThreads is the LLM's CPU threads (0: one per core but one, at
	// most 4; see mnn.Config.Threads).
	LLMThreads int `yaml:"llm_threads"`
	// LLMMaxTokens bounds a reply of the MNN LLM (0: 512).
	LLMMaxTokens int `yaml:"llm_max_tokens"`
	// VADThreads, TurnThreads, ASRThreads and TTSThreads are the ONNX
	// models' intra-op threads (0: one). The stages run side by side, so
	// on a 2-4 core SoC one each is usually fastest overall.
	VADThreads  int `yaml:"vad_threads"`
	TurnThreads int `yaml:"turn_threads"`
	ASRThreads  int `yaml:"asr_threads"`
	TTSThreads  int `yaml:"tts_threads"`
	// ONNXRuntime is the ONNX Runtime library (default: $ONNXRUNTIME_LIB,
	// the copy scripts/setup installs, then the system's).
	ONNXRuntime string `yaml:"onnxruntime"`

	SystemPrompt string `yaml:"system_prompt"`
	// HistoryChars bounds the conversation sent to the LLM (0: no bound).
	HistoryChars int `yaml:"history_chars"`
	// BargeIn is what happens when the user speaks over a reply.
	BargeIn pipeline.BargeIn `yaml:"barge_in"`
	// Speculate starts the reply at the user's first pause, before the
	// turn is committed, where the LLM can take it back (see
	// pipeline.Config.Speculate).
	Speculate bool `yaml:"speculate"`
	// Chunk is how the reply is cut for synthesis: a short first chunk
	// gets the first audio out sooner.
	Chunk chunk.Config `yaml:"chunk"`

	// Endpoint and VADTuning are the endpointing policy and the speech
	// detector's thresholds (see turn.Config and vad.Config for what each
	// default is and why).
	Endpoint  turn.Config `yaml:"endpoint"`
	VADTuning vad.Config  `yaml:"vad_tuning"`

	// FrontEnd cleans the microphone with what is played as reference.
	FrontEnd FrontEnd `yaml:"frontend"`
}

// FrontEnd selects the audio front-end's parts.
type FrontEnd struct {
	AEC bool `yaml:"aec"`
	NS  bool `yaml:"ns"`
	AGC bool `yaml:"agc"`
	// DelayMS is the speaker-to-microphone delay if known; 0 leaves it to
	// the echo canceller's own estimate.
	DelayMS int `yaml:"delay_ms"`
	// HalfDuplex closes the microphone while the assistant speaks; it is
	// turned on by itself when echo cancellation is wanted but not built.
	HalfDuplex     bool          `yaml:"half_duplex"`
	HalfDuplexTail time.Duration `yaml:"half_duplex_tail"`
}

// DefaultStages are the real models.
func DefaultStages() Stages {
	return Stages{
		VAD: VADSilero, ASR: ASRXASR, Turn: TurnSmart, LLM: LLMMNN, TTS: TTSMoss,
		SystemPrompt: "You are a helpful voice assistant. Answer briefly, in plain spoken language.",
		HistoryChars: 4000,
		BargeIn:      pipeline.DefaultBargeIn(),
		Speculate:    true,
		Chunk:        chunk.DefaultConfig(),
		Endpoint:     turn.DefaultConfig(),
		VADTuning:    vad.DefaultConfig(),
		FrontEnd:     FrontEnd{AEC: true, NS: true, HalfDuplexTail: 300 * time.Millisecond},
	}
}

// Script is the JSON file read by the scripted doubles: what the user
// says when (for the scripted recognizer) and what the assistant answers.
type Script struct {
	User []struct {
		StartMS float64 `json:"start_ms"`
		EndMS   float64 `json:"end_ms"`
		Text    string  `json:"text"`
		// TurnComplete is what the scripted turn detector says in the
		// pause after this utterance: the probability that the user has
		// finished (default 1). A lower value makes the pause one the
		// user goes on after.
		TurnComplete *float64 `json:"turn_complete"`
		// Words optionally time each word; by default they share the
		// utterance evenly.
		Words []struct {
			Text    string  `json:"text"`
			StartMS float64 `json:"start_ms"`
			EndMS   float64 `json:"end_ms"`
		} `json:"words"`
	} `json:"user"`
	Replies         []string `json:"replies"`
	FirstTokenMS    float64  `json:"first_token_ms"`
	TokensPerSecond float64  `json:"tokens_per_second"`
}

// maxScriptMS bounds every time in a script (a day), so a typo cannot
// overflow a duration.
const maxScriptMS = 24 * 3600 * 1000

// ParseScript reads a script; name labels errors.
func ParseScript(data []byte, name string) (*Script, error) {
	var s Script
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&s); err != nil {
		return nil, fmt.Errorf("script %s: %w", name, err)
	}
	inRange := func(ms float64) bool { return ms >= 0 && ms <= maxScriptMS }
	for i, u := range s.User {
		if !inRange(u.StartMS) || !inRange(u.EndMS) || u.EndMS < u.StartMS {
			return nil, fmt.Errorf("script %s: user[%d]: start_ms %v and end_ms %v must satisfy 0 <= start <= end <= %d", name, i, u.StartMS, u.EndMS, maxScriptMS)
		}
		if p := u.TurnComplete; p != nil && (math.IsNaN(*p) || *p < 0 || *p > 1) {
			return nil, fmt.Errorf("script %s: user[%d]: turn_complete %v is not a probability (0 to 1)", name, i, *p)
		}
		for j, w := range u.Words {
			if w.StartMS < u.StartMS || w.EndMS > u.EndMS || w.EndMS < w.StartMS {
				return nil, fmt.Errorf("script %s: user[%d].words[%d]: %v-%v ms lies outside its utterance %v-%v ms", name, i, j, w.StartMS, w.EndMS, u.StartMS, u.EndMS)
			}
		}
	}
	if !inRange(s.FirstTokenMS) {
		return nil, fmt.Errorf("script %s: first_token_ms %v is not between 0 and %d", name, s.FirstTokenMS, maxScriptMS)
	}
	if s.TokensPerSecond < 0 || s.TokensPerSecond > 1e6 {
		return nil, fmt.Errorf("script %s: tokens_per_second %v is not between 0 (all at once) and 1e6", name, s.TokensPerSecond)
	}
	return &s, nil
}

// Utterances are the script's user speech for the scripted recognizer.
func (s *Script) Utterances() []pipelinetest.Utterance {
	var out []pipelinetest.Utterance
	for _, u := range s.User {
		utt := pipelinetest.Utterance{Start: msDur(u.StartMS), End: msDur(u.EndMS), Text: u.Text, TurnComplete: 1}
		if u.TurnComplete != nil {
			utt.TurnComplete = *u.TurnComplete
		}
		for _, w := range u.Words {
			utt.Words = append(utt.Words, pipelinetest.Word{Text: w.Text, Start: msDur(w.StartMS), End: msDur(w.EndMS)})
		}
		out = append(out, utt)
	}
	return out
}

// ErrUnavailable marks a backend that cannot be used on this build or
// machine; the error's message says what is missing and how to get it.
var ErrUnavailable = errors.New("backend unavailable")

// unavailableError is a stage that cannot be built here: what is missing
// (Unavailable), one line for the user with the command that fixes it,
// and the detail (where it was looked for, how to get it by hand) behind
// --log-level debug (Details).
type unavailableError struct{ what, short, detail string }

func (e unavailableError) Error() string        { return e.short }
func (e unavailableError) Is(target error) bool { return target == ErrUnavailable }

// notFound is the error for a stage's model found nowhere.
func notFound(s Stages, stage, model, file, fix, manual string) error {
	what := fmt.Sprintf("%s: %s not found", stage, model)
	return unavailableError{
		what:   what,
		short:  what + "; " + fix,
		detail: fmt.Sprintf("%s: looked for %s in %s; %s", stage, file, s.searched(), manual),
	}
}

// Model files looked for in the model directory and under third_party/.
const (
	SileroFile    = "silero_vad_v5.onnx"
	SmartTurnFile = "smart-turn-v3.2-cpu.onnx"
	XASRDir       = "xasr-zh-en-streaming-160ms"
	MNNDir        = "mnn-pocket-0.3b-int4"
	// The MOSS directories are named as their repositories, because the
	// TTS set's manifest finds the codec through ../MOSS-Audio-Tokenizer-Nano-ONNX.
	MossDir      = "MOSS-TTS-Nano-100M-ONNX"
	MossCodecDir = "MOSS-Audio-Tokenizer-Nano-ONNX"
)

// Build returns a pipeline configuration with every stage constructed, and
// a function that releases the stages' resources (model sessions); the
// caller adds the clock and device.
func Build(s Stages, clk clock.Clock) (pipeline.Config, func() error, error) {
	var closers closeAll
	cfg, err := build(s, clk, &closers)
	if err != nil {
		closers.close()
		return cfg, func() error { return nil }, err
	}
	return cfg, closers.close, nil
}

type closeAll []func() error

func (c *closeAll) add(f func() error) { *c = append(*c, f) }

func (c *closeAll) close() error {
	var errs []error
	for i := len(*c) - 1; i >= 0; i-- {
		errs = append(errs, (*c)[i]())
	}
	*c = nil
	return errors.Join(errs...)
}

// Validate names the first setting that makes no sense by its key in the
// config file (flags are named after the keys), so a typo on a headless
// device is an error, not a silently different assistant.
func (s Stages) Validate() error {
	for _, n := range []struct {
		key string
		v   int
	}{{"llm_threads", s.LLMThreads}, {"vad_threads", s.VADThreads}, {"turn_threads", s.TurnThreads}, {"asr_threads", s.ASRThreads}, {"tts_threads", s.TTSThreads}} {
		if n.v < 0 || n.v > 256 {
			return fmt.Errorf("config: stages.%s: %d is not between 0 (the default) and 256", n.key, n.v)
		}
	}
	if s.LLMMaxTokens < 0 {
		return fmt.Errorf("config: stages.llm_max_tokens: %d is negative (0 means 512)", s.LLMMaxTokens)
	}
	if s.HistoryChars < 0 {
		return fmt.Errorf("config: stages.history_chars: %d is negative (0 means no bound)", s.HistoryChars)
	}
	if err := s.BargeIn.Validate(); err != nil {
		return fmt.Errorf("config: stages.%w", err)
	}
	if err := s.Endpoint.Validate(); err != nil {
		return fmt.Errorf("config: stages.%w", err)
	}
	if err := s.Chunk.Validate(); err != nil {
		return fmt.Errorf("config: stages.chunk.%w", err)
	}
	if err := s.VADTuning.Validate(); err != nil {
		return fmt.Errorf("config: stages.vad_tuning: %w", err)
	}
	if t := s.FrontEnd.HalfDuplexTail; t < 0 || t > 10*time.Second {
		return fmt.Errorf("config: stages.frontend.half_duplex_tail: %v is not between 0 and 10s", t)
	}
	if d := s.FrontEnd.DelayMS; d < 0 || d > 1000 {
		return fmt.Errorf("config: stages.frontend.delay_ms: %d is not between 0 (estimate it) and 1000", d)
	}
	return nil
}

func build(s Stages, clk clock.Clock, closers *closeAll) (pipeline.Config, error) {
	cfg := pipeline.DefaultConfig()
	if err := s.Validate(); err != nil {
		return cfg, err
	}
	cfg.BargeIn = s.BargeIn
	cfg.Speculate = s.Speculate
	cfg.Endpoint = s.Endpoint
	cfg.HalfDuplex = pipeline.HalfDuplex{Enabled: s.FrontEnd.HalfDuplex, Tail: s.FrontEnd.HalfDuplexTail}
	cfg.History = llm.NewHistory(s.SystemPrompt, s.HistoryChars)
	cfg.NewChunker = func() pipeline.Chunker { return chunk.New(s.Chunk) }

	var script *Script
	needScript := s.ASR == ASRScripted || s.LLM == LLMScripted || s.Turn == TurnScripted
	if needScript {
		var err error
		if script, err = loadScript(s.Script); err != nil {
			return cfg, err
		}
	}
	var errs []error
	switch s.VAD {
	case VADEnergy:
		cfg.VAD = pipelinetest.NewEnergyVAD()
	case VADSilero:
		d, closeVAD, err := NewVAD(s)
		if err != nil {
			errs = append(errs, err)
			break
		}
		closers.add(closeVAD)
		cfg.VAD = d
	default:
		errs = append(errs, unknown("vad", s.VAD, VADSilero, VADEnergy))
	}
	switch s.ASR {
	case ASRScripted:
		cfg.ASR = &pipelinetest.ScriptedASR{Script: script.Utterances()}
	case ASRXASR:
		r, err := NewRecognizer(s)
		if err != nil {
			errs = append(errs, err)
			break
		}
		closers.add(r.Close)
		cfg.ASR = r
	default:
		errs = append(errs, unknown("asr", s.ASR, ASRXASR, ASRScripted))
	}
	switch s.Turn {
	case TurnNone, "":
	case TurnScripted:
		cfg.Turn = &pipelinetest.TimedTurn{Clock: clk, Script: script.Utterances()}
	case TurnSmart:
		m, err := NewTurnDetector(s)
		if err != nil {
			errs = append(errs, err)
			break
		}
		closers.add(m.Close)
		cfg.Turn = m
	default:
		errs = append(errs, unknown("turn", s.Turn, TurnSmart, TurnNone, TurnScripted))
	}
	if gen, closeGen, err := NewGenerator(s, clk, script); err != nil {
		errs = append(errs, err)
	} else {
		closers.add(closeGen)
		cfg.LLM = gen
	}
	if s.TTS != TTSNone {
		if tts, closeTTS, err := NewSynthesizer(s); err != nil {
			errs = append(errs, err)
		} else {
			closers.add(closeTTS)
			cfg.TTS = tts
		}
	}
	return cfg, errors.Join(errs...)
}

// NewSynthesizer builds the speech synthesizer for s, and the function
// that releases it.
func NewSynthesizer(s Stages) (pipeline.Synthesizer, func() error, error) {
	noop := func() error { return nil }
	switch s.TTS {
	case TTSTone:
		return pipelinetest.NewToneTTS(), noop, nil
	case TTSMoss:
		dir := s.TTSModelDir
		if dir == "" {
			var ok bool
			var err error
			if dir, ok, err = s.model("", MossDir); err != nil {
				return nil, noop, err
			} else if !ok {
				return nil, noop, notFound(s, "TTS", "MOSS-TTS-Nano", MossDir,
					"run `voice-agent models pull MOSS-TTS-Nano-100M-ONNX MOSS-Audio-Tokenizer-Nano-ONNX`, or --tts tone for a demo",
					fmt.Sprintf("%s, put the TTS set in one of those places and the codec in %s beside it, or pass --tts-model-dir DIR", moss.Hint, MossCodecDir))
			}
		}
		m, err := moss.Open(dir, s.TTSCodecDir, moss.Options{Voice: s.Voice, ONNX: s.onnx(s.TTSThreads)})
		if err != nil {
			return nil, noop, err
		}
		return m, m.Close, nil
	default:
		return nil, noop, unknown("tts", s.TTS, TTSMoss, TTSTone, TTSNone)
	}
}

func unknown(flag, got string, valid ...string) error {
	return fmt.Errorf("unknown --%s backend %q (valid: %v)", flag, got, valid)
}

func loadScript(path string) (*Script, error) {
	if path == "" {
		return nil, errors.New("the scripted doubles need --script FILE (JSON with \"user\" and \"replies\")")
	}
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("script: %w", err)
	}
	return ParseScript(data, path)
}

// NewVAD builds the Silero detector for s, and the function that closes
// its model session.
func NewVAD(s Stages) (*vad.Detector, func() error, error) {
	path, ok, err := s.model(s.VADModel, SileroFile)
	if err != nil {
		return nil, nil, err
	}
	if !ok {
		return nil, nil, notFound(s, "VAD", "Silero v5", SileroFile, "run `voice-agent models pull silero-vad-v5` (scripts/setup installs it too)", silero.ModelHint)
	}
	m, err := silero.New(path, s.onnx(s.VADThreads))
	if err != nil {
		return nil, nil, err
	}
	d, err := vad.NewDetector(m, s.VADTuning)
	if err != nil {
		return nil, nil, errors.Join(err, m.Close())
	}
	return d, m.Close, nil
}

// NewGenerator builds the language model for s, and the function that
// releases it. script is the parsed --script, needed by the scripted
// double (nil otherwise: it is loaded here).
func NewGenerator(s Stages, clk clock.Clock, script *Script) (pipeline.Generator, func() error, error) {
	noop := func() error { return nil }
	switch s.LLM {
	case LLMScripted:
		if script == nil {
			var err error
			if script, err = loadScript(s.Script); err != nil {
				return nil, noop, err
			}
		}
		if len(script.Replies) == 0 {
			return nil, noop, fmt.Errorf("script %s: no replies for the scripted LLM", s.Script)
		}
		return &pipelinetest.ScriptedLLM{Clock: clk, Replies: script.Replies,
			FirstToken: msDur(script.FirstTokenMS), TokensPerSecond: script.TokensPerSecond}, noop, nil
	case LLMMNN:
		dir := s.LLMModelDir
		if dir == "" {
			var ok bool
			var err error
			if dir, ok, err = s.model("", MNNDir); err != nil {
				return nil, noop, err
			} else if !ok {
				dir = s.ModelDir
			}
		}
		m, err := mnn.Open(mnn.Config{Dir: dir, Threads: s.LLMThreads, MaxNewTokens: s.LLMMaxTokens})
		switch {
		case errors.Is(err, mnn.ErrNotBuilt):
			return nil, noop, unavailableError{
				what:   "LLM: this build has no MNN engine (scripts/setup builds it in)",
				short:  "LLM: this build has no MNN; run scripts/setup (it builds MNN and the agent with it), or --llm scripted --script FILE for a demo",
				detail: fmt.Sprintf("LLM backend %q: %v", s.LLM, err),
			}
		case err != nil && dir == "":
			return nil, noop, notFound(s, "LLM", "MNN-Pocket-0.3B", MNNDir, "run `voice-agent models pull "+MNNDir+"`, or pass --llm-model-dir DIR",
				"put the MNN export in one of those places or pass --llm-model-dir DIR")
		case err != nil:
			return nil, noop, err
		}
		return m, m.Close, nil
	default:
		return nil, noop, unknown("llm", s.LLM, LLMMNN, LLMScripted)
	}
}

// NewFrontEnd builds the audio front-end for s (nil if every part is
// off), and the function that releases it. If echo cancellation is wanted
// but this build has none, it returns no front-end and halfDuplex true: the
// caller closes the microphone while the assistant speaks instead.
func NewFrontEnd(s Stages) (fe audio.FrontEnd, closeFE func(), halfDuplex bool, err error) {
	f := s.FrontEnd
	if !f.AEC && !f.NS && !f.AGC {
		return nil, func() {}, false, nil
	}
	p, err := frontend.New(frontend.Config{AEC: f.AEC, NS: f.NS, AGC: f.AGC, DelayMS: f.DelayMS, NSLevel: 2})
	if errors.Is(err, frontend.ErrUnavailable) {
		return nil, func() {}, f.AEC, nil
	}
	if err != nil {
		return nil, func() {}, false, err
	}
	return p, p.Close, false, nil
}

// FrontEndRestarts is how many times fe started afresh after producing
// audio that was not finite (see frontend.Processor.Restarts).
func FrontEndRestarts(fe audio.FrontEnd) int {
	if r, ok := fe.(interface{ Restarts() int }); ok {
		return r.Restarts()
	}
	return 0
}

// NewRecognizer opens the X-ASR recognizer for s: the directory given by
// ASRModelDir, else <model dir>/xasr-zh-en-streaming-160ms, else the model
// directory itself (xasr then names any file it lacks), else the copy
// under third_party/models.
func NewRecognizer(s Stages) (*xasr.Recognizer, error) {
	dir := s.ASRModelDir
	if dir == "" {
		var ok bool
		var err error
		if dir, ok, err = s.model("", XASRDir); err != nil {
			return nil, err
		} else if !ok {
			if s.ModelDir == "" {
				return nil, notFound(s, "ASR", "X-ASR", XASRDir, "run `voice-agent models pull "+XASRDir+"`, or pass --asr-model-dir DIR",
					strings.ReplaceAll(xasr.Hint, "DIR", "one of those places")+", or pass --asr-model-dir DIR")
			}
			dir = s.ModelDir
		}
	}
	return xasr.New(dir, s.onnx(s.ASRThreads))
}

// NewTurnDetector opens the Smart Turn model for s.
func NewTurnDetector(s Stages) (*smartturn.Model, error) {
	path, ok, err := s.model(s.TurnModel, SmartTurnFile)
	if err != nil {
		return nil, err
	}
	if !ok {
		return nil, notFound(s, "turn detector", "Smart Turn v3.2", SmartTurnFile,
			"run `voice-agent models pull smart-turn-v3.2-cpu`, or --turn none to end turns on silence alone",
			smartturn.Hint+", or put it in one of those places")
	}
	return smartturn.New(path, s.onnx(s.TurnThreads))
}

// StageModel is what one stage's configured backend needs of the disk.
type StageModel struct {
	// Stage is the manifest's name: runtime (the ONNX Runtime library),
	// vad, turn, asr, llm or tts.
	Stage string
	// Backend is the configured backend ("onnxruntime" for the runtime).
	Backend string
	// Loads is whether the backend loads a model: a test double, "none"
	// or an engine not in this build does not.
	Loads bool
	// NotBuilt is set when the backend's engine is not in this build.
	NotBuilt bool
	// Present is whether the model is where the agent looks for one.
	Present bool
}

// StageModels says, stage by stage, whether the configured backends would
// find their models (and the ONNX stages their runtime), without loading
// anything.
func (s Stages) StageModels() []StageModel {
	found := func(explicit, file string) bool {
		if explicit != "" {
			return true
		}
		_, ok, err := s.model("", file)
		return ok && err == nil
	}
	models := []StageModel{
		{Stage: "vad", Backend: s.VAD, Loads: s.VAD == VADSilero, Present: found(s.VADModel, SileroFile)},
		{Stage: "asr", Backend: s.ASR, Loads: s.ASR == ASRXASR, Present: found(s.ASRModelDir, XASRDir) || s.ModelDir != ""},
		{Stage: "turn", Backend: s.Turn, Loads: s.Turn == TurnSmart, Present: found(s.TurnModel, SmartTurnFile)},
		{Stage: "llm", Backend: s.LLM, Loads: s.LLM == LLMMNN && mnn.Built, NotBuilt: s.LLM == LLMMNN && !mnn.Built,
			Present: found(s.LLMModelDir, MNNDir) || s.ModelDir != ""},
		{Stage: "tts", Backend: s.TTS, Loads: s.TTS == TTSMoss, Present: found(s.TTSModelDir, MossDir)},
	}
	onnxStage := slices.ContainsFunc(models, func(m StageModel) bool { return m.Loads && m.Stage != "llm" })
	_, err := onnx.FindLibrary(s.ONNXRuntime)
	runtime := StageModel{Stage: "runtime", Backend: "onnxruntime", Loads: onnxStage, Present: err == nil}
	return append([]StageModel{runtime}, models...)
}

// MissingStages names the model stages (vad, turn, asr, llm, tts) whose
// configured real backend has no model where the agent looks for one,
// without loading anything. The LLM counts only in a build with MNN:
// without the engine a model would not help.
func (s Stages) MissingStages() []string {
	var missing []string
	for _, m := range s.StageModels() {
		if m.Stage != "runtime" && m.Loads && !m.Present {
			missing = append(missing, m.Stage)
		}
	}
	return missing
}

// WithInstalled swaps each stage whose model is not installed (or, for the
// LLM, not built in) for what stands in for it in a measurement: the
// energy VAD, no turn model, the tone synthesizer, and, given a script,
// the scripted recognizer and LLM. It returns the stages and the names of
// the stages swapped.
func (s Stages) WithInstalled() (Stages, []string) {
	missing := s.MissingStages()
	if s.LLM == LLMMNN && !mnn.Built {
		missing = append(missing, "llm")
	}
	var swapped []string
	swap := func(name string, backend *string, double string) {
		if slices.Contains(missing, name) {
			*backend = double
			swapped = append(swapped, name)
		}
	}
	swap("vad", &s.VAD, VADEnergy)
	swap("turn", &s.Turn, TurnNone)
	swap("tts", &s.TTS, TTSTone)
	if s.Script != "" {
		swap("asr", &s.ASR, ASRScripted)
		swap("llm", &s.LLM, LLMScripted)
	}
	return s, swapped
}

// Unavailable lists what err says is missing, one line per stage and
// without the command-line fixes (for a window that offers its own): the
// stages wiring could not build for want of a model or an engine. It is
// empty for any other error.
func Unavailable(err error) []string {
	var out []string
	eachUnavailable(err, func(u unavailableError) { out = append(out, u.what) })
	return out
}

// Details is the detail behind each unavailable stage in err: where its
// model was looked for and how to get it by hand.
func Details(err error) []string {
	var out []string
	eachUnavailable(err, func(u unavailableError) { out = append(out, u.detail) })
	return out
}

// eachUnavailable calls f for every unavailable stage in err's tree.
func eachUnavailable(err error, f func(unavailableError)) {
	switch e := err.(type) {
	case unavailableError:
		f(e)
	case interface{ Unwrap() []error }:
		for _, c := range e.Unwrap() {
			eachUnavailable(c, f)
		}
	case interface{ Unwrap() error }:
		eachUnavailable(e.Unwrap(), f)
	}
}

// cachePaths maps a model file or directory to where `voice-agent models
// pull` puts it in the cache: under the manifest's model name.
var cachePaths = map[string]string{
	SileroFile:    filepath.Join("silero-vad-v5", SileroFile),
	SmartTurnFile: filepath.Join("smart-turn-v3.2-cpu", SmartTurnFile),
	XASRDir:       XASRDir,
	MossDir:       MossDir,
	MNNDir:        MNNDir,
}

// model finds a model file or directory: the explicit path if given, else
// in the model directory, else in the model cache, else where
// scripts/setup installs models. A model found in the cache must be
// complete (assets.CheckCached), so a damaged download is reported with
// the command that repairs it rather than as a loader error.
func (s Stages) model(explicit, file string) (string, bool, error) {
	if explicit != "" {
		return explicit, true, nil // a wrong explicit path is reported by the loader
	}
	if s.ModelDir != "" {
		if p := filepath.Join(s.ModelDir, file); exists(p) {
			return p, true, nil
		}
	}
	if cache, err := assets.CacheDir(); err == nil {
		if p := filepath.Join(cache, cachePaths[file]); exists(p) {
			return p, true, checkCached(cache, cachePaths[file])
		}
	}
	p, ok := assets.Local(filepath.Join("models", file))
	return p, ok, nil
}

// searched names, for a "not found" message, where model looks.
func (s Stages) searched() string {
	var places []string
	if s.ModelDir != "" {
		places = append(places, "the model directory "+s.ModelDir)
	}
	if cache, err := assets.CacheDir(); err == nil {
		places = append(places, "the model cache "+cache)
	}
	places = append(places, filepath.Join(assets.LocalDir, "models"))
	if len(places) == 1 {
		return places[0]
	}
	return strings.Join(places[:len(places)-1], ", ") + " and " + places[len(places)-1]
}

func exists(path string) bool {
	_, err := os.Stat(path)
	return err == nil
}

// checkCached checks the manifest's model whose directory rel lies in.
func checkCached(cache, rel string) error {
	manifest, err := assets.LoadManifest()
	if err != nil {
		return err
	}
	name, _, _ := strings.Cut(filepath.ToSlash(rel), "/")
	m, ok := manifest.Model(name)
	if !ok {
		return fmt.Errorf("wiring: no manifest entry %q for the cached model %s", name, rel)
	}
	return assets.CheckCached(cache, m)
}

// onnx is the session options of a model run on threads threads.
func (s Stages) onnx(threads int) onnx.Options {
	return onnx.Options{Library: s.ONNXRuntime, IntraThreads: threads}
}

func msDur(ms float64) time.Duration { return time.Duration(ms * float64(time.Millisecond)) }
