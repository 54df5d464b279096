package tools_test

import (
	"testing"

	"go.uber.org/goleak"
)

// No test leaves a goroutine running: a call of a host's tool waits on
// the host, and must stop waiting when it is answered, times out or is
// cancelled.
func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }
