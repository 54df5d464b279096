package assets

import (
	"crypto/sha256"
	"encoding/hex"
	"os"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestManifest(t *testing.T) {
	m, err := LoadManifest()
	require.NoError(t, err)
	// Every model the assistant uses, under the names the stages look for
	// in the cache (wiring).
	for _, name := range []string{"silero-vad-v5", "smart-turn-v3.2-cpu", "xasr-zh-en-streaming-160ms",
		"mnn-pocket-0.3b-int4", "MOSS-TTS-Nano-100M-ONNX", "MOSS-Audio-Tokenizer-Nano-ONNX"} {
		_, ok := m.Model(name)
		assert.True(t, ok, name)
	}
}

// The checksums the manifest pins are those of the real files we have.
func TestManifestChecksumsMatchKnownFiles(t *testing.T) {
	m, err := LoadManifest()
	require.NoError(t, err)
	xasr, _ := m.Model("xasr-zh-en-streaming-160ms")
	var tokens File
	for _, f := range xasr.Files {
		if f.Path == "tokens.txt" {
			tokens = f
		}
	}
	data, err := os.ReadFile("../../shared/data/x-asr/tokens.txt")
	if err != nil {
		t.Skip("shared X-ASR tokens not present: ", err)
	}
	sum := sha256.Sum256(data)
	assert.Equal(t, tokens.SHA256, hex.EncodeToString(sum[:]))
	assert.Equal(t, tokens.Size, int64(len(data)))

	if path, ok := Local("models/silero_vad_v5.onnx"); ok {
		data, err := os.ReadFile(path)
		require.NoError(t, err)
		sum := sha256.Sum256(data)
		silero, _ := m.Model("silero-vad-v5")
		assert.Equal(t, silero.Files[0].SHA256, hex.EncodeToString(sum[:]))
		assert.Equal(t, silero.Files[0].Size, int64(len(data)))
	}
}

func TestManifestValidation(t *testing.T) {
	for name, m := range map[string]Manifest{
		"repeated name": {Models: []Model{{Name: "a", Files: []File{{Path: "x", Sources: []string{"s"}}}}, {Name: "a", Files: []File{{Path: "x", Sources: []string{"s"}}}}}},
		"no files":      {Models: []Model{{Name: "a"}}},
		"no source":     {Models: []Model{{Name: "a", Files: []File{{Path: "x"}}}}},
		"bad sha256":    {Models: []Model{{Name: "a", Files: []File{{Path: "x", SHA256: "abc", Sources: []string{"s"}}}}}},
	} {
		assert.Error(t, m.validate(), name)
	}
	// Files land in <cache>/<name>/<path>: nothing may point outside.
	file := func(path string) []File { return []File{{Path: path, Sources: []string{"s"}}} }
	for _, tc := range []struct {
		name string
		m    Model
		want string
	}{
		{"name with a slash", Model{Name: "a/b", Files: file("x")}, `model name "a/b" is not a plain directory name`},
		{"name ..", Model{Name: "..", Files: file("x")}, `model name ".." is not`},
		{"name .", Model{Name: ".", Files: file("x")}, `model name "." is not`},
		{"name with a backslash", Model{Name: `a\b`, Files: file("x")}, "is not a plain directory name"},
		{"path escaping", Model{Name: "a", Files: file("../b")}, `file path "../b" is not a clean relative path`},
		{"path escaping inside", Model{Name: "a", Files: file("x/../../b")}, `file path "x/../../b"`},
		{"absolute path", Model{Name: "a", Files: file("/etc/passwd")}, `file path "/etc/passwd"`},
		{"path .", Model{Name: "a", Files: file(".")}, `file path "."`},
		{"unclean path", Model{Name: "a", Files: file("x//y")}, `file path "x//y"`},
		{"backslash path", Model{Name: "a", Files: file(`..\x`)}, "is not a clean relative path"},
		{"file twice", Model{Name: "a", Files: append(file("x"), file("x")...)}, "file x is listed twice"},
		{"negative size", Model{Name: "a", Files: []File{{Path: "x", Size: -1, Sources: []string{"s"}}}}, "negative size -1"},
		{"negative approx_size", Model{Name: "a", ApproxSize: -5, Files: file("x")}, "approx_size -5 is not positive"},
		{"approx_size beside pinned sizes", Model{Name: "a", ApproxSize: 5, Files: []File{{Path: "x", Size: 3, Sources: []string{"s"}}}},
			"approx_size is never used: every file has a pinned size"},
		{"approx_size below the pinned sizes", Model{Name: "a", ApproxSize: 5, Files: []File{{Path: "x", Size: 9, Sources: []string{"s"}}, file("y")[0]}},
			"approx_size 5 is less than the 9 bytes"},
	} {
		err := Manifest{Models: []Model{tc.m}}.validate()
		if assert.Error(t, err, tc.name) {
			assert.Contains(t, err.Error(), tc.want, tc.name)
		}
	}
	m := Manifest{Models: []Model{{Name: "a", Files: file("sub/x.onnx")}}}
	assert.NoError(t, m.validate())
	m = Manifest{Models: []Model{{Name: "a", ApproxSize: 20, Files: []File{{Path: "x", Size: 9, Sources: []string{"s"}}, file("y")[0]}}}}
	assert.NoError(t, m.validate())
}

// A model's size before download: the pinned sizes when every file has
// one, else its approximate size, else what is pinned, short of the rest.
func TestDownloadSize(t *testing.T) {
	pinned := File{Path: "x", Size: 9, Sources: []string{"s"}}
	unpinned := File{Path: "y", Sources: []string{"s"}}
	for _, tc := range []struct {
		name            string
		m               Model
		n               int64
		approx, unknown bool
	}{
		{"pinned", Model{Files: []File{pinned}}, 9, false, false},
		{"approximate", Model{ApproxSize: 100, Files: []File{pinned, unpinned}}, 100, true, false},
		{"unknown", Model{Files: []File{pinned, unpinned}}, 9, false, true},
	} {
		n, approx, unknown := tc.m.DownloadSize()
		assert.Equal(t, []any{tc.n, tc.approx, tc.unknown}, []any{n, approx, unknown}, tc.name)
	}
	// The manifest's models whose files could not all be pinned have one.
	m, err := LoadManifest()
	require.NoError(t, err)
	for _, name := range []string{"xasr-zh-en-streaming-160ms", "mnn-pocket-0.3b-int4"} {
		mod, _ := m.Model(name)
		_, approx, _ := mod.DownloadSize()
		assert.True(t, approx, name)
	}
}

func TestFormatEstimate(t *testing.T) {
	assert.Equal(t, "558.9 MiB", FormatEstimate(586000000, false))
	assert.Equal(t, "~559 MiB", FormatEstimate(586000000, true))
	assert.Equal(t, "~1.2 GiB", FormatEstimate(1300000000, true))
	assert.Equal(t, "~3 KiB", FormatEstimate(3000, true))
	assert.Equal(t, "~12 B", FormatEstimate(12, true))
}
