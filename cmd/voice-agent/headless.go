package main

import (
	"fmt"
	"io"
	"log/slog"
	"os"

	"go.uber.org/goleak"
)

// envLeakCheck, when set, makes the agent fail at exit if any goroutine
// besides the runtime's own is still running once the command returned:
// the end-to-end shutdown test uses it to prove that a signal mid-reply
// stops every stage and the device, not just the process.
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

// newLogger makes the structured logger on w: logfmt-style text for a
// console or journald, or JSON lines for a log collector.
func newLogger(w io.Writer, level, format string) (*slog.Logger, error) {
	var lv slog.Level
	if err := lv.UnmarshalText([]byte(level)); err != nil {
		return nil, fmt.Errorf("log level: %w", err)
	}
	opts := &slog.HandlerOptions{Level: lv}
	switch format {
	case "text", "":
		return slog.New(slog.NewTextHandler(w, opts)), nil
	case "json":
		return slog.New(slog.NewJSONHandler(w, opts)), nil
	default:
		return nil, fmt.Errorf("log format %q: want text or json", format)
	}
}
