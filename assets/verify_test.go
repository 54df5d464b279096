package assets

import (
	"bytes"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// CheckCached hashes a cached file once per change: it records in the lock
// file the modification time and size at which the file had its sha256,
// and while they stand does not read it again; a file changed since (one
// byte, the same size) is an error naming it and the command that repairs
// it.
func TestCheckCachedHashesOncePerChange(t *testing.T) {
	data := testContent(10_000)
	damaged := bytes.Clone(data)
	damaged[5_000] ^= 0xff
	old := time.Now().Add(-time.Hour)
	for _, tc := range []struct {
		name   string
		pinned bool // the sha256 is the manifest's, else the lock file's
	}{{"sha256 in the manifest", true}, {"sha256 in the lock file", false}} {
		t.Run(tc.name, func(t *testing.T) {
			p := &Puller{Dir: t.TempDir()}
			m := testModel("https://models.invalid", data, tc.pinned)
			key := lockKey(m, m.Files[0])
			if !tc.pinned {
				require.NoError(t, p.record(testCtx(t), key, lockEntry{SHA256: sum(data), Size: int64(len(data))}))
			}
			path := filepath.Join(Path(p.Dir, m), "sub", "model.bin")
			require.NoError(t, os.MkdirAll(filepath.Dir(path), 0o755))
			require.NoError(t, os.WriteFile(path, data, 0o644))
			stamp := func() fileStamp {
				entries, err := p.readLock()
				require.NoError(t, err)
				return entries[key].Verified
			}

			// Written just now: verified, but not stamped, since a write
			// within the same clock tick would leave the stamp as it is.
			require.NoError(t, CheckCached(p.Dir, m))
			assert.Zero(t, stamp(), "a file written just now was stamped")

			require.NoError(t, os.Chtimes(path, old, old))
			require.NoError(t, CheckCached(p.Dir, m))
			fi, err := os.Stat(path)
			require.NoError(t, err)
			assert.Equal(t, stampOf(fi), stamp(), "the stamp of the file found right")

			// A change behind the stamp's back (the same size, the old
			// time put back) goes unseen: the file was not read again.
			require.NoError(t, os.WriteFile(path, damaged, 0o644))
			require.NoError(t, os.Chtimes(path, old, old))
			require.NoError(t, CheckCached(p.Dir, m), "hashed again with the stamp unchanged")

			// A change as they happen: the modification time moves.
			require.NoError(t, os.WriteFile(path, damaged, 0o644))
			err = CheckCached(p.Dir, m)
			require.Error(t, err)
			for _, want := range []string{path, "changed or damaged", sum(damaged), "voice-agent models pull test-model"} {
				assert.ErrorContains(t, err, want)
			}
		})
	}
}

// A model folder that holds none of the model's files, as a failed pull
// leaves it (empty, or with a partial download), is not the model:
// ErrNotCached, for a command to look on and say it is not found. One
// file of it there is a model pulled in part: the file missing is named,
// with the command that fetches it.
func TestCheckCachedFolderWithoutTheModel(t *testing.T) {
	data := []byte("model bytes")
	m := Model{Name: "m", Files: []File{
		{Path: "a.onnx", Size: int64(len(data)), SHA256: sum(data)},
		{Path: "b.onnx", Size: int64(len(data)), SHA256: sum(data)},
	}}
	for _, tc := range []struct {
		name    string
		files   map[string][]byte
		missing string // the file named missing; "" for ErrNotCached
	}{
		{name: "empty", files: nil},
		{name: "a partial download", files: map[string][]byte{"a.onnx.part": data[:3], "a.onnx.part.meta": []byte(`{"validator":"\"x\""}`)}},
		{name: "one file of two", files: map[string][]byte{"a.onnx": data}, missing: "b.onnx"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			cache := t.TempDir()
			require.NoError(t, os.Mkdir(Path(cache, m), 0o755))
			for name, b := range tc.files {
				require.NoError(t, os.WriteFile(filepath.Join(Path(cache, m), name), b, 0o644))
			}
			err := CheckCached(cache, m)
			if tc.missing == "" {
				require.ErrorIs(t, err, ErrNotCached)
				return
			}
			require.Error(t, err)
			assert.NotErrorIs(t, err, ErrNotCached)
			assert.ErrorContains(t, err, filepath.Join(Path(cache, m), tc.missing)+" is missing")
			assert.ErrorContains(t, err, "voice-agent models pull m")
		})
	}
}

// Installed finds a model where the agent loads it from: the cache when
// every file is there, else the model's third_party/ folder, checked
// against the manifest.
func TestInstalledFallsBackToThirdParty(t *testing.T) {
	root, cache := t.TempDir(), t.TempDir()
	t.Chdir(root)
	data := []byte("model bytes")
	m := Model{Name: "m", Local: "models", Files: []File{{Path: "m.onnx", Size: int64(len(data)), SHA256: sum(data)}}}
	p := &Puller{Dir: cache}

	dir, files, err := p.Installed(m)
	require.NoError(t, err)
	assert.Equal(t, Path(cache, m), dir, "nowhere: the cache, where pull puts it")
	assert.False(t, files[0].Present)

	local := filepath.Join(root, LocalDir, "models")
	require.NoError(t, os.MkdirAll(local, 0o755))
	require.NoError(t, os.WriteFile(filepath.Join(local, "m.onnx"), data, 0o644))
	// The empty folder a failed pull left in the cache is no model.
	require.NoError(t, os.MkdirAll(Path(cache, m), 0o755))
	dir, files, err = p.Installed(m)
	require.NoError(t, err)
	assert.Equal(t, local, dir)
	assert.True(t, files[0].Verified)

	require.NoError(t, os.WriteFile(filepath.Join(local, "m.onnx"), data[:4], 0o644))
	_, files, err = p.Installed(m)
	require.NoError(t, err)
	assert.True(t, files[0].Present)
	assert.False(t, files[0].Verified, "a damaged copy is found, and not verified")

	require.NoError(t, os.MkdirAll(Path(cache, m), 0o755))
	require.NoError(t, os.WriteFile(filepath.Join(Path(cache, m), "m.onnx"), data, 0o644))
	dir, files, err = p.Installed(m)
	require.NoError(t, err)
	assert.Equal(t, Path(cache, m), dir, "the cache comes first")
	assert.True(t, files[0].Verified)
}
