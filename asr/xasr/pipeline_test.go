package xasr_test

import (
	"github.com/voiceassistant/voice/asr/xasr"
	"github.com/voiceassistant/voice/pipeline"
)

// The recognizer is the pipeline's ASR stage. Checked from the external
// test package: package xasr must not import pipeline.
var _ pipeline.ASR = (*xasr.Recognizer)(nil)
