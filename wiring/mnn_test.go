//go:build mnn

package wiring

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"os"
	"path"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/voiceassistant/voice/assets"
	"github.com/voiceassistant/voice/internal/testenv"
	"github.com/voiceassistant/voice/llm"
	"github.com/voiceassistant/voice/llm/mnn"
)

// exportFiles are the files of the tiny export a pull fetches.
var exportFiles = []string{"config.json", "llm_config.json", "llm.mnn", "llm.mnn.weight", "tokenizer.txt", "embeddings_bf16.bin"}

// An llm.mnn.weight that an older pull locked at its first download and
// that crashes the engine in the check (zeroed at its full length, which
// the graph's reading of its length cannot catch; one cut short the check
// at load now names before the engine meets it) came with the advice to
// pull the model again, which the lock then refused for every source
// ("more than the 33181 bytes expected"): the model was missing until
// models.lock was edited by hand. Now the rejected export leaves the
// lock, the message ends with the pull that works, and it does: the model
// loads and replies.
func TestCrashingExportInTheCacheCanBePulledAgain(t *testing.T) {
	cache := t.TempDir()
	t.Setenv(assets.EnvCache, cache)
	man, err := assets.LoadManifest()
	require.NoError(t, err)
	model, ok := man.Model(MNNDir)
	require.True(t, ok)
	dir := assets.Path(cache, model)
	require.NoError(t, os.MkdirAll(dir, 0o755))
	tiny := testenv.TinyLLM(t)
	lock := map[string]map[string]any{}
	for _, name := range exportFiles {
		data, err := os.ReadFile(filepath.Join(tiny, name))
		require.NoError(t, err)
		if name == "llm.mnn.weight" {
			data = make([]byte, len(data))
		}
		file := filepath.Join(dir, name)
		require.NoError(t, os.WriteFile(file, data, 0o644))
		// Locked as an older agent did: at its first download.
		sum, size, err := assets.HashFile(file)
		require.NoError(t, err)
		lock[model.Name+"/"+name] = map[string]any{"sha256": sum, "size": size}
	}
	other := "silero-vad-v5/silero_vad.onnx"
	lock[other] = map[string]any{"sha256": strings.Repeat("ab", 32), "size": 1}
	js, err := json.Marshal(lock)
	require.NoError(t, err)
	require.NoError(t, os.WriteFile(filepath.Join(cache, assets.LockFileName), js, 0o644))

	s := Stages{LLM: "mnn", LLMThreads: 1, LLMMaxTokens: 8}
	_, err = newMNN(s)
	require.ErrorIs(t, err, mnn.ErrCorrupt)
	assert.Contains(t, err.Error(), "its files crash the engine")
	assert.Regexp(t, "run `voice-agent models pull "+model.Name+"`$", err.Error(), "ends with the way out")
	left, err := os.ReadFile(filepath.Join(cache, assets.LockFileName))
	require.NoError(t, err)
	assert.NotContains(t, string(left), model.Name+"/", "the lock holds none of its files")
	assert.Contains(t, string(left), other, "nor less of another model's")

	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		http.ServeFile(w, r, filepath.Join(tiny, path.Base(r.URL.Path)))
	}))
	defer srv.Close()
	puller := &assets.Puller{Dir: cache, Mirror: srv.URL, Retries: -1}
	require.NoError(t, puller.Pull(context.Background(), model))

	m, err := newMNN(s)
	require.NoError(t, err)
	defer m.Close()
	var reply string
	_, err = m.Generate(context.Background(), []llm.Message{{Role: llm.User, Content: "hello"}}, func(p string) error {
		reply += p
		return nil
	})
	require.NoError(t, err)
	assert.NotEmpty(t, reply)
}
