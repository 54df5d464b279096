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
}

// Stage names a field of StageCompute that compute is added to.
type Stage int

const (
	StageVAD Stage = iota
	StageASR
	StageTurn
	StageLLM
	StageTTS
)

// Add counts d of compute on s.
func (c *StageCompute) Add(s Stage, d time.Duration) {
	// Not ms(): a VAD frame can take less than the microsecond it rounds to.
	v := float64(d) / float64(time.Millisecond)
	switch s {
	case StageVAD:
		c.VAD += v
	case StageASR:
		c.ASR += v
	case StageTurn:
		c.Turn += v
	case StageLLM:
		c.LLM += v
	case StageTTS:
		c.TTS += v
	}
}

// Merge adds o's stages, and takes the engine's own figures from st.
func (c *StageCompute) Merge(o StageCompute, st llm.Stats) {
	c.VAD += o.VAD
	c.ASR += o.ASR
	c.Turn += o.Turn
	c.LLM += o.LLM
	c.TTS += o.TTS
	c.LLMPrefill, c.LLMDecode = ms(st.Prefill), ms(st.Decode)
}
