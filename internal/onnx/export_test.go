package onnx

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"syscall"
	"time"

	"github.com/voiceassistant/voice/internal/childjob"
)

// SetMinPrepacked lowers the prepacked data a copy must hold, so that the
// tiny test models get one; it returns the setting to restore.
func SetMinPrepacked(n int64) (restore func()) {
	was := minPrepacked
	minPrepacked = n
	return func() { minPrepacked = was }
}

// KeepSavedLayout has copies keep the layout ONNX Runtime saved them in,
// their blobs where it wrote them; it returns the setting to restore.
// The copies are made in this process, where the setting holds.
func KeepSavedLayout() (restore func()) {
	layOut = func(string) (int64, error) { return minPrepacked, nil }
	here := MakeCopiesHere()
	return func() { layOut = relayout; here() }
}

// MakeCopiesHere has copies made in this process, as where it cannot
// start itself; it returns the setting to restore.
func MakeCopiesHere() (restore func()) {
	runJob = func(string, any, time.Duration) (childjob.Result, error) {
		return childjob.Result{End: childjob.NotStarted, Err: errors.New("a test makes copies in its own process")}, nil
	}
	return func() { runJob = childjob.Run }
}

// SetCopyTimeout bounds the child that makes a copy; it returns the
// setting to restore.
func SetCopyTimeout(d time.Duration) (restore func()) {
	was := copyTimeout
	copyTimeout = d
	return func() { copyTimeout = was }
}

// EnvChildFault names, for a test's child process, the fault it makes
// before it makes the copy: ChildFaults' keys. EnvChildStarted names a
// file the "hang" fault creates once the child is at work.
const (
	EnvChildFault   = "ONNX_TEST_CHILD_FAULT"
	EnvChildStarted = "ONNX_TEST_CHILD_STARTED"
)

// ChildFaults are the faults a test's child can make: killed as the OOM
// killer does, crashed (a C library's abort), an error reported, or
// never done.
var ChildFaults = map[string]func(){
	"kill":  func() { _ = syscall.Kill(os.Getpid(), syscall.SIGKILL) },
	"abort": func() { _ = syscall.Kill(os.Getpid(), syscall.SIGABRT) },
	"fail": func() {
		fmt.Fprintln(os.Stderr, "onnx: a test's error, as a full disk gives")
		os.Exit(1)
	},
	"hang": func() {
		_ = os.WriteFile(os.Getenv(EnvChildStarted), nil, 0o644)
		time.Sleep(time.Hour)
	},
}

// The fault is set while the package's variables are initialized, before
// the package's init serves the parent's request.
var _ = func() bool {
	if fault, ok := ChildFaults[os.Getenv(EnvChildFault)]; ok {
		beforeCopy = fault
	}
	return true
}()

// ErrStopped is the error of a load interrupted while its copy was made.
var ErrStopped = errStopped

// PrepackedOffsets are where the copy in dir has its prepacked blobs.
func PrepackedOffsets(dir string) ([]int64, error) {
	model, err := os.ReadFile(filepath.Join(dir, mappedModel))
	if err != nil {
		return nil, err
	}
	var offsets []int64
	_, err = eachExternal(model, func(ref *externalRef) error {
		for _, r := range ref.regions() {
			if r.prepacked {
				offsets = append(offsets, r.offset)
			}
		}
		return nil
	})
	return offsets, err
}

// SetFreeBytes has copies see f's free space, for a full disk.
func SetFreeBytes(f func(string) (uint64, error)) (restore func()) {
	old := freeBytes
	freeBytes = f
	return func() { freeBytes = old }
}
