//go:build mnn

package mnn

import (
	"bytes"
	"errors"
	"os"
	"os/exec"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/voiceassistant/voice/internal/childjob"
	"github.com/voiceassistant/voice/internal/derived"
)

// checkEnds has the check's child end as r says, none started, until the
// test ends.
func checkEnds(t *testing.T, r childjob.Result) {
	t.Helper()
	run := runJob
	t.Cleanup(func() { runJob = run })
	runJob = func(string, any, time.Duration) (childjob.Result, error) { return r, nil }
}

// A child that a fault ends had files that crash the engine, and so did
// one whose load and token never ended; one that a signal sent to end it
// ended (the OOM killer; Ctrl-\), or that this process's stop ended
// (Ctrl-C), did not: the advice for corrupt files would have the user
// delete a good model. How each child ends is told apart, and the stop
// wins over it, in internal/childjob (TestEnds, TestStopWins).
func TestCheckBlamesTheFilesOnlyForAFault(t *testing.T) {
	for _, tc := range []struct {
		name    string
		ended   childjob.Result
		corrupt bool
		says    string
	}{
		{"SIGSEGV", childjob.Result{End: childjob.Faulted, Signal: syscall.SIGSEGV, How: "signal: segmentation fault"}, true, "its files crash the engine (signal: segmentation fault while"},
		{"a fault in C, as Go reports it", childjob.Result{End: childjob.Faulted, Signal: syscall.SIGSEGV, How: "SIGSEGV: segmentation violation"}, true, "(SIGSEGV: segmentation violation while"},
		{"stuck", childjob.Result{End: childjob.TimedOut, How: "signal: killed"}, true, "took over 5m0s in a check"},
		{"the OOM killer", childjob.Result{End: childjob.Killed, Signal: syscall.SIGKILL, How: "signal: killed"}, false, "(signal: killed: an interrupt, a stop, or the system out of memory), not by its files; start again"},
		{"Ctrl-\\, as Go reports it", childjob.Result{End: childjob.Killed, Signal: syscall.SIGQUIT, How: "SIGQUIT: quit"}, false, "not by its files; start again"},
		{"a stop", childjob.Result{End: childjob.Stopped}, false, "interrupted while its load was checked"},
		{"an error", childjob.Result{End: childjob.Failed, Err: errors.New("mnn: no tokenizer")}, false, "mnn: no tokenizer"},
		{"a panic", childjob.Result{End: childjob.Crashed, How: "panic: a bug"}, false, "the check of its load crashed (panic: a bug)"},
		{"loaded", childjob.Result{End: childjob.Done}, false, ""},
		{"no child where this binary cannot run itself", childjob.Result{End: childjob.NotStarted}, false, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			err := checkVerdict("/models/tiny", tc.ended)
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

// The check runs in a child of this binary, which says why it did not
// load the model; a stop before it starts none.
func TestCheckInChild(t *testing.T) {
	err := checkInChild(Config{Dir: t.TempDir()})
	require.Error(t, err)
	assert.Contains(t, err.Error(), "llm.mnn")
	assert.NotErrorIs(t, err, ErrCorrupt)

	stopped := make(chan struct{})
	close(stopped)
	derived.StopWaitingOn(stopped)
	defer derived.StopWaitingOn(nil)
	err = checkInChild(Config{Dir: "/models/tiny"})
	require.Error(t, err)
	assert.Contains(t, err.Error(), "interrupted while its load was checked")
}

// VOICE_MNN_CHECK left in an environment (exported while debugging, kept
// by a service manager) made every command a check child, which failed
// with "unexpected end of JSON input". No variable makes a check child
// now (internal/childjob): this binary runs as asked, whatever it holds.
func TestLeftCheckVariableIsIgnored(t *testing.T) {
	if os.Getenv("VOICE_TEST_LEFT_CHECK") != "" {
		assert.False(t, checking)
		return
	}
	for name, value := range map[string]string{
		"a folder, as once":  "/models/tiny",
		"empty":              "",
		"another's request":  `{"parent": 1, "dir": "/models/tiny"}`,
		"not a JSON request": `{"parent": "me"`,
	} {
		stdout, _ := again(t, "VOICE_TEST_LEFT_CHECK=1", "VOICE_MNN_CHECK="+value)
		assert.Contains(t, stdout, "--- PASS: TestLeftCheckVariableIsIgnored", name)
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
