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
	"log/slog"
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
func Acquire(engine, version string, sources ...string) (dir string, release func(), err error) {
	root, err := Root()
	if err != nil {
		return "", nil, err
	}
	h := sha256.New()
	fmt.Fprintf(h, "%s\x00%s\x00%s\x00", engine, version, machine())
	sums := make([]string, len(sources))
	for i, src := range sources {
		sum, err := contentSum(root, src)
		if err != nil {
			return "", nil, fmt.Errorf("derived files of %s: %w", src, err)
		}
		sums[i] = sum
		fmt.Fprintf(h, "%s\x00%s\x00", filepath.Base(src), sum)
	}
	dir = filepath.Join(root, engine, hex.EncodeToString(h.Sum(nil))[:32])
	if _, err := os.Stat(dir); errors.Is(err, os.ErrNotExist) {
		// A new model, or a new engine: what the old ones left whose
		// model is gone goes (a pool is a 1 GiB sparse file, an fp32
		// X-ASR copy 1.2 GB). Checking costs a stat a source.
		if pruned, err := Prune(false); err == nil && len(pruned) > 0 {
			slog.Info("derived files: removed those of models that are gone", "folders", len(pruned), "bytes", bytesOf(pruned))
		}
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return "", nil, fmt.Errorf("derived files: %w (set XDG_CACHE_HOME to a writable folder)", err)
	}
	unlock, err := lock(filepath.Join(dir, ".lock"), Stopping())
	if err != nil {
		return "", nil, fmt.Errorf("derived files: %w (set XDG_CACHE_HOME to a writable folder)", err)
	}
	held.Add(1)
	var once sync.Once
	release = func() {
		once.Do(func() {
			held.Add(-1)
			unlock()
		})
	}
	// Prune reads what the folder is of; a record that cannot be written
	// costs only that.
	_ = recordSources(dir, sources, sums)
	return dir, release, nil
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

// lockPoll is how often a wait for another process's lock looks again.
const lockPoll = 100 * time.Millisecond

// contentSum is the sha256 of the file at path. Hashing a model of a few
// hundred MB takes a second on a small device, so the sum is kept, beside
// the file's size, modification time and inode, and read back while they
// are unchanged.
func contentSum(root, path string) (string, error) {
	abs, err := filepath.Abs(path)
	if err != nil {
		return "", err
	}
	info, err := os.Stat(abs)
	if err != nil {
		return "", err
	}
	identity := fmt.Sprintf("%d %d %d", info.Size(), info.ModTime().UnixNano(), inode(info))
	name := sha256.Sum256([]byte(abs))
	memo := filepath.Join(root, "sums", hex.EncodeToString(name[:16]))
	if kept, err := os.ReadFile(memo); err == nil {
		if id, sum, ok := strings.Cut(strings.TrimSpace(string(kept)), " sha256 "); ok && id == identity {
			return sum, nil
		}
	}
	sum, _, err := modelstore.HashFile(abs)
	if err != nil {
		return "", err
	}
	// A memo that cannot be written costs the next load a hash, nothing else.
	if os.MkdirAll(filepath.Dir(memo), 0o755) == nil {
		_ = os.WriteFile(memo, []byte(identity+" sha256 "+sum+"\n"), 0o644)
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
