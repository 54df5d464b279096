package assets

// The MNN lines cited are at alibaba/MNN commit
// 4d40bdbd7efb73a58383bb5da867a6f41eb1776e, the one scripts/build-mnn
// builds.

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"maps"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"path"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// tinyLLM is the tiny MNN model the engine's tests run on: an export
// with embeddings_bf16.bin and tokenizer.txt.
var tinyLLM = filepath.Join("..", "llm", "mnn", "testdata", "tiny-llm")

// exportedConfig is config.json as the exporter writes it
// (alibaba/MNN transformers/llm/export/llmexport.py:367-392): tokenizer is
// the file export_tokenizer wrote (llmexport.py:791-794), and embeddings
// below 16 bits name their file whether it was written or not.
func exportedConfig(tokenizer string, embedBit int) map[string]any {
	cfg := map[string]any{
		"llm_model": "llm.mnn", "llm_weight": "llm.mnn.weight", "backend_type": "cpu", "thread_num": 4.0,
		"precision": "low", "memory": "low", "sampler_type": "mixed", "temperature": 0.8, "top_k": 40.0,
		"top_p": 0.9, "min_p": 0.05, "tfs_z": 1.0, "typical": 0.95, "repetition_penalty": 1.0,
		"presence_penalty": 0.0, "frequency_penalty": 0.0, "penalty_window": 0.0, "n_gram": 8.0, "ngram_factor": 1.0,
		"tokenizer_file": tokenizer,
	}
	if embedBit < 16 {
		cfg["embedding_file"] = fmt.Sprintf("embeddings_int%d.bin", embedBit)
	}
	return cfg
}

// tiedEmbeddings is llm_config.json's tie_embeddings for a model whose
// output layer's weights the engine reads its embeddings from, as the
// converter records them (alibaba/MNN
// transformers/llm/export/utils/mnn_converter.py:698-709) and the exporter
// writes them (llmexport.py:756-758), where it writes no embeddings file
// (llmexport.py:743-746).
var tiedEmbeddings = map[string]any{
	"weight_offset": 40960.0, "alpha_offset": 61440.0, "alpha_size": 2560.0,
	"quant_bit": 8.0, "quant_block": 64.0, "alpha_dtype": "fp32",
}

// tinyLLMConfig is the tiny model's llm_config.json with edits.
func tinyLLMConfig(t *testing.T, edit map[string]any) map[string]any {
	var cfg map[string]any
	require.NoError(t, json.Unmarshal(readTiny(t, "llm_config.json"), &cfg))
	maps.Copy(cfg, edit)
	return cfg
}

func readTiny(t *testing.T, name string) []byte {
	data, err := os.ReadFile(filepath.Join(tinyLLM, name))
	require.NoError(t, err)
	return data
}

func marshal(t *testing.T, v any) []byte {
	b, err := json.MarshalIndent(v, "", "    ")
	require.NoError(t, err)
	return b
}

// tiedPackage is the tiny model as the exporter would write it from a
// model with tied embeddings and a tokenizer.json: its tokenizer written
// as tokenizer.mtok (llmexport.py:41, transformers/llm/export/utils/tokenizer.py:620-625; the
// engine tells the formats apart by their first line, not the name,
// transformers/llm/engine/src/tokenizer/tokenizer.cpp:75-95), no embeddings file.
func tiedPackage(t *testing.T) map[string][]byte {
	return map[string][]byte{
		"config.json":     marshal(t, exportedConfig("tokenizer.mtok", 16)),
		"llm_config.json": marshal(t, tinyLLMConfig(t, map[string]any{"tie_embeddings": tiedEmbeddings})),
		"llm.mnn":         readTiny(t, "llm.mnn"),
		"llm.mnn.weight":  readTiny(t, "llm.mnn.weight"),
		"tokenizer.mtok":  readTiny(t, "tokenizer.txt"),
	}
}

// tinyPackage is the tiny model as it is: embeddings_bf16.bin and
// tokenizer.txt.
func tinyPackage(t *testing.T) map[string][]byte {
	pkg := map[string][]byte{}
	for _, name := range []string{"config.json", "llm_config.json", "llm.mnn", "llm.mnn.weight", "embeddings_bf16.bin", "tokenizer.txt"} {
		pkg[name] = readTiny(t, name)
	}
	return pkg
}

func writePackage(t *testing.T, dir string, pkg map[string][]byte) {
	require.NoError(t, os.MkdirAll(dir, 0o755))
	for name, data := range pkg {
		require.NoError(t, os.WriteFile(filepath.Join(dir, name), data, 0o644))
	}
}

var mnnModel = Model{Name: "m", Format: FormatMNNLLM, Files: []File{
	{Path: "config.json", Sources: []string{"https://example.com/m/resolve/main/config.json"}},
	{Path: "llm_config.json", Sources: []string{"https://example.com/m/resolve/main/llm_config.json"}},
}}

// An export's files are those its configs name, as the engine reads them.
func TestMNNFilesFollowTheConfig(t *testing.T) {
	common := []string{"config.json", "llm_config.json", "llm.mnn", "llm.mnn.weight"}
	for _, tc := range []struct {
		name string
		pkg  map[string][]byte
		want []string
	}{
		{"the tiny model", tinyPackage(t), slices.Concat(common, []string{"tokenizer.txt", "embeddings_bf16.bin"})},
		{"tied embeddings and tokenizer.mtok", tiedPackage(t), slices.Concat(common, []string{"tokenizer.mtok"})},
		{
			// tie_embeddings as the engine's older form, a list
			// (alibaba/MNN transformers/llm/engine/src/llmconfig.hpp:461-493).
			"tied embeddings as a list",
			map[string][]byte{
				"config.json":     marshal(t, exportedConfig("tokenizer.mtok", 16)),
				"llm_config.json": marshal(t, map[string]any{"tie_embeddings": []any{40960.0, 61440.0, 2560.0, 8.0, 64.0}}),
			},
			slices.Concat(common, []string{"tokenizer.mtok"}),
		},
		{
			// Tied: config.json names embeddings_int4.bin, which was
			// never written, and the engine never opens it, its
			// tie_embeddings pointing into the weights
			// (transformers/llm/engine/src/diskembedding.cpp:75-88).
			"tied embeddings and a 4-bit embedding setting",
			map[string][]byte{
				"config.json":     marshal(t, exportedConfig("tokenizer.mtok", 4)),
				"llm_config.json": marshal(t, map[string]any{"tie_embeddings": tiedEmbeddings}),
			},
			slices.Concat(common, []string{"tokenizer.mtok"}),
		},
		{
			// Untied, 8-bit: export_embed writes embeddings_int8.bin and
			// a tie_embeddings at offset 0 of it (llmexport.py:330-352),
			// which the engine reads as embedding_file
			// (diskembedding.cpp:80-84).
			"8-bit embeddings of their own",
			map[string][]byte{
				"config.json": marshal(t, exportedConfig("tokenizer.txt", 8)),
				"llm_config.json": marshal(t, map[string]any{"tie_embeddings": map[string]any{
					"weight_offset": 0.0, "alpha_offset": 20480.0, "alpha_size": 2560.0, "quant_bit": 8.0, "quant_block": 64.0, "alpha_dtype": "fp32"}}),
			},
			slices.Concat(common, []string{"tokenizer.txt", "embeddings_int8.bin"}),
		},
		{
			// The engine's defaults (llmconfig.hpp:102-132).
			"a config that names nothing",
			map[string][]byte{"config.json": []byte(`{}`)},
			slices.Concat(common, []string{"tokenizer.txt", "embeddings_bf16.bin"}),
		},
		{
			// llm_config.json is named by config.json and merged over it
			// (llmconfig.hpp:86-98).
			"llm_config of another name, naming the tokenizer",
			map[string][]byte{
				"config.json":       []byte(`{"llm_config": "model_config.json", "tokenizer_file": "tokenizer.txt"}`),
				"model_config.json": []byte(`{"tokenizer_file": "tokenizer.mtok", "tie_embeddings": {"weight_offset": 64}}`),
			},
			[]string{"config.json", "model_config.json", "llm.mnn", "llm.mnn.weight", "tokenizer.mtok"},
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			writePackage(t, dir, tc.pkg)
			files, err := mnnModel.filesIn(dir)
			require.NoError(t, err)
			var names []string
			for _, f := range files {
				names = append(names, f.Path)
			}
			assert.Equal(t, tc.want, names)
		})
	}
}

// A file the manifest does not list comes from beside config.json.
func TestMNNFileSources(t *testing.T) {
	assert.Equal(t, mnnModel.Files[1], mnnModel.file("llm_config.json"), "listed")
	m := mnnModel
	m.Files = []File{{Path: "config.json", Sources: []string{
		"https://hf.example/org/m/resolve/main/config.json?download=true",
		"https://ms.example/models/org/m/resolve/master/config.json",
	}}}
	assert.Equal(t, File{Path: "tokenizer.mtok", Sources: []string{
		"https://hf.example/org/m/resolve/main/tokenizer.mtok?download=true",
		"https://ms.example/models/org/m/resolve/master/tokenizer.mtok",
	}}, m.file("tokenizer.mtok"))
}

func TestMNNConfigsThatCannotBeFollowed(t *testing.T) {
	for name, tc := range map[string]struct{ config, want string }{
		"a file outside":         {`{"tokenizer_file": "../../.bashrc"}`, `tokenizer_file ../../.bashrc is not a file in the model's directory`},
		"an absolute path":       {`{"llm_weight": "/etc/passwd"}`, `llm_weight /etc/passwd is not`},
		"a name that is no name": {`{"llm_model": 3}`, `llm_model 3 is not`},
		// Locked in once, it broke every later pull.
		"a NUL in a name": {`{"llm_weight": "w\u0000.bin"}`, "is not a file in the model's directory"},
		"base_dir":        {`{"base_dir": "/models/x/"}`, `base_dir /models/x/ puts the model's files outside its directory`},
		"not JSON":        {`{"llm_model": `, `config.json: unexpected end of JSON input`},
		"not an object":   {`[]`, `config.json: json: cannot unmarshal array`},
	} {
		dir := t.TempDir()
		writePackage(t, dir, map[string][]byte{"config.json": []byte(tc.config)})
		_, err := mnnModel.filesIn(dir)
		if assert.Error(t, err, name) {
			assert.Contains(t, err.Error(), tc.want, name)
			assert.Contains(t, err.Error(), "model m", name)
		}
	}
}

// Before its config.json is there, an export's files are the manifest's.
func TestMNNFilesBeforeTheConfig(t *testing.T) {
	files, err := mnnModel.filesIn(t.TempDir())
	require.NoError(t, err)
	assert.Equal(t, mnnModel.Files, files)
}

// servePackage serves pkg's files under prefix, and records the paths
// asked for.
func servePackage(t *testing.T, prefix string, pkg map[string][]byte) (*httptest.Server, func() []string) {
	var mu sync.Mutex
	var asked []string
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		asked = append(asked, r.URL.Path)
		mu.Unlock()
		name, ok := strings.CutPrefix(r.URL.Path, prefix)
		data, found := pkg[name]
		if !ok || !found {
			http.NotFound(w, r)
			return
		}
		_, _ = w.Write(data)
	}))
	t.Cleanup(srv.Close)
	return srv, func() []string {
		mu.Lock()
		defer mu.Unlock()
		return slices.Clone(asked)
	}
}

// MNN-Pocket is pulled, verified and found complete whichever way its
// package is laid out, through the manifest's entry (from a mirror), and
// no file the package lacks is asked for.
func TestPullMNNPocketEitherLayout(t *testing.T) {
	manifest, err := LoadManifest()
	require.NoError(t, err)
	pocket, ok := manifest.Model("mnn-pocket-0.3b-int4")
	require.True(t, ok)
	require.Equal(t, FormatMNNLLM, pocket.Format)
	u, err := url.Parse(pocket.Files[0].Sources[0])
	require.NoError(t, err)
	prefix := path.Dir(u.Path) + "/"

	for name, pkg := range map[string]map[string][]byte{"tied, tokenizer.mtok": tiedPackage(t), "the tiny model's": tinyPackage(t)} {
		t.Run(name, func(t *testing.T) {
			srv, asked := servePackage(t, prefix, pkg)
			p := testPuller(t, srv)
			p.Mirror = srv.URL
			require.NoError(t, p.Pull(testCtx(t), pocket))
			var want []string
			for file := range pkg {
				want = append(want, prefix+file)
			}
			assert.ElementsMatch(t, want, asked(), "each file of the package, once, and nothing else")

			files, err := p.Verify(pocket)
			require.NoError(t, err)
			var got []string
			for _, f := range files {
				assert.True(t, f.Verified, "%s: %s", f.File.Path, f.Problem)
				got = append(got, f.File.Path)
			}
			assert.ElementsMatch(t, slices.Collect(maps.Keys(pkg)), got)
			require.NoError(t, CheckCached(p.Dir, pocket))

			require.NoError(t, p.Pull(testCtx(t), pocket))
			assert.Len(t, asked(), len(pkg), "pulled again: nothing to fetch")

			// A file the config names is missing.
			tokenizer := "tokenizer.txt"
			if _, ok := pkg["tokenizer.mtok"]; ok {
				tokenizer = "tokenizer.mtok"
			}
			require.NoError(t, os.Remove(filepath.Join(Path(p.Dir, pocket), tokenizer)))
			err = CheckCached(p.Dir, pocket)
			require.Error(t, err)
			assert.Contains(t, err.Error(), tokenizer+" is missing")
		})
	}
}

// A package whose config names a file it does not have cannot be pulled.
func TestPullMNNFileTheSourceLacks(t *testing.T) {
	pkg := tiedPackage(t)
	delete(pkg, "tokenizer.mtok")
	srv, _ := servePackage(t, "/m/", pkg)
	m := Model{Name: "m", Format: FormatMNNLLM, Files: []File{{Path: "config.json", Sources: []string{srv.URL + "/m/config.json"}}}}
	err := testPuller(t, srv).Pull(testCtx(t), m)
	require.Error(t, err)
	assert.Contains(t, err.Error(), "model m file tokenizer.mtok")
}

// An export installed under third_party/ is checked by its own config too.
func TestInstalledMNNInThirdParty(t *testing.T) {
	root := t.TempDir()
	writePackage(t, filepath.Join(root, LocalDir, "models", "m"), tiedPackage(t))
	t.Chdir(root)
	m := mnnModel
	m.Local = "models/m"
	dir, files, err := (&Puller{Dir: t.TempDir()}).Installed(m)
	require.NoError(t, err)
	assert.Equal(t, filepath.Join(root, LocalDir, "models", "m"), dir)
	assert.Len(t, files, 5)
	for _, f := range files {
		assert.True(t, f.Present, f.File.Path)
	}
}

func TestManifestFormat(t *testing.T) {
	file := func(p, src string) File { return File{Path: p, Sources: []string{src}} }
	for _, tc := range []struct {
		name string
		m    Model
		want string
	}{
		{"unknown format", Model{Name: "a", Format: "gguf", Files: []File{file("x", "s")}}, `unknown format "gguf"`},
		{"no config.json", Model{Name: "a", Format: FormatMNNLLM, Files: []File{file("llm.mnn", "https://h/llm.mnn")}}, "must list config.json"},
		{"config.json from no URL", Model{Name: "a", Format: FormatMNNLLM, Files: []File{file("config.json", "npm:x@1/config.json")}}, `source "npm:x@1/config.json" of config.json is not a URL`},
		{"config.json called otherwise", Model{Name: "a", Format: FormatMNNLLM, Files: []File{file("config.json", "https://h/cfg.json")}}, "not a URL of a file called config.json"},
	} {
		err := Manifest{Models: []Model{tc.m}}.validate()
		if assert.Error(t, err, tc.name) {
			assert.Contains(t, err.Error(), tc.want, tc.name)
		}
	}
	assert.NoError(t, Manifest{Models: []Model{mnnModel}}.validate())
}

// MNN checks none of its files, and a page a mirror sent in the place of
// one crashed the engine at every start: each file of an export is
// checked as its kind before its checksum is locked.
func TestMNNFilesAreCheckedAsTheirKind(t *testing.T) {
	page := []byte("<!DOCTYPE html>\n<html><body>502 Bad Gateway</body></html>\n")
	for _, tc := range []struct {
		file string
		data []byte
		want string
	}{
		{"llm.mnn", readTiny(t, "llm.mnn"), ""},
		{"llm.mnn", page, "not an MNN graph"},
		{"llm.mnn", make([]byte, 4096), "not an MNN graph"},
		{"llm.mnn", readTiny(t, "llm.mnn")[:16], "not an MNN graph"},
		{"tokenizer.txt", readTiny(t, "tokenizer.txt"), ""},
		{"tokenizer.txt", page, "not an MNN tokenizer"},
		{"llm.mnn.weight", readTiny(t, "llm.mnn.weight"), ""},
		{"llm.mnn.weight", page, "a page a server sent"},
		{"embeddings_bf16.bin", []byte(`{"error": "not found"}`), "a page a server sent"},
		{"llm.mnn.weight", nil, "empty"},
	} {
		p := filepath.Join(t.TempDir(), tc.file)
		require.NoError(t, os.WriteFile(p, tc.data, 0o644))
		err := checkFormat(mnnModel, File{Path: tc.file}, filepath.Dir(p), p)
		if tc.want == "" {
			assert.NoError(t, err, tc.file)
			continue
		}
		require.Error(t, err, "%s: %.20q", tc.file, tc.data)
		assert.Contains(t, err.Error(), tc.want, tc.file)
	}
}

// A page, or weights cut short, locked by an earlier pull (an older agent
// checked neither) are no longer trusted: verify names the file, and a
// pull fetches it again.
func TestLockedBadWeightsArePulledAgain(t *testing.T) {
	pkg := tinyPackage(t)
	for _, tc := range []struct {
		name, want string
		data       []byte
	}{
		{"a page", "not weights but a page", []byte("<html><body>rate limited</body></html>")},
		{"cut short", "cut short: 33181 bytes received, but the graph llm.mnn reads 66362 bytes of it; pull it again", pkg["llm.mnn.weight"][:33181]},
	} {
		t.Run(tc.name, func(t *testing.T) {
			srv, _ := servePackage(t, "/m/", pkg)
			m := Model{Name: "m", Format: FormatMNNLLM, Files: []File{{Path: "config.json", Sources: []string{srv.URL + "/m/config.json"}}}}
			p := testPuller(t, srv)
			require.NoError(t, p.Pull(testCtx(t), m))

			weights := filepath.Join(Path(p.Dir, m), "llm.mnn.weight")
			require.NoError(t, os.WriteFile(weights, tc.data, 0o644))
			sum := sha256.Sum256(tc.data)
			require.NoError(t, p.updateLock(testCtx(t), func(entries map[string]lockEntry) bool {
				entries["m/llm.mnn.weight"] = lockEntry{SHA256: hex.EncodeToString(sum[:]), Size: int64(len(tc.data))}
				return true
			}))
			// The agent's check at load says so too, before the engine
			// meets the file.
			err := CheckCached(p.Dir, m)
			require.Error(t, err)
			assert.Contains(t, err.Error(), "llm.mnn.weight is "+strings.TrimSuffix(tc.want, "; pull it again"))

			files, err := p.Verify(m)
			require.NoError(t, err)
			for _, f := range files {
				if f.File.Path == "llm.mnn.weight" {
					assert.False(t, f.Verified)
					assert.Contains(t, f.Problem, tc.want)
				}
			}

			require.NoError(t, p.Pull(testCtx(t), m))
			got, err := os.ReadFile(weights)
			require.NoError(t, err)
			assert.True(t, bytes.Equal(pkg["llm.mnn.weight"], got), "fetched again: %d bytes", len(got))
			files, err = p.Verify(m)
			require.NoError(t, err)
			for _, f := range files {
				assert.True(t, f.Verified, "%s: %s", f.File.Path, f.Problem)
			}
		})
	}
}

// Weights cut short at a Content-Length that matches them (a proxy, or a
// source that holds the file cut short) are neither installed nor locked:
// the pull names the file, the bytes its graph reads and those received.
func TestPullRefusesCutShortWeights(t *testing.T) {
	pkg := tinyPackage(t)
	pkg["llm.mnn.weight"] = pkg["llm.mnn.weight"][:33181]
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		data, ok := pkg[path.Base(r.URL.Path)]
		if !ok {
			http.NotFound(w, r)
			return
		}
		w.Header().Set("Content-Length", fmt.Sprint(len(data)))
		_, _ = w.Write(data)
	}))
	t.Cleanup(srv.Close)
	m := Model{Name: "m", Format: FormatMNNLLM, Files: []File{{Path: "config.json", Sources: []string{srv.URL + "/m/config.json"}}}}
	p := testPuller(t, srv)
	err := p.Pull(testCtx(t), m)
	require.Error(t, err)
	assert.Contains(t, err.Error(), "model m file llm.mnn.weight: cut short: 33181 bytes received, but the graph llm.mnn reads 66362 bytes of it")

	weights := filepath.Join(Path(p.Dir, m), "llm.mnn.weight")
	assert.NoFileExists(t, weights)
	assert.NoFileExists(t, weights+".part")
	entries, err := p.readLock()
	require.NoError(t, err)
	assert.NotContains(t, entries, "m/llm.mnn.weight", "locked")
	assert.Contains(t, entries, "m/llm.mnn", "the graph, which is whole, is locked")
}
