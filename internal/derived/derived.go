// Package derived keeps the files an engine derives from a model (MNN's
// rearranged weights, ONNX Runtime's optimized graph with its prepacked
// weights) in the user's cache, so that later loads map them from disk
// instead of deriving them again onto the heap. Each model and engine
// version gets a directory of its own, named by the sha256 of the model's
// files, the engine's version and the machine's CPU: a changed model, a
// new engine or another CPU never meets a stale copy.
package derived

import (
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/voiceassistant/voice/internal/modelstore"
)

// Root is where the derived files live: $XDG_CACHE_HOME/voice-agent/derived.
func Root() (string, error) {
	dir, err := os.UserCacheDir()
	if err != nil {
		return "", fmt.Errorf("derived files: %w (set XDG_CACHE_HOME)", err)
	}
	return filepath.Join(dir, "voice-agent", "derived"), nil
}

// Acquire returns the directory for what engine (at version) derives from
// the files sources, creating it, and holds it until release is called:
// a second process loading the same model waits rather than writing the
// same files at the same time.
//
// sources[0] is the file the engine is given: its name is the caller's,
// not the model's, so a symlink or a copy of it under another name shares
// its derived files. The engine finds the others by their names (an ONNX
// graph's external data, the files an MNN config names), so their names
// are part of what the files are derived from; a caller that names its
// derived files after sources[0] says so in version.
func Acquire(engine, version string, sources ...string) (dir string, release func(), err error) {
	root, err := Root()
	if err != nil {
		return "", nil, err
	}
	m, err := identify(root, sources)
	if err != nil {
		return "", nil, err
	}
	key := sha256.Sum256([]byte(engine + "\x00" + version + "\x00" + machine() + "\x00" + m.id))
	dir = filepath.Join(root, engine, hex.EncodeToString(key[:])[:32])
	_, statErr := os.Stat(dir)
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return "", nil, fmt.Errorf("derived files: %w (set XDG_CACHE_HOME to a writable folder)", err)
	}
	unlock, err := lock(filepath.Join(dir, ".lock"), Stopping())
	if err != nil {
		return "", nil, fmt.Errorf("derived files: %w", err)
	}
	held.Add(1)
	var once sync.Once
	release = func() {
		once.Do(func() {
			held.Add(-1)
			unlock()
		})
	}
	// Prune reads what the folder is of, and when it was used; a record
	// that cannot be written costs only that.
	_ = recordSources(dir, m)
	if errors.Is(statErr, os.ErrNotExist) {
		pruneBeside(root, dir)
	}
	return dir, release, nil
}

// model is what a derivation is of: the files, resolved, with their sums,
// and id, the digest of their sums and the names the engine finds them by.
type model struct {
	paths, sums []string
	id          string
}

// identify sums the files sources (resolved: a symlink removed later does
// not make its model look gone).
func identify(root string, sources []string) (model, error) {
	var m model
	h := sha256.New()
	for i, src := range sources {
		path, err := filepath.Abs(src)
		if err == nil {
			path, err = filepath.EvalSymlinks(path)
		}
		var sum string
		if err == nil {
			sum, err = contentSum(root, path)
		}
		if err != nil {
			return model{}, fmt.Errorf("derived files of %s: %w", src, err)
		}
		name := ""
		if i > 0 {
			name = filepath.Base(src)
		}
		fmt.Fprintf(h, "%d\x00%s\x00%s\x00", i, name, sum)
		m.paths = append(m.paths, path)
		m.sums = append(m.sums, sum)
	}
	m.id = hex.EncodeToString(h.Sum(nil))
	return m, nil
}

// stopWaiting closes when a wait for another process's lock should end.
var stopWaiting atomic.Value

func init() { stopWaiting.Store((<-chan struct{})(nil)) }

// StopWaitingOn has every wait for another process's lock end when done
// closes (a process's interrupted context): a process that holds a lock
// for as long as it makes a model's derived files (a minute for the
// full-size X-ASR), or that was stopped holding it, does not hold this one
// past Ctrl-C. The caller then goes without the derived files.
func StopWaitingOn(done <-chan struct{}) { stopWaiting.Store(done) }

// Stopping is the channel of StopWaitingOn (nil if none): a wait of a
// derivation's own, such as a child process that makes one, ends on it too.
func Stopping() <-chan struct{} { return stopWaiting.Load().(<-chan struct{}) }

// held counts the derived folders this process holds (Acquire to release).
var held atomic.Int32

// Holding tells whether this process holds a derived folder: it is making
// a model's derived files, or loading them, in an engine's code that no
// context reaches (ONNX Runtime takes 15 s to make the full-size X-ASR's
// copy). Ending the process then loses nothing: what is made is sealed
// only once whole, and made again otherwise.
func Holding() bool { return held.Load() > 0 }

// errHeld is a lock's error when another process holds it.
var errHeld = errors.New("held by another process")

// ErrStopped is the error of a wait for another process's lock that
// StopWaitingOn's channel ended: the process is stopping, so a loader
// ends too, rather than load the model without its derived files (onto
// the heap: fp32 X-ASR's 590 MB encoder took 3 s past the signal).
var ErrStopped = errors.New("stopped")

// heldError is errHeld for a wait that was stopped, naming the lock. Its
// way out is none: the process is stopping.
type heldError string

func (e heldError) Error() string        { return "stopped waiting for the process that holds " + string(e) }
func (e heldError) Is(target error) bool { return target == errHeld || target == ErrStopped }

// errSymlink is the error for a symlink where the agent keeps a file of
// its own (planted: nothing of the agent's makes one).
var errSymlink = errors.New("a symlink, not a file the agent made")

// lockPoll is how often a wait for another process's lock looks again.
const lockPoll = 100 * time.Millisecond

// contentSum is the sha256 of the file at path, an absolute path without
// symlinks. Hashing a model of a few hundred MB takes a second on a small
// device, so the sum is kept, beside the file's size, modification time
// and identity, and read back while they are unchanged.
func contentSum(root, path string) (string, error) {
	info, err := os.Stat(path)
	if err != nil {
		return "", err
	}
	id := fmt.Sprintf("%d %d %s", info.Size(), info.ModTime().UnixNano(), identity(info))
	name := sha256.Sum256([]byte(path))
	memo := filepath.Join(root, "sums", hex.EncodeToString(name[:16]))
	if kept, err := os.ReadFile(memo); err == nil {
		if was, sum, ok := strings.Cut(strings.TrimSpace(string(kept)), " sha256 "); ok && was == id {
			return sum, nil
		}
	}
	sum, _, err := modelstore.HashFile(path)
	if err != nil {
		return "", err
	}
	// A memo that cannot be written costs the next load a hash, nothing
	// else. Renamed into place: a symlink planted as the memo is replaced,
	// not written through.
	if os.MkdirAll(filepath.Dir(memo), 0o755) == nil {
		_ = WriteFile(memo, func(w io.Writer) error {
			_, err := fmt.Fprintf(w, "%s sha256 %s\n", id, sum)
			return err
		})
	}
	return sum, nil
}

// machine names what the derived layouts depend on besides the engine:
// the architecture and the CPU's features (an engine packs weights for the
// widest vector unit it finds).
var machine = sync.OnceValue(func() string {
	flags := ""
	if data, err := os.ReadFile("/proc/cpuinfo"); err == nil {
		for line := range strings.SplitSeq(string(data), "\n") {
			if k, v, ok := strings.Cut(line, ":"); ok && (strings.TrimSpace(k) == "flags" || strings.TrimSpace(k) == "Features") {
				flags = strings.TrimSpace(v)
				break
			}
		}
	}
	return runtime.GOARCH + " " + flags
})

// Bytes is the size of the files at paths, those that exist: what a
// derivation from them takes on disk is a multiple of it.
func Bytes(paths []string) int64 {
	var n int64
	for _, p := range paths {
		if info, err := os.Stat(p); err == nil {
			n += info.Size()
		}
	}
	return n
}
