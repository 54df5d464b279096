package tools

import (
	"testing"

	"go.uber.org/goleak"
)

// No test leaves a goroutine running: every timer ends with Close.
func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }
