//go:build leakcheck

package main

import (
	"fmt"
	"os"

	"go.uber.org/goleak"
)

// envLeakCheck, when set, makes the agent fail at exit if any goroutine
// besides the runtime's own is still running once the command returned:
// the end-to-end shutdown tests use it to prove that a signal mid-reply
// stops every stage and the device, not just the process. Only test builds
// (-tags leakcheck) have it; the shipped binary carries no leak checker.
const envLeakCheck = "VOICE_AGENT_LEAKCHECK"

// checkLeaks reports leftover goroutines if envLeakCheck asks for it.
func checkLeaks() error {
	if os.Getenv(envLeakCheck) == "" {
		return nil
	}
	if err := goleak.Find(); err != nil {
		return fmt.Errorf("goroutines left at exit: %w", err)
	}
	return nil
}
