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
}

// poolSuffix ends the name of every file MNN writes into the pool (the
// weights, then an empty sync marker once they are whole).
const poolSuffix = ".static"

// openPool returns the pool for the model of sources, or an error that
// says why the weights cannot be mapped (and what to do), with a pool
// that maps nothing.
//
// MNN trusts a pool whose sync marker exists and writes a new one through
// a shared mapping of a 1 GiB sparse file: a pool damaged since it was
// made (zeroed, cut short, deleted, swapped for a symlink) gives empty
// replies at every start, and a disk that fills while MNN writes kills
// the process with SIGBUS. So a pool is used only as it was sealed, made
// again otherwise, and made only where the disk has room for it.
func openPool(sources []string, layout string) (pool, error) {
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
	need := poolBytes(sources)
	free, err := freeBytes(dir)
	if err == nil && free < need {
		err = fmt.Errorf("%d MiB free in %s, where the mapped weights need about %d MiB; free some space", free>>20, dir, need>>20)
	}
	if err != nil {
		release()
		return none, err
	}
	return pool{dir: dir, release: release, making: true}, nil
}

// layoutSettings are the engine settings (alibaba/MNN
// transformers/llm/engine/src/llmconfig.hpp) by which MNN packs the
// weights it writes into the pool: the backend, its precision, memory and
// power modes, its threads, and how it quantizes at run time. A pool made
// under others is not read right under these.
var layoutSettings = []string{"backend_type", "thread_num", "precision", "power", "memory", "dynamic_option"}

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

// freeBytes is derived.FreeBytes, or a test's full disk.
var freeBytes = derived.FreeBytes

// poolBytes is what a pool of the model of sources takes on disk: MNN's
// rearranged weights are about an eighth larger than llm.mnn.weight
// (184 MiB for MNN-Pocket's 163).
func poolBytes(sources []string) uint64 {
	return uint64(derived.Bytes(sources))*5/4 + 16<<20
}

// seal records the pool MNN has just made (derived.Seal).
func (p pool) seal() error {
	if !p.making {
		return nil
	}
	files, err := filepath.Glob(filepath.Join(p.dir, "*"+poolSuffix))
	if err != nil || len(files) == 0 {
		return fmt.Errorf("MNN wrote no weights into %s (%v)", p.dir, err)
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
