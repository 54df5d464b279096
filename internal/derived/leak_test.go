package derived

import (
	"testing"

	"go.uber.org/goleak"
)

// No test leaves a goroutine running (a file's chunks are summed on
// goroutines of their own).
func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }
