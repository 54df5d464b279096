package wiring

import (
	"cmp"
	"fmt"
	"runtime"
	"strings"

	"github.com/spf13/pflag"

	"github.com/voiceassistant/voice/tts/moss"
)

// FlagGroup picks the stage flags a command offers: a command takes the
// flags of the stages it runs and no others, so `vad --help` lists the
// VAD's knobs and not the barge-in policy's.
type FlagGroup uint

const (
	VADFlags FlagGroup = 1 << iota
	TurnFlags
	ASRFlags
	LLMFlags
	TTSFlags
	// ConversationFlags are the pipeline's own: barge-in, speculation,
	// chunking for synthesis and the capture front-end.
	ConversationFlags
	// ToolFlags turn the model's tools on and say which (Tools): for the
	// commands that run replies, not a stage alone.
	ToolFlags

	// PipelineFlags are every stage's and the pipeline's: for the
	// commands that run the whole assistant.
	PipelineFlags = VADFlags | TurnFlags | ASRFlags | LLMFlags | TTSFlags | ConversationFlags | ToolFlags

	onnxStages   = VADFlags | TurnFlags | ASRFlags | TTSFlags
	modelStages  = onnxStages | LLMFlags
	scriptStages = TurnFlags | ASRFlags | LLMFlags
)

// The defaults the engines apply to a setting left at zero: an ONNX
// model's intra-op threads (internal/onnx) and the MNN LLM's longest reply
// (mnn.Config.MaxNewTokens). The help text and InEffect state them.
const (
	onnxThreads  = 1
	llmMaxTokens = 512
)

// llmThreads is the MNN LLM's default threads on this machine: one per
// core but one, at most 4 (mnn.Config.Threads says why).
func llmThreads() int { return min(4, max(1, runtime.NumCPU()-1)) }

// InEffect is s with each setting left to its engine's default (zero
// threads or tokens, no voice) set to that default: what the stages run
// with, so that what `voice-agent config` prints says so.
func (s Stages) InEffect() Stages {
	for _, n := range []*int{&s.VADThreads, &s.TurnThreads, &s.ASRThreads, &s.TTSThreads} {
		*n = cmp.Or(*n, onnxThreads)
	}
	s.LLMThreads = cmp.Or(s.LLMThreads, llmThreads())
	s.LLMMaxTokens = cmp.Or(s.LLMMaxTokens, llmMaxTokens)
	s.Voice = cmp.Or(s.Voice, moss.DefaultVoice)
	return s
}

// AddBackendFlags defines the flags that choose the backends of the stages
// in groups (and the doubles' script and the ONNX Runtime library where a
// stage needs them), with s's values as defaults.
func (s *Stages) AddBackendFlags(f *pflag.FlagSet, groups FlagGroup) {
	for _, c := range s.choices() {
		if groups&c.group != 0 {
			f.Var(choiceFlag{c}, c.key, c.what+": "+c.help)
		}
	}
	if groups&scriptStages != 0 {
		f.StringVar(&s.Script, "script", s.Script, "JSON script for the scripted stand-ins")
	}
	if groups&onnxStages != 0 {
		s.AddONNXRuntimeFlag(f)
	}
}

// AddONNXRuntimeFlag defines --onnxruntime, the ONNX Runtime library.
func (s *Stages) AddONNXRuntimeFlag(f *pflag.FlagSet) {
	f.StringVar(&s.ONNXRuntime, "onnxruntime", s.ONNXRuntime, "ONNX Runtime library (default: $ONNXRUNTIME_LIB, third_party/onnxruntime, system)")
}

// AddFlags defines every flag of the stages in groups: backend, model,
// threads and, for ConversationFlags, the pipeline's policies.
func (s *Stages) AddFlags(f *pflag.FlagSet, groups FlagGroup) {
	onnxDefault := fmt.Sprintf(" (default %d)", onnxThreads)
	s.AddBackendFlags(f, groups)
	if groups&modelStages != 0 {
		f.StringVar(&s.ModelDir, "model-dir", s.ModelDir, "model directory")
	}
	for _, m := range []struct {
		group       FlagGroup
		model       *string
		name, where string
		threads     *int
		threadsHelp string
	}{
		{VADFlags, &s.VADModel, "vad-model", "Silero VAD model (default: model directory, then third_party/models)", &s.VADThreads, "VAD model CPU threads" + onnxDefault},
		{TurnFlags, &s.TurnModel, "turn-model", "Smart Turn model (default: model directory, then third_party/models)", &s.TurnThreads, "Smart Turn model CPU threads" + onnxDefault},
		{ASRFlags, &s.ASRModelDir, "asr-model-dir", "X-ASR model directory (default: <model dir>/xasr-zh-en-streaming-160ms, the model directory itself, then third_party/models)", &s.ASRThreads, "ASR model CPU threads" + onnxDefault},
		{LLMFlags, &s.LLMModelDir, "llm-model-dir", "MNN LLM export directory (default: <model dir>/mnn-pocket-0.3b-int4, then the model directory itself)", &s.LLMThreads,
			fmt.Sprintf("LLM CPU threads (default %d here: one per core but one, at most 4)", llmThreads())},
		{TTSFlags, &s.TTSModelDir, "tts-model-dir", "MOSS-TTS-Nano ONNX set (default: <model dir>/MOSS-TTS-Nano-100M-ONNX)", &s.TTSThreads, "TTS model CPU threads" + onnxDefault},
	} {
		if groups&m.group != 0 {
			f.StringVar(m.model, m.name, *m.model, m.where)
			stage, _, _ := strings.Cut(m.name, "-")
			f.IntVar(m.threads, stage+"-threads", *m.threads, m.threadsHelp)
		}
	}
	if groups&LLMFlags != 0 {
		f.IntVar(&s.LLMMaxTokens, "llm-max-tokens", s.LLMMaxTokens, fmt.Sprintf("longest reply of the MNN LLM, in tokens (default %d)", llmMaxTokens))
		f.StringVar(&s.SystemPrompt, "system-prompt", s.SystemPrompt, "system prompt")
	}
	if groups&ToolFlags != 0 {
		f.BoolVar(&s.Tools.Enabled, "tools", s.Tools.Enabled, "let the model call tools: the time, timers and alarms, notes, the volume, the last reply again, and the host's own (docs/running.md, Tools)")
		f.StringSliceVar(&s.Tools.Disable, "tools-disable", s.Tools.Disable, "built-in tools the model is not given (comma-separated names)")
		f.StringVar(&s.Tools.NotesFile, "notes-file", s.Tools.NotesFile, "where the notes tool keeps what it is told to remember (default $XDG_STATE_HOME/voice-agent/notes.json)")
	}
	if groups&TTSFlags != 0 {
		f.StringVar(&s.TTSCodecDir, "tts-codec-dir", s.TTSCodecDir, "MOSS audio tokenizer ONNX (default: where the TTS set's manifest points)")
		f.StringVar(&s.Voice, "voice", s.Voice, "built-in voice of the synthesizer (default "+moss.DefaultVoice+")")
		f.BoolVar(&s.TTSLowMemory, "tts-low-memory", s.TTSLowMemory, "close the synthesizer's prefill graph after the voice prompt (85 MiB at int4): long sentences start up to 0.5 s later; nothing changes where the decode step is fed a chunk's text at once (its shared form, kept at the first load), which opens no prefill graph")
	}
	if groups&ConversationFlags != 0 {
		s.addConversationFlags(f)
	}
	if whole := modelStages | ConversationFlags; groups&whole == whole {
		f.IntVar(&s.MemoryBudget, "memory-budget", s.MemoryBudget, "anonymous memory, in MiB, the installed models may be expected to take: start-up refuses a set over it (0: no budget; default 450 on arm64)")
	}
}

func (s *Stages) addConversationFlags(f *pflag.FlagSet) {
	f.Var(&s.Activation, "activation", "what opens a turn: any speech (always); the host's talk button on the control socket (push: nothing listens while it is up); or a wake phrase, the host's wake command and the follow-up window after a reply (wake: see stages.wake_phrases and stages.follow_up)")
	f.Var(&s.BargeIn.Mode, "barge-in", "when the user speaks over a reply: pause it and decide (cancel or resume), duck it and decide, or off (let it finish; the speech is the next turn)")
	f.DurationVar(&s.BargeIn.MinSpeech, "barge-in-min-speech", s.BargeIn.MinSpeech, "speech this long interrupts even before it has words (0: at once)")
	f.IntVar(&s.BargeIn.MinWords, "barge-in-min-words", s.BargeIn.MinWords, "words, backchannels aside, that interrupt (0: only --barge-in-min-speech decides)")
	f.DurationVar(&s.BargeIn.ResumeAfter, "barge-in-resume-after", s.BargeIn.ResumeAfter, "after a sound that did not interrupt, play on once this much silence has passed")
	f.StringSliceVar(&s.BargeIn.Backchannels, "backchannels", s.BargeIn.Backchannels, "words and phrases that never interrupt (comma-separated)")
	f.BoolVar(&s.Speculate, "speculate", s.Speculate, "start the reply at the user's first pause, before the turn is committed (with an LLM that can take it back)")
	f.IntVar(&s.Chunk.FirstWords, "first-chunk-words", s.Chunk.FirstWords, "end the first chunk for synthesis after this many words (0: at a clause or sentence)")
	f.IntVar(&s.Chunk.FirstChars, "first-chunk-chars", s.Chunk.FirstChars, "end a Chinese first chunk for synthesis at a natural break after half this many characters, and at this many at the latest (0: at a clause or sentence)")
	f.BoolVar(&s.FrontEnd.AEC, "aec", s.FrontEnd.AEC, "echo cancellation (with a build with -tags webrtcapm)")
	f.BoolVar(&s.FrontEnd.NS, "ns", s.FrontEnd.NS, "noise suppression")
	f.BoolVar(&s.FrontEnd.AGC, "agc", s.FrontEnd.AGC, "automatic gain control")
	f.BoolVar(&s.FrontEnd.HalfDuplex, "half-duplex", s.FrontEnd.HalfDuplex, "close the microphone while the assistant speaks")
}
