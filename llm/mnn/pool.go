//go:build mnn

package mnn

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"strings"

	"github.com/voiceassistant/voice/internal/derived"
)

// pool is the folder of the weights MNN rearranges for the CPU at the
// first load and maps from then on (use_mmap), kept in the user's cache
// per model (internal/derived): their file names do not say which model
// they are of.
type pool struct {
	dir     string
	release func()
	// making: MNN writes the pool at this load; sealed once it loaded.
	making bool
	// weights is the size of the weight files the pool is made from: a
	// pool smaller is not theirs.
	weights int64
}

// poolSuffix ends the name of every file MNN writes into the pool (the
// weights, then an empty sync marker once they are whole).
const poolSuffix = ".static"

// openPool returns the pool for the model of sources, or an error that
// says why the weights cannot be mapped (and what to do), with a pool
// that maps nothing. MNN makes the pool in files of at least fileBytes
// (mmapBytes).
//
// MNN trusts a pool whose sync marker exists and writes a new one through
// a shared mapping of a 1 GiB sparse file: a pool damaged since it was
// made (zeroed, cut short, deleted, swapped for a symlink) gives empty
// replies at every start, and a disk that fills while MNN writes kills
// the process with SIGBUS. So a pool is used only as it was sealed, made
// again otherwise, and made only where the disk has room for it.
func openPool(sources []string, layout string, fileBytes uint64) (pool, error) {
	none := pool{release: func() {}}
	dir, release, err := derived.Acquire("mnn", Version()+" "+layout, sources...)
	if err != nil {
		return none, err
	}
	files, _ := filepath.Glob(filepath.Join(dir, "*"+poolSuffix))
	if len(files) > 0 {
		err := derived.Verify(dir, baseNames(files)...)
		if err == nil {
			return pool{dir: dir, release: release}, nil
		}
		level := slog.LevelWarn
		if errors.Is(err, derived.ErrUnsealed) {
			level = slog.LevelInfo // made by an earlier agent, or by a load that did not finish
		}
		slog.Log(context.Background(), level, "mnn: the mapped weights are not as they were made; making them again", "dir", dir, "why", err)
	}
	// New files, not the old ones rewritten: an agent that maps them
	// keeps its pages, and a symlink planted in the folder is not
	// written through.
	for _, f := range append(files, filepath.Join(dir, derived.SealFile)) {
		if err := os.Remove(f); err != nil && !errors.Is(err, os.ErrNotExist) {
			release()
			return none, err
		}
	}
	if err := roomFor(dir, poolBytes(sources), fileBytes); err != nil {
		release()
		return none, err
	}
	return pool{dir: dir, release: release, making: true, weights: weightBytes(sources)}, nil
}

// roomFor returns why a pool of need bytes, in files of at least
// fileBytes, cannot be made in dir, nil if it can. MNN makes each file
// with ftruncate and goes on without it where that fails: under a
// file-size limit (ulimit -f, systemd's LimitFSIZE=, some container
// runtimes) it wrote a 0-byte pool that was then checked, sealed and
// answered from with empty lines at every start.
func roomFor(dir string, need, fileBytes uint64) error {
	free, err := freeBytes(dir)
	if err != nil {
		return err
	}
	if free < need {
		return fmt.Errorf("%d MiB free in %s, where the mapped weights need about %d MiB; free some space", free>>20, dir, need>>20)
	}
	fileBytes = max(fileBytes, need)
	if limit := fileSizeLimit(); limit < fileBytes {
		return fmt.Errorf("this process may write files of at most %d MiB (ulimit -f; systemd's LimitFSIZE=), and MNN makes one of %d MiB for them; raise the limit", limit>>20, fileBytes>>20)
	}
	// Without sparse files, the 1 GiB file MNN makes for a pool of a
	// fifth of that is written out whole, and takes that much of the
	// disk (an SD card's, where the cache on FAT is most likely).
	if !sparseFiles(dir) {
		return fmt.Errorf("%s is on a file system without sparse files (FAT, exFAT), where MNN's %d MiB file would take that much of the disk; set XDG_CACHE_HOME to a folder on another file system", dir, fileBytes>>20)
	}
	return nil
}

// layoutSettings are the engine settings (alibaba/MNN
// transformers/llm/engine/src/llmconfig.hpp) by which MNN packs the
// weights it writes into the pool: the backend, its precision, memory and
// power modes, its threads, and how it quantizes at run time. A pool made
// under others is not read right under these.
var layoutSettings = []string{"backend_type", "thread_num", "precision", "power", "memory", "dynamic_option", "mmap_size"}

// poolLayout names the layout a pool is made for: the config file the
// engine starts from (the model's files are the pool's sources already)
// and the layout settings given over it.
func poolLayout(configFile string, settings map[string]any) string {
	key := map[string]any{"config": configFile}
	for _, name := range layoutSettings {
		if v, ok := settings[name]; ok {
			key[name] = v
		}
	}
	js, _ := json.Marshal(key) // keys sorted: one layout, one name
	return string(js)
}

// The disk and the process as openPool sees them, or as a test's.
var (
	freeBytes     = derived.FreeBytes
	fileSizeLimit = maxFileBytes
	sparseFiles   = hasSparseFiles
)

// defaultMmapMiB is MNN's mmap_size (alibaba/MNN
// transformers/llm/engine/src/llmconfig.hpp): the least size, in MiB, of
// a file the CPU backend makes for its mapped weights
// (source/backend/cpu/CPUBackend.cpp, the static allocator over
// weightMemoryPath, which makes files of at least that size).
const defaultMmapMiB = 1024

// mmapBytes is the least size of a file MNN makes for a pool: mmap_size
// from settings, else from the config file at configPath, else MNN's.
func mmapBytes(configPath string, settings map[string]any) uint64 {
	mib, ok := mebibytes(settings["mmap_size"])
	if !ok {
		var file map[string]any
		if b, err := os.ReadFile(configPath); err == nil && json.Unmarshal(b, &file) == nil {
			mib, ok = mebibytes(file["mmap_size"])
		}
	}
	if !ok {
		mib = defaultMmapMiB
	}
	return uint64(mib) << 20
}

// mebibytes reads a non-negative size setting, as JSON (float64) or a Go
// caller (int) gives it.
func mebibytes(v any) (int64, bool) {
	switch n := v.(type) {
	case float64:
		return int64(n), n >= 0
	case int:
		return int64(n), n >= 0
	}
	return 0, false
}

// poolBytes is what a pool of the model of sources takes on disk: MNN's
// rearranged weights are about an eighth larger than llm.mnn.weight
// (184 MiB for MNN-Pocket's 163).
func poolBytes(sources []string) uint64 {
	return uint64(derived.Bytes(sources))*5/4 + 16<<20
}

// weightBytes is the size of the weight files (*.weight) among sources.
func weightBytes(sources []string) int64 {
	var weights []string
	for _, src := range sources {
		if strings.HasSuffix(src, ".weight") {
			weights = append(weights, src)
		}
	}
	return derived.Bytes(weights)
}

// errShortPool is seal's error for a pool smaller than the weights it was
// made from: MNN could not make its files (openPool's checks missed why)
// and went on with what it had, which answers with empty lines.
var errShortPool = errors.New("MNN made the mapped weights smaller than the weights")

// seal records the pool MNN has just made (derived.Seal).
func (p pool) seal() error {
	if !p.making {
		return nil
	}
	files, err := filepath.Glob(filepath.Join(p.dir, "*"+poolSuffix))
	if err != nil || len(files) == 0 {
		return fmt.Errorf("MNN wrote no weights into %s (%v)", p.dir, err)
	}
	var size int64
	for _, f := range files {
		if info, err := os.Lstat(f); err == nil {
			size += info.Size()
		}
	}
	if size == 0 || size < p.weights {
		return fmt.Errorf("%w: %d bytes in %s for %d bytes of weights", errShortPool, size, p.dir, p.weights)
	}
	return derived.Seal(p.dir, baseNames(files)...)
}

// baseNames are the names of the files at paths: those the pool's seal
// records and the engine maps.
func baseNames(paths []string) []string {
	names := make([]string, len(paths))
	for i, p := range paths {
		names[i] = filepath.Base(p)
	}
	return names
}
