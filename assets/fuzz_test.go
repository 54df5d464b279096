package assets

import (
	"encoding/json"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
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
			if !strings.HasPrefix(err.Error(), "assets: manifest: ") {
				t.Fatalf("error %q does not say it is the manifest", err)
			}
			return
		}
		if err := m.validate(); err != nil {
			t.Fatal(err)
		}
		again, err := json.Marshal(m)
		if err != nil {
			t.Fatal(err)
		}
		m2, err := parseManifest(again)
		if err != nil {
			t.Fatalf("re-encoded manifest does not parse: %v\n%s", err, again)
		}
		if !reflect.DeepEqual(normalized(m), normalized(m2)) {
			t.Fatalf("re-encoding changed the manifest:\n%+v\n%+v", m, m2)
		}
		const cache = "/cache"
		keys := map[string]bool{}
		for _, mod := range m.Models {
			if got, ok := m.Model(mod.Name); !ok || got.Name != mod.Name {
				t.Fatalf("Model(%q) not found", mod.Name)
			}
			dir := Path(cache, mod)
			if filepath.Dir(dir) != cache {
				t.Fatalf("model %q lands in %s, not a directory of %s", mod.Name, dir, cache)
			}
			for _, file := range mod.Files {
				p := filepath.Join(dir, filepath.FromSlash(file.Path))
				if rel, err := filepath.Rel(dir, p); err != nil || rel == "." || !filepath.IsLocal(rel) {
					t.Fatalf("model %q file %q lands at %s, outside %s", mod.Name, file.Path, p, dir)
				}
				if file.Size < 0 || len(file.Sources) == 0 {
					t.Fatalf("model %q file %+v", mod.Name, file)
				}
				key := lockKey(mod, file)
				if keys[key] {
					t.Fatalf("two files share the lock-file key %q", key)
				}
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
			if entries != nil {
				t.Fatal("entries and an error")
			}
			if !strings.Contains(err.Error(), "dir/models.lock") {
				t.Fatalf("error %q does not name the file", err)
			}
			return
		}
		if entries == nil {
			t.Fatal("a nil map: record would panic writing to it")
		}
		for key, e := range entries {
			if !isSHA256(e.SHA256) || e.Size < 0 {
				t.Fatalf("entry %q: %+v", key, e)
			}
		}
		b, err := json.MarshalIndent(entries, "", "  ")
		if err != nil {
			t.Fatal(err)
		}
		again, err := parseLock("dir/models.lock", append(b, '\n'))
		if err != nil {
			t.Fatalf("re-encoded lock does not parse: %v\n%s", err, b)
		}
		if !reflect.DeepEqual(entries, again) {
			t.Fatalf("re-encoding changed the lock:\n%v\n%v", entries, again)
		}
	})
}
