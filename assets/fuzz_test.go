package assets

import (
	"encoding/json"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// FuzzParseManifest feeds parseManifest with damaged manifests. A
// manifest that parses must validate, survive re-encoding unchanged, and
// place every file strictly inside its model's directory of the cache,
// under a lock-file key no other file shares.
func FuzzParseManifest(f *testing.F) {
	f.Add(manifestJSON)
	good := strings.Repeat("0f", 32)
	for _, s := range []string{
		`{"models": [{"name": "m", "files": [{"path": "sub/a.onnx", "size": 3, "sha256": "` + good + `", "sources": ["https://x.y/a"]}]}]}`,
		`{"models": [{"name": "m", "platform": "linux/amd64", "files": [{"path": "a", "sources": ["npm:p@1.0.0#package/a"]}]}]}`,
		`{"models": [{"name": "..", "files": [{"path": "a", "sources": ["s"]}]}]}`,
		`{"models": [{"name": "m", "files": [{"path": "../../etc/passwd", "sources": ["s"]}]}]}`,
		`{"models": [{"name": "m", "files": [{"path": "a", "sources": ["s"]}, {"path": "a", "sources": ["t"]}]}]}`,
		`{"models": [{"name": "m", "files": [{"path": "a", "size": -1, "sources": ["s"]}]}]}`,
		`{"models": [{"name": "m", "files": [{"path": "a", "sha256": "ABC", "sources": ["s"]}]}]}`,
		`{"models": null}`, `{}`, `[]`, `{"models": [{}]}`,
	} {
		f.Add([]byte(s))
	}

	f.Fuzz(func(t *testing.T, data []byte) {
		m, err := parseManifest(data)
		if err != nil {
			require.True(t, strings.HasPrefix(err.Error(), "assets: manifest: "), "error %q does not say it is the manifest", err)
			return
		}
		require.NoError(t, m.validate())
		again, err := json.Marshal(m)
		require.NoError(t, err)
		m2, err := parseManifest(again)
		require.NoError(t, err, "re-encoded manifest does not parse:\n%s", again)
		require.Equal(t, normalized(m), normalized(m2), "re-encoding changed the manifest")
		const cache = "/cache"
		keys := map[string]bool{}
		for _, mod := range m.Models {
			got, ok := m.Model(mod.Name)
			require.True(t, ok, "Model(%q) not found", mod.Name)
			require.Equal(t, mod.Name, got.Name, "Model(%q) not found", mod.Name)
			dir := Path(cache, mod)
			require.Equal(t, cache, filepath.Dir(dir), "model %q lands in %s, not a directory of %s", mod.Name, dir, cache)
			for _, file := range mod.Files {
				p := filepath.Join(dir, filepath.FromSlash(file.Path))
				rel, err := filepath.Rel(dir, p)
				require.NoError(t, err, "model %q file %q lands at %s, outside %s", mod.Name, file.Path, p, dir)
				require.NotEqual(t, ".", rel, "model %q file %q lands at %s, outside %s", mod.Name, file.Path, p, dir)
				require.True(t, filepath.IsLocal(rel), "model %q file %q lands at %s, outside %s", mod.Name, file.Path, p, dir)
				require.GreaterOrEqual(t, file.Size, int64(0), "model %q file %+v", mod.Name, file)
				require.NotEmpty(t, file.Sources, "model %q file %+v", mod.Name, file)
				key := lockKey(mod, file)
				require.False(t, keys[key], "two files share the lock-file key %q", key)
				keys[key] = true
			}
		}
	})
}

// normalized maps empty slices to nil, which JSON cannot tell apart.
func normalized(m Manifest) Manifest {
	if len(m.Models) == 0 {
		m.Models = nil
	}
	return m
}

// FuzzParseLock feeds parseLock with damaged lock files. An error must
// name the file; a lock that parses is a usable map (record writes to it)
// of sha256s and sizes that survives record's re-encoding unchanged.
func FuzzParseLock(f *testing.F) {
	good := strings.Repeat("ab", 32)
	for _, s := range []string{
		"", "null", "{}", " \n",
		`{"m/a": {"sha256": "` + good + `", "size": 3}}`,
		`{"m/a": {"sha256": "` + strings.ToUpper(good) + `", "size": 0}, "m/b/c": {"sha256": "` + good + `", "size": 1e3}}`,
		`{"m/a": {"sha256": "zz", "size": 3}}`, `{"m/a": {"sha256": "` + good + `", "size": -1}}`,
		`{"m/a": null}`, `[1, 2]`, `{"m/a": {"sha256": "` + good + `", "size": 3}`,
	} {
		f.Add([]byte(s))
	}

	f.Fuzz(func(t *testing.T, data []byte) {
		entries, err := parseLock("dir/models.lock", data)
		if err != nil {
			require.Nil(t, entries, "entries and an error")
			require.ErrorContains(t, err, "dir/models.lock", "error does not name the file")
			return
		}
		require.NotNil(t, entries, "a nil map: record would panic writing to it")
		for key, e := range entries {
			require.True(t, isSHA256(e.SHA256), "entry %q: %+v", key, e)
			require.GreaterOrEqual(t, e.Size, int64(0), "entry %q: %+v", key, e)
		}
		b, err := json.MarshalIndent(entries, "", "  ")
		require.NoError(t, err)
		again, err := parseLock("dir/models.lock", append(b, '\n'))
		require.NoError(t, err, "re-encoded lock does not parse:\n%s", b)
		require.Equal(t, entries, again, "re-encoding changed the lock")
	})
}
