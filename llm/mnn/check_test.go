//go:build mnn

package mnn

import (
	"bytes"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/voiceassistant/voice/internal/derived"
)

// checkWith makes checkInChild run script (sh) instead of this binary,
// until the test ends.
func checkWith(t *testing.T, script string) {
	t.Helper()
	path := filepath.Join(t.TempDir(), "check")
	require.NoError(t, os.WriteFile(path, []byte("#!/bin/sh\n"+script+"\n"), 0o755))
	self := checkProgram
	t.Cleanup(func() { checkProgram = self })
	checkProgram = func() (string, error) { return path, nil }
}

// A child that a fault ends had files that crash the engine; one that a
// signal sent to end it ends (Ctrl-C reaches the child first, as often as
// not, for it is in the terminal's process group; a service manager's
// SIGTERM; the OOM killer) did not: the advice for corrupt files would
// have the user delete a good model. A stop of this process wins over
// whatever the child died of.
func TestCheckBlamesTheFilesOnlyForAFault(t *testing.T) {
	stopped := make(chan struct{})
	close(stopped)
	for _, tc := range []struct {
		name, script string
		stop         bool
		corrupt      bool
		says         string
	}{
		{"SIGSEGV", "kill -SEGV $$", false, true, "its files crash the engine (signal: segmentation fault"},
		{"SIGBUS", "kill -BUS $$", false, true, "its files crash the engine (signal: bus error"},
		{"a fault in C, as Go reports it", "echo 'SIGSEGV: segmentation violation' >&2; exit 2", false, true, "(SIGSEGV (segmentation violation) while"},
		{"Ctrl-C in the child first", "kill -INT $$", false, false, "), not by its files; start again"},
		{"SIGTERM", "kill -TERM $$", false, false, "), not by its files; start again"},
		{"the OOM killer", "kill -KILL $$", false, false, "), not by its files; start again"},
		{"Ctrl-\\, as Go reports it", "echo 'SIGQUIT: quit' >&2; exit 2", false, false, "), not by its files; start again"},
		{"a stop, and a fault", "kill -SEGV $$", true, false, "interrupted while its load was checked"},
		{"an error", "echo 'mnn: no tokenizer' >&2; exit 1", false, false, "mnn: no tokenizer"},
		{"loaded", "exit 0", false, false, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			checkWith(t, tc.script)
			if tc.stop {
				derived.StopWaitingOn(stopped)
				defer derived.StopWaitingOn(nil)
			}
			err := checkInChild(Config{Dir: "/models/tiny"})
			if tc.says == "" {
				require.NoError(t, err)
				return
			}
			require.Error(t, err)
			assert.Contains(t, err.Error(), tc.says)
			assert.Equal(t, tc.corrupt, errors.Is(err, ErrCorrupt), "corrupt: %v", err)
		})
	}
}

// The verdict of a stop does not depend on which of the stop and the
// child's end this process saw first.
func TestCheckVerdictStopWins(t *testing.T) {
	checkWith(t, "kill -SEGV $$")
	script, err := checkProgram()
	require.NoError(t, err)
	crashed := exec.Command(script).Run()
	require.Error(t, crashed)
	err = checkVerdict("/models/tiny", crashed, "", true, false)
	assert.NotErrorIs(t, err, ErrCorrupt)
	assert.Contains(t, err.Error(), "interrupted")
	assert.ErrorIs(t, checkVerdict("/models/tiny", crashed, "", false, false), ErrCorrupt)
}

// VOICE_MNN_CHECK left in an environment (exported while debugging, kept
// by a service manager) made every command a check child, which failed
// with "unexpected end of JSON input". Only a child of the process that
// set it is one; anyone else says it ignores it, and runs as asked, and
// what it starts does not see it.
func TestLeftCheckVariableIsIgnored(t *testing.T) {
	if os.Getenv("VOICE_TEST_LEFT_CHECK") != "" {
		_, set := os.LookupEnv(envCheck)
		assert.False(t, set, "unset for what this process starts")
		assert.False(t, checking)
		return
	}
	for name, value := range map[string]string{
		"a folder, as once":  "/models/tiny",
		"empty":              "",
		"another's request":  `{"parent": 1, "dir": "/models/tiny"}`,
		"not a JSON request": `{"parent": "me"`,
	} {
		stdout, stderr := again(t, "VOICE_TEST_LEFT_CHECK=1", envCheck+"="+value)
		assert.Contains(t, stdout, "--- PASS: TestLeftCheckVariableIsIgnored", name)
		assert.Contains(t, stderr, envCheck+" in the environment is ignored", name)
	}
}

// again runs the test t again in a child process of this binary, with env
// added, and returns what the child wrote; t fails if the child does.
func again(t *testing.T, env ...string) (stdout, stderr string) {
	t.Helper()
	cmd := exec.Command(os.Args[0], "-test.run=^"+t.Name()+"$", "-test.v")
	cmd.Env = append(os.Environ(), env...)
	var out, errs bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errs
	require.NoError(t, cmd.Run(), "%s%s", &out, &errs)
	return out.String(), errs.String()
}
