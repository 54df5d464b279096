//go:build mnn && linux

package mnn

/*
#include <stdio.h>

// voice_llm_print_into makes the C library's stdout, which MNN prints
// to, a stream of its own on fd, line-buffered as a terminal's (a pipe's
// would hold a load's error for a later drain, cut in the middle).
// Descriptor 1 stays the process's stdout. glibc's stdout is a variable
// the program may set; elsewhere it returns -1.
static int voice_llm_print_into(int fd) {
#ifdef __GLIBC__
	FILE *f = fdopen(fd, "w");
	if (f == NULL) {
		return -1;
	}
	setvbuf(f, NULL, _IOLBF, 0);
	fflush(stdout);
	stdout = f;
	return 0;
#else
	return -1;
#endif
}
*/
import "C"

import (
	"bytes"
	"errors"
	"log/slog"
	"os"
	"sync"
	"syscall"
)

// engineOutput is the read end of the pipe the engine prints into (-1
// before keepStdoutClean, or where it could not be made).
var engineOutput = struct {
	sync.Mutex
	fd   int
	once sync.Once
}{fd: -1}

// keepStdoutClean takes what the engine prints off the agent's output.
// MNN logs with printf, which would mix its messages into the JSON lines
// the agent writes on stdout, and, sent to stderr, flooded it: its
// tokenizer prints a line for every byte it cannot encode, 175,476 lines
// for one chat in odd Unicode. So the C library's stdout becomes a pipe
// that drainEngineOutput reads into the log at debug level. Both its
// ends are non-blocking: what the engine prints past the pipe's 64 KiB
// between two drains is dropped, never waited on. It happens once,
// before the first engine is created.
func keepStdoutClean() {
	engineOutput.once.Do(func() {
		var pipe [2]int
		if err := syscall.Pipe2(pipe[:], syscall.O_CLOEXEC|syscall.O_NONBLOCK); err != nil {
			stdoutToStderr()
			return
		}
		if C.voice_llm_print_into(C.int(pipe[1])) != 0 {
			syscall.Close(pipe[0])
			syscall.Close(pipe[1])
			stdoutToStderr()
			return
		}
		engineOutput.fd = pipe[0]
	})
}

// stdoutToStderr keeps what the engine prints off stdout where it cannot
// go to the log: the process's stdout moves to a new descriptor that
// os.Stdout follows, and descriptor 1 becomes a copy of stderr.
func stdoutToStderr() {
	fd, err := syscall.Dup(1)
	if err != nil {
		return
	}
	syscall.CloseOnExec(fd)
	if err := syscall.Dup3(2, 1, 0); err != nil {
		syscall.Close(fd)
		return
	}
	os.Stdout = os.NewFile(uintptr(fd), "/dev/stdout")
}

// What a drain reads and logs at most: the lines the engine printed are
// useful at debug level (why a file did not load), but not a line a byte
// of a long text, nor a line of many KiB.
const (
	maxDrain      = 256 << 10
	engineLines   = 8
	engineLineLen = 512
)

// drainEngineOutput logs what the engine printed since the last drain.
func drainEngineOutput() {
	engineOutput.Lock()
	defer engineOutput.Unlock()
	if engineOutput.fd < 0 {
		return
	}
	var printed []byte
	buf := make([]byte, 16<<10)
	// What the pipe holds now, and no more than a few times that: an
	// engine that prints on meanwhile is read at the next drain.
	for len(printed) < maxDrain {
		n, err := syscall.Read(engineOutput.fd, buf)
		if errors.Is(err, syscall.EINTR) {
			continue
		}
		if n <= 0 {
			break
		}
		printed = append(printed, buf[:n]...)
	}
	logEngineOutput(printed)
}

// logEngineOutput logs, at debug level, the first engineLines lines of
// printed, and how many more there were.
func logEngineOutput(printed []byte) {
	if len(printed) == 0 {
		return
	}
	lines := bytes.Split(bytes.TrimSuffix(printed, []byte("\n")), []byte("\n"))
	for _, line := range lines[:min(len(lines), engineLines)] {
		slog.Debug("mnn: the engine printed", "line", string(line[:min(len(line), engineLineLen)]))
	}
	if more := len(lines) - engineLines; more > 0 {
		slog.Debug("mnn: the engine printed more lines, not logged", "lines", more)
	}
}
