package tools

import (
	"testing"

	"go.uber.org/goleak"
)

// No test leaves a goroutine running: every timer ends with Close, and a
// call of a host's tool stops waiting on the host when it is answered,
// times out or is cancelled.
func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }
