package moss_test

import (
	"github.com/voiceassistant/voice/pipeline"
	"github.com/voiceassistant/voice/tts/moss"
)

var _ pipeline.Synthesizer = (*moss.Synthesizer)(nil)
