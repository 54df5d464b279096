package event

import (
	"time"

	"github.com/voiceassistant/voice/llm"
)

// StageCompute is what a turn cost each stage, in milliseconds of this
// machine's time (unscaled). LLM is the wall time generation took between
// pieces (prefill included); LLMPrefill and LLMDecode are the engine's own
// figures where it reports them.
type StageCompute struct {
	VAD        float64 `json:"vad"`
	ASR        float64 `json:"asr"`
	Turn       float64 `json:"turn"`
	LLM        float64 `json:"llm"`
	LLMPrefill float64 `json:"llm_prefill"`
	LLMDecode  float64 `json:"llm_decode"`
	TTS        float64 `json:"tts"`
	// The parts of compute-only latency (ComputeOnly), each counted in its
	// stage's figure as well: the final transcript (the early final's copy
	// of the recognizer, or the recognizer finalized at the commit), the
	// LLM up to its first token (prefill and the first decode step), and
	// synthesis up to the first chunk's first audio. The LLM's and the
	// synthesizer's are the reply's that answered the turn, not a
	// speculated one's that was dropped.
	ASRFinal      float64 `json:"asr_final"`
	LLMFirstToken float64 `json:"llm_first_token"`
	TTSFirstAudio float64 `json:"tts_first_audio"`
}

// ComputeOnly is the turn's compute-only latency, as the MNN-Pocket
// report gives it beside the measured one (its table 11): warmed-up
// models, a commit at once at the speech's end and synthesis from the
// first text, so no endpointing wait, no text buffered for a speakable
// chunk and no queueing, only the compute on the way to the first audio.
func (c *StageCompute) ComputeOnly() float64 { return c.ASRFinal + c.LLMFirstToken + c.TTSFirstAudio }

// Stage names a field of StageCompute that compute is added to.
type Stage int

const (
	StageVAD Stage = iota
	StageASR
	StageTurn
	StageLLM
	StageTTS
	// StageASRFinal is the recognizer's final transcript, which is ASR as
	// well.
	StageASRFinal
)

// Millis is d in the milliseconds StageCompute counts: not ms(), which
// rounds to the microsecond, and a VAD frame can take less.
func Millis(d time.Duration) float64 { return float64(d) / float64(time.Millisecond) }

// Add counts d of compute on s.
func (c *StageCompute) Add(s Stage, d time.Duration) {
	v := Millis(d)
	switch s {
	case StageVAD:
		c.VAD += v
	case StageASR:
		c.ASR += v
	case StageASRFinal:
		c.ASR += v
		c.ASRFinal += v
	case StageTurn:
		c.Turn += v
	case StageLLM:
		c.LLM += v
	case StageTTS:
		c.TTS += v
	}
}

// AddFirst counts d, a reply's first compute on s (the LLM's up to its
// first token, the synthesizer's up to its first audio), as that part of
// compute-only latency; Add counts it in the stage's own.
func (c *StageCompute) AddFirst(s Stage, d time.Duration) {
	switch s {
	case StageLLM:
		c.LLMFirstToken += Millis(d)
	case StageTTS:
		c.TTSFirstAudio += Millis(d)
	}
}

// Merge adds o's stages, and takes the engine's own figures from st.
func (c *StageCompute) Merge(o StageCompute, st llm.Stats) {
	c.VAD += o.VAD
	c.ASR += o.ASR
	c.Turn += o.Turn
	c.LLM += o.LLM
	c.TTS += o.TTS
	c.ASRFinal += o.ASRFinal
	c.LLMFirstToken += o.LLMFirstToken
	c.TTSFirstAudio += o.TTSFirstAudio
	c.LLMPrefill, c.LLMDecode = ms(st.Prefill), ms(st.Decode)
}
