package smartturn_test

import (
	"github.com/voiceassistant/voice/pipeline"
	"github.com/voiceassistant/voice/turn/smartturn"
)

var _ pipeline.TurnDetector = (*smartturn.Model)(nil)
