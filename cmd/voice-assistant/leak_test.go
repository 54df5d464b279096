package main

import (
	"testing"

	"go.uber.org/goleak"
)

// No test leaves a goroutine running, fyne's own aside: its desktop
// driver starts an event queue when the package loads.
func TestMain(m *testing.M) {
	goleak.VerifyTestMain(m, goleak.IgnoreTopFunction("fyne.io/fyne/v2/internal/async.(*UnboundedChan[...]).processing"))
}
