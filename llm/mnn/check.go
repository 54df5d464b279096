//go:build mnn

package mnn

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"time"

	"github.com/voiceassistant/voice/internal/derived"
)

// MNN checks none of an export's files: a corrupt or cut-short
// llm.mnn.weight (a page a mirror sent, a download cut at a matching
// length) crashes the engine with SIGSEGV at the first prefill, at every
// start, a crash loop under a service manager. So the first load of an
// export's content, the one that makes its mapped weights, runs in a
// child process first (this binary again, with envCheck set): the child
// loads the model, runs a token and exits; only if it does is the pool
// sealed and the model loaded here. Later starts map the sealed pool and
// pay nothing.
// The child loads the model as its parent would (the config file, the
// settings over it, the threads): MNN lays out the pool by them.
const (
	envCheck         = "VOICE_MNN_CHECK"
	envCheckConfig   = "VOICE_MNN_CHECK_CONFIG"
	envCheckSettings = "VOICE_MNN_CHECK_SETTINGS"
	envCheckThreads  = "VOICE_MNN_CHECK_THREADS"
)

// checkTimeout bounds the child: a load and a token take seconds even on
// a small device, and the pool's making a minute at most.
const checkTimeout = 5 * time.Minute

// The child's side: it loads the model its parent names, and exits.
func init() {
	dir := os.Getenv(envCheck)
	if dir == "" {
		return
	}
	cfg := Config{Dir: dir, ConfigFile: os.Getenv(envCheckConfig), MaxNewTokens: 1}
	cfg.Threads, _ = strconv.Atoi(os.Getenv(envCheckThreads))
	err := json.Unmarshal([]byte(os.Getenv(envCheckSettings)), &cfg.Settings)
	var m *Model
	if err == nil {
		m, err = Open(cfg)
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	_ = m.Close()
	os.Exit(0)
}

// inCheck tells whether this process is the child of checkInChild.
func inCheck() bool { return os.Getenv(envCheck) != "" }

// checkInChild loads the model of cfg in a child process, which makes and
// seals its pool, and returns an error that says what to do if the child
// does not load it.
func checkInChild(cfg Config) error {
	self, err := os.Executable()
	if err != nil {
		slog.Debug("mnn: the model's first load is not checked in a child", "err", err)
		return nil
	}
	ctx, cancel := context.WithTimeout(context.Background(), checkTimeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, self)
	settings, err := json.Marshal(cfg.Settings)
	if err != nil {
		return fmt.Errorf("mnn: settings: %w", err)
	}
	cmd.Env = append(os.Environ(), envCheck+"="+cfg.Dir, envCheckConfig+"="+cfg.ConfigFile,
		envCheckSettings+"="+string(settings), envCheckThreads+"="+strconv.Itoa(cfg.Threads))
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	if err := cmd.Start(); err != nil {
		// This binary cannot run itself (under an emulator without
		// binfmt, as the arm64 tests run it): load it here, as before.
		slog.Debug("mnn: the model's first load is not checked in a child", "err", err)
		return nil
	}
	waited := make(chan error, 1)
	go func() { waited <- cmd.Wait() }()
	select {
	case err = <-waited:
	case <-derived.Stopping():
		// Ctrl-C ends the check too: the pool the child made is not
		// sealed, so it is made again at the next start.
		cancel()
		<-waited
		return fmt.Errorf("mnn: %s: interrupted while its first load was checked", cfg.Dir)
	}
	if err == nil {
		return nil
	}
	if ctx.Err() != nil {
		return fmt.Errorf("mnn: %s: loading it took over %v in a check; the files may be damaged: remove the folder and pull the model again", cfg.Dir, checkTimeout)
	}
	if crash := crashed(err, stderr.String()); crash != "" {
		return fmt.Errorf("mnn: %s: its files crash the engine (%s while loading it and running a token): one is corrupt or cut short; remove the folder and pull the model again (with --mirror, from another mirror if it repeats)", cfg.Dir, crash)
	}
	lines := strings.Split(strings.TrimSpace(stderr.String()), "\n")
	if line := strings.TrimSpace(lines[len(lines)-1]); line != "" {
		return errors.New(line)
	}
	return fmt.Errorf("mnn: %s: the model did not load in a check (%w)", cfg.Dir, err)
}

// crashed names the signal that ended the child, "" if none did: the
// kernel's, or the one the Go runtime reports on its first line when the
// fault was in C ("SIGSEGV: segmentation violation", then exit status 2).
func crashed(err error, stderr string) string {
	var exit *exec.ExitError
	if errors.As(err, &exit) && !exit.Exited() {
		return exit.ProcessState.String()
	}
	for _, line := range strings.Split(stderr, "\n") {
		if sig, what, ok := strings.Cut(line, ": "); ok && strings.HasPrefix(sig, "SIG") && strings.ToUpper(sig) == sig && !strings.Contains(sig, " ") {
			return sig + " (" + what + ")"
		}
	}
	return ""
}
