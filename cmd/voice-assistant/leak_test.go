package main

import (
	"testing"

	"go.uber.org/goleak"

	"github.com/voiceassistant/voice/internal/testenv"
)

// No test leaves a goroutine running, fyne's own aside: its desktop
// driver starts an event queue when the package loads. None reads the
// user's model cache or config.
func TestMain(m *testing.M) {
	goleak.VerifyTestMain(testenv.Isolated(m), goleak.IgnoreTopFunction("fyne.io/fyne/v2/internal/async.(*UnboundedChan[...]).processing"))
}
