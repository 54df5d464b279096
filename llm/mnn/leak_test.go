package mnn

import (
	"testing"

	"go.uber.org/goleak"

	"github.com/voiceassistant/voice/internal/testenv"
)

// No test leaves a goroutine running, and none writes the mapped weights
// it derives (internal/derived) into the user's cache.
func TestMain(m *testing.M) { goleak.VerifyTestMain(testenv.Isolated(m)) }
