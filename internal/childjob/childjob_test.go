package childjob

import (
	"cmp"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"runtime/debug"
	"runtime/metrics"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.uber.org/goleak"

	"github.com/voiceassistant/voice/internal/derived"
)

// No test leaves a goroutine running: Run's readers and waiters end with
// the child.
func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// testRequest asks the test job to do what a job's child may: Do, with
// File where it writes its pid once at work.
type testRequest struct {
	Do   string
	File string
}

// The test job, served by this test binary as a package serves its own.
func init() {
	Serve("test", func(req testRequest) (string, error) {
		if req.File != "" {
			_ = os.WriteFile(req.File, []byte(strconv.Itoa(os.Getpid())), 0o644)
		}
		switch req.Do {
		case "fail":
			return "", errors.New("a job's error, as a full disk gives")
		case "abort":
			_ = syscall.Kill(os.Getpid(), syscall.SIGABRT)
		case "quit":
			_ = syscall.Kill(os.Getpid(), syscall.SIGQUIT)
		case "panic":
			panic("a job's bug")
		case "stop signals":
			// What stops the parent reaches the child too; the parent
			// ends it.
			for _, sig := range []syscall.Signal{syscall.SIGINT, syscall.SIGTERM, syscall.SIGHUP} {
				_ = syscall.Kill(os.Getpid(), sig)
			}
			time.Sleep(100 * time.Millisecond) // a signal not ignored would end it meanwhile
			return "still here", nil
		case "collector":
			settings := []metrics.Sample{{Name: "/gc/gogc:percent"}, {Name: "/gc/gomemlimit:bytes"}}
			metrics.Read(settings)
			return fmt.Sprintf("GOGC %d, GOMEMLIMIT %d", settings[0].Value.Uint64(), settings[1].Value.Uint64()), nil
		case "oom score":
			score, err := os.ReadFile("/proc/self/oom_score_adj")
			return strings.TrimSpace(string(score)), err
		case "hang":
			time.Sleep(time.Hour)
		}
		return "answered " + req.Do, nil
	})
}

// script makes Run start a shell script instead of this binary, until the
// test ends.
func script(t *testing.T, body string) {
	t.Helper()
	path := filepath.Join(t.TempDir(), "child")
	require.NoError(t, os.WriteFile(path, []byte("#!/bin/sh\n"+body+"\n"), 0o755))
	executable = func() (string, error) { return path, nil }
	t.Cleanup(func() { executable = os.Executable })
}

// Every way a child ends is told apart once: an answer; the job's error;
// a fault, as the kernel reports it (a C library's crash under a shell
// here) or as the Go runtime does (a fault in C code, exit status 2); a
// signal sent to end a process (the OOM killer's SIGKILL); a Go panic;
// a child past its time; and no child, where this program cannot run
// itself (an emulator without binfmt).
func TestEnds(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skip("the OOM score and the kernel's signals are Linux's")
	}
	for _, tc := range []struct {
		name, do, script string
		timeout          time.Duration
		end              End
		signal           syscall.Signal
		says             string // in How, or Answer, or Err
	}{
		{name: "answered", do: "this", end: Done, says: "answered this"},
		{name: "the job's error", do: "fail", end: Failed, says: "a job's error, as a full disk gives"},
		{name: "an abort, as Go reports it", do: "abort", end: Faulted, signal: syscall.SIGABRT, says: "SIGABRT: abort"},
		{name: "a panic", do: "panic", end: Crashed, says: "panic: a job's bug"},
		{name: "Ctrl-\\, as Go reports it", do: "quit", end: Killed, signal: syscall.SIGQUIT, says: "SIGQUIT: quit"},
		{name: "the parent's stop signals are the parent's", do: "stop signals", end: Done, says: "still here"},
		{name: "the kernel's first choice under memory pressure", do: "oom score", end: Done, says: "1000"},
		{name: "the parent's collector settings", do: "collector", end: Done, says: "GOGC 37, GOMEMLIMIT 123456789"},
		{name: "past its time", do: "hang", timeout: 200 * time.Millisecond, end: TimedOut, says: "signal: killed"},
		{name: "SIGSEGV", script: "kill -SEGV $$", end: Faulted, signal: syscall.SIGSEGV, says: "signal: segmentation fault"},
		{name: "SIGBUS", script: "kill -BUS $$", end: Faulted, signal: syscall.SIGBUS, says: "signal: bus error"},
		{name: "a fault in C, as Go reports it", script: "echo 'SIGSEGV: segmentation violation' >&2; echo 'PC=0x47e520 m=0 sigcode=1 addr=0x0' >&2; exit 2",
			end: Faulted, signal: syscall.SIGSEGV, says: "SIGSEGV: segmentation violation"},
		{name: "a fatal error from a signal", script: "echo 'fatal error: unexpected signal during runtime execution' >&2; echo '[signal SIGBUS: bus error code=0x2 addr=0x0 pc=0x0]' >&2; exit 2",
			end: Faulted, signal: syscall.SIGBUS, says: "[signal SIGBUS: bus error"},
		{name: "the OOM killer", script: "kill -KILL $$", end: Killed, signal: syscall.SIGKILL, says: "signal: killed"},
		{name: "SIGTERM", script: "kill -TERM $$", end: Killed, signal: syscall.SIGTERM, says: "signal: terminated"},
		{name: "an exit status no job gives", script: "exit 3", end: Crashed, says: "exit status 3"},
		{name: "the job's error, its last line", script: "echo 'a log line' >&2; echo 'mnn: no tokenizer' >&2; exit 1", end: Failed, says: "mnn: no tokenizer"},
		{name: "not a program this system runs", script: "", end: NotStarted, says: "exec format error"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if tc.script != "" {
				script(t, tc.script)
			}
			if tc.end == NotStarted {
				path := filepath.Join(t.TempDir(), "arm64-binary")
				require.NoError(t, os.WriteFile(path, []byte{0x7f, 'E', 'L', 'F', 0, 0, 0, 0}, 0o755))
				executable = func() (string, error) { return path, nil }
				defer func() { executable = os.Executable }()
			}
			defer debug.SetGCPercent(debug.SetGCPercent(37))
			defer debug.SetMemoryLimit(debug.SetMemoryLimit(123456789))
			r, err := Run("test", testRequest{Do: tc.do}, cmp.Or(tc.timeout, time.Minute))
			require.NoError(t, err)
			require.Equal(t, tc.end, r.End, "%+v", r)
			assert.Equal(t, tc.signal, r.Signal)
			said := r.How + "|" + r.Answer
			if r.Err != nil {
				said += "|" + r.Err.Error()
			}
			assert.Contains(t, said, tc.says)
		})
	}
}

// A stop of this process (Ctrl-C, derived.Stopping) wins: before the
// child starts, none does; while it works, it is ended and the stop is
// the result; where the child's end and the stop have both come, the stop
// is the result, whichever a select would take (issue 70, item 12: a
// Ctrl-C during MNN's check was reported as corrupt files).
func TestStopWins(t *testing.T) {
	started := filepath.Join(t.TempDir(), "started")
	stop := make(chan struct{})
	derived.StopWaitingOn(stop)
	defer derived.StopWaitingOn(nil)
	go func() {
		for {
			if _, err := os.Stat(started); err == nil {
				close(stop)
				return
			}
			time.Sleep(10 * time.Millisecond)
		}
	}()
	r, err := Run("test", testRequest{Do: "hang", File: started}, time.Minute)
	require.NoError(t, err)
	assert.Equal(t, Stopped, r.End)
	pid, err := os.ReadFile(started)
	require.NoError(t, err)
	assert.False(t, alive(t, string(pid)), "the child outlived the stop")

	require.NoError(t, os.Remove(started))
	r, err = Run("test", testRequest{Do: "this", File: started}, time.Minute)
	require.NoError(t, err)
	assert.Equal(t, Stopped, r.End)
	assert.NoFileExists(t, started, "a child started after the stop")

	for range 100 {
		waited := make(chan struct{})
		close(waited)
		assert.True(t, waitFor(waited, stop, func() {}))
	}
}

// A terminal's Ctrl-C goes to its foreground process group. The child has
// a group of its own, so the signal reaches the parent alone, which ends
// the child (TestStopWins); in the parent's group it also reached the
// child before the child had set its signals aside, and that end read as
// a child killed (issue 70, item 12: 1 check in 49).
func TestChildHasAProcessGroupOfItsOwn(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skip("the child has a group of its own where it dies with its parent: on Linux")
	}
	started := filepath.Join(t.TempDir(), "started")
	stop := make(chan struct{})
	derived.StopWaitingOn(stop)
	defer derived.StopWaitingOn(nil)
	group := make(chan int, 1)
	go func() {
		defer close(stop)
		for {
			if pid, err := os.ReadFile(started); err == nil && len(pid) > 0 {
				n, _ := strconv.Atoi(strings.TrimSpace(string(pid)))
				g, _ := syscall.Getpgid(n)
				group <- g
				return
			}
			time.Sleep(10 * time.Millisecond)
		}
	}()
	r, err := Run("test", testRequest{Do: "hang", File: started}, time.Minute)
	require.NoError(t, err)
	assert.Equal(t, Stopped, r.End)
	assert.NotEqual(t, syscall.Getpgrp(), <-group, "the child is in its parent's process group")
}

// alive tells whether the process pid runs (a zombie does not).
func alive(t *testing.T, pid string) bool {
	t.Helper()
	stat, err := os.ReadFile("/proc/" + pid + "/stat")
	if errors.Is(err, os.ErrNotExist) {
		return false
	}
	require.NoError(t, err)
	_, after, _ := strings.Cut(string(stat), ") ")
	return !strings.HasPrefix(after, "Z")
}

// The child dies with its parent: an agent killed (kill -9, the OOM
// killer) while a child works leaves no child working for nobody.
func TestChildDiesWithItsParent(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skip("the kernel ends a child with its parent on Linux")
	}
	if file := os.Getenv("CHILDJOB_TEST_PARENT"); file != "" {
		_, _ = Run("test", testRequest{Do: "hang", File: file}, time.Minute)
		return
	}
	started := filepath.Join(t.TempDir(), "started")
	parent := exec.Command(os.Args[0], "-test.run=^"+t.Name()+"$")
	parent.Env = append(os.Environ(), "CHILDJOB_TEST_PARENT="+started)
	require.NoError(t, parent.Start())
	var pid []byte
	require.Eventually(t, func() bool {
		var err error
		pid, err = os.ReadFile(started)
		return err == nil && len(pid) > 0
	}, time.Minute, 10*time.Millisecond, "the child never started")
	require.NoError(t, parent.Process.Kill())
	_ = parent.Wait()
	assert.Eventually(t, func() bool { return !alive(t, string(pid)) }, time.Minute, 10*time.Millisecond, "the child outlived its parent")
}

// A command line that names a job as a parent does, run by anyone else
// (typed, or copied from ps), is refused in one line; and no environment
// variable makes a child: those of the two mechanisms before this one
// (issue 70, item 15: VOICE_MNN_CHECK left exported made every command a
// check child, which failed) change nothing.
func TestOnlyAParentStartsAChild(t *testing.T) {
	me := strconv.Itoa(os.Getpid())
	for _, tc := range []struct {
		parent string
		stdin  io.Reader // nil: /dev/null
	}{
		{"1", strings.NewReader(`{"Do": "this"}`)},
		{"", strings.NewReader(`{"Do": "this"}`)},
		{"not a pid", strings.NewReader(`{"Do": "this"}`)},
		{strconv.Itoa(os.Getpid() + 1), strings.NewReader(`{"Do": "this"}`)},
		{me, nil}, // the parent's pid, as ps shows it, but no request
	} {
		cmd := exec.Command(os.Args[0], jobArg+"test:"+tc.parent)
		cmd.Stdin = tc.stdin
		out, err := cmd.CombinedOutput()
		var exit *exec.ExitError
		require.ErrorAs(t, err, &exit, "parent %q: %s", tc.parent, out)
		assert.Equal(t, 2, exit.ExitCode())
		assert.Contains(t, string(out), "that argument is for the child processes the program starts itself", tc.parent)
	}
	cmd := exec.Command(os.Args[0], "-test.run=^TestWaitForTheStop$")
	cmd.Stdin = strings.NewReader(`{"Do": "fail"}`)
	cmd.Env = append(os.Environ(), "VOICE_ORT_COPY="+me, "VOICE_MNN_CHECK="+fmt.Sprintf(`{"parent": %s}`, me))
	out, err := cmd.CombinedOutput()
	require.NoError(t, err, "%s", out)
	assert.Contains(t, string(out), "PASS")
}

// waitFor ends the child on the stop, and waits for it.
func TestWaitForTheStop(t *testing.T) {
	stop, waited := make(chan struct{}), make(chan struct{})
	close(stop)
	assert.True(t, waitFor(waited, stop, func() { close(waited) }))
	assert.False(t, waitFor(waited, nil, func() {}))
}

// What a child writes on stderr is kept at its start and its end, where
// the runtime's report and the job's error are, however much it writes.
func TestReportIsBounded(t *testing.T) {
	var r report
	fmt.Fprintln(&r, "SIGSEGV: segmentation violation")
	for range 100_000 {
		fmt.Fprintln(&r, "a library's line, again and again")
	}
	fmt.Fprint(&r, "the last line")
	assert.Less(t, len(r.String()), 4*reportBytes)
	assert.Equal(t, "SIGSEGV: segmentation violation", runtimeReport(r.String()))
	assert.Equal(t, "the last line", lastLine(r.String()))
}
