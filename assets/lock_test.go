package assets

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestParseLock(t *testing.T) {
	good := strings.Repeat("ab", 32)
	for _, tc := range []struct {
		name, text string
		want       map[string]lockEntry
		err        string
	}{
		{"empty", "", map[string]lockEntry{}, ""},
		{"blank", " \n", map[string]lockEntry{}, ""},
		{"null", "null", map[string]lockEntry{}, ""},
		{"entries", `{"m/a": {"sha256": "` + good + `", "size": 3}}`, map[string]lockEntry{"m/a": {SHA256: good, Size: 3}}, ""},
		{"verified", `{"m/a": {"sha256": "` + good + `", "size": 3, "verified": {"mtime_ns": 5, "size": 3}}}`,
			map[string]lockEntry{"m/a": {SHA256: good, Size: 3, Verified: fileStamp{ModTime: 5, Size: 3}}}, ""},
		{"not an object", `[1]`, nil, "models.lock is not the JSON object of sha256 sums it should be (json"},
		{"not JSON", `<html>502</html>`, nil, "move it aside and pull again"},
		{"bad sha256", `{"m/a": {"sha256": "zz", "size": 3}}`, nil, `"m/a" has sha256 "zz"`},
		{"no sha256", `{"m/a": {"size": 3}}`, nil, `"m/a" has sha256 ""`},
		{"negative size", `{"m/a": {"sha256": "` + good + `", "size": -3}}`, nil, "size -3"},
		{"null entry", `{"m/a": null}`, nil, `"m/a" has sha256 ""`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := parseLock("dir/models.lock", []byte(tc.text))
			if tc.err != "" {
				require.Error(t, err)
				assert.Contains(t, err.Error(), tc.err)
				assert.Contains(t, err.Error(), "dir/models.lock")
				return
			}
			require.NoError(t, err)
			assert.Equal(t, tc.want, got)
		})
	}
}

// A lock file holding JSON null used to read as a nil map, and the first
// download without a sha256 in the manifest then panicked recording its
// hash.
func TestPullWithNullLockFile(t *testing.T) {
	data := testContent(1000)
	srv := serve(t, data, nil)
	p := testPuller(t, srv)
	require.NoError(t, os.WriteFile(filepath.Join(p.Dir, LockFileName), []byte("null"), 0o644))
	pullAndCheck(t, p, testModel(srv.URL, data, false), data)
	entries, err := p.readLock()
	require.NoError(t, err)
	assert.Equal(t, lockEntry{SHA256: sum(data), Size: int64(len(data))}, entries["test-model/sub/model.bin"])
}
