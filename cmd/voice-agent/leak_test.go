package main

import (
	"testing"

	"go.uber.org/goleak"

	"github.com/voiceassistant/voice/internal/testenv"
)

// No test leaves a goroutine running, or reads the user's model cache or
// config.
func TestMain(m *testing.M) { goleak.VerifyTestMain(testenv.Isolated(m)) }
