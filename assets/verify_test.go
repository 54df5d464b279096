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
