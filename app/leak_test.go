package app

import (
	"os"
	"testing"

	"go.uber.org/goleak"

	"github.com/voiceassistant/voice/internal/testenv"
)

// No test leaves a goroutine running, and none reads the user's model
// cache or settings.
func TestMain(m *testing.M) {
	if os.Getenv(fontChildEnv) != "" {
		// TestChineseBubble's child, started from an isolated run, must
		// have no cache directory at all.
		goleak.VerifyTestMain(m)
		return
	}
	goleak.VerifyTestMain(testenv.Isolated(m))
}
