package wiring

import (
	"testing"

	"go.uber.org/goleak"

	"github.com/voiceassistant/voice/internal/testenv"
)

// No test leaves a goroutine running, or reads the user's model cache.
func TestMain(m *testing.M) { goleak.VerifyTestMain(testenv.Isolated(m)) }
