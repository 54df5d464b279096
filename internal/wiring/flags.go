package wiring

import "github.com/spf13/pflag"

// AddBackendFlags defines the flags that choose each stage's backend (and
// the doubles' script and the ONNX Runtime library), with s's values as
// defaults: every command that builds a pipeline takes them alike.
func (s *Stages) AddBackendFlags(f *pflag.FlagSet) {
	f.StringVar(&s.VAD, "vad", s.VAD, "VAD backend: silero, or energy (test double)")
	f.StringVar(&s.ASR, "asr", s.ASR, "ASR backend: xasr, or scripted (test double)")
	f.StringVar(&s.Turn, "turn", s.Turn, "turn detector: smart-turn, none (silence only), or scripted (test double)")
	f.StringVar(&s.LLM, "llm", s.LLM, "LLM backend: mnn, or scripted (test double)")
	f.StringVar(&s.TTS, "tts", s.TTS, "TTS backend: moss, none (text only), or tone (test double)")
	f.StringVar(&s.Script, "script", s.Script, "JSON script for the scripted doubles")
	f.StringVar(&s.ONNXRuntime, "onnxruntime", s.ONNXRuntime, "ONNX Runtime library (default: $ONNXRUNTIME_LIB, third_party/onnxruntime, system)")
}
