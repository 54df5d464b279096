package wiring

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/voiceassistant/voice/assets"
	"github.com/voiceassistant/voice/internal/clock"
	"github.com/voiceassistant/voice/llm/mnn"
)

// A model folder a failed pull left in the cache, empty or with partial
// downloads only, is no model: the stage says "not found", with its usual
// alternatives, and counts as missing (for run --pull). A folder with one
// of the model's files is a model pulled in part: the file is named, with
// the command that fetches it again.
func TestCachedFolderWithoutTheModelIsNotFound(t *testing.T) {
	for _, tc := range []struct {
		name  string
		files []string // in the X-ASR and MOSS-TTS folders
		want  []string
	}{
		{name: "empty folders", want: []string{
			"ASR: X-ASR not found; run `voice-agent models pull " + XASRDir + "`, or pass --asr-model-dir DIR",
			"TTS: MOSS-TTS-Nano not found", "or --tts tone for a demo",
		}},
		{name: "partial downloads", files: []string{"tokens.txt.part", "tokens.txt.part.meta"}, want: []string{
			"X-ASR not found", "--asr-model-dir DIR", "MOSS-TTS-Nano not found", "--tts tone for a demo",
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			cache := t.TempDir()
			t.Setenv(assets.EnvCache, cache)
			for _, dir := range []string{XASRDir, MossDir} {
				require.NoError(t, os.Mkdir(filepath.Join(cache, dir), 0o755))
				for _, f := range tc.files {
					require.NoError(t, os.WriteFile(filepath.Join(cache, dir, f), []byte("x"), 0o644))
				}
			}
			s := DefaultStages()
			s.VAD, s.Turn, s.LLM = VADEnergy, TurnNone, LLMScripted
			s.Script = filepath.Join(t.TempDir(), "script.json")
			require.NoError(t, os.WriteFile(s.Script, []byte(`{"replies":["hello"]}`), 0o644))
			_, closeStages, err := Build(s, clock.NewVirtual())
			require.NoError(t, closeStages())
			require.ErrorIs(t, err, ErrUnavailable)
			for _, want := range tc.want {
				assert.ErrorContains(t, err, want)
			}
			assert.NotContains(t, err.Error(), "in the cache")
			assert.Subset(t, s.MissingStages(), []string{"asr", "tts"})
		})
	}

	t.Run("one file of the model", func(t *testing.T) {
		cache := t.TempDir()
		t.Setenv(assets.EnvCache, cache)
		require.NoError(t, os.Mkdir(filepath.Join(cache, XASRDir), 0o755))
		require.NoError(t, os.WriteFile(filepath.Join(cache, XASRDir, "tokens.txt"), []byte("x"), 0o644))
		_, found, err := DefaultStages().model("", XASRDir)
		assert.True(t, found)
		require.Error(t, err)
		for _, want := range []string{"in the cache", "encoder-160ms.onnx is missing", "voice-agent models pull " + XASRDir} {
			assert.ErrorContains(t, err, want)
		}
	})
}

// The tests run on a model cache and a config of their own (TestMain:
// testenv.Isolated), not the user's: a model pulled in part into the
// cache of the user's home is not seen.
func TestTestsHaveTheirOwnCache(t *testing.T) {
	home := t.TempDir()
	t.Setenv("HOME", home)
	userCache := filepath.Join(home, ".local", "share", "voice-agent", "models")
	require.NoError(t, os.MkdirAll(filepath.Join(userCache, XASRDir), 0o755))
	require.NoError(t, os.WriteFile(filepath.Join(userCache, XASRDir, "tokens.txt"), []byte("x"), 0o644))

	cache, err := assets.CacheDir()
	require.NoError(t, err)
	for _, dir := range []string{cache, os.Getenv("XDG_CONFIG_HOME"), os.Getenv("XDG_CACHE_HOME")} {
		assert.True(t, strings.HasPrefix(dir, os.TempDir()+string(filepath.Separator)), "%q is not in a temporary folder", dir)
	}
	_, found, err := DefaultStages().model("", XASRDir)
	require.NoError(t, err, "the user's cache was read")
	assert.False(t, found)
}

// The LLM's hint names where the export comes from, as the manifest has
// it, and that those addresses are unverified; a build with MNN gives it
// for a model found nowhere.
func TestLLMHintNamesTheManifestSources(t *testing.T) {
	man, err := assets.LoadManifest()
	require.NoError(t, err)
	mod, ok := man.Model(MNNDir)
	require.True(t, ok)
	for _, src := range mod.Files[0].Sources {
		repo, _, _ := strings.Cut(strings.TrimPrefix(src, "https://"), "/resolve/")
		assert.Contains(t, mnn.Hint, repo)
	}
	assert.Contains(t, mnn.Hint, "unverified")
	if !mnn.Built {
		return
	}
	t.Setenv(assets.EnvCache, t.TempDir())
	s := DefaultStages()
	s.VAD, s.Turn, s.ASR, s.TTS = VADEnergy, TurnNone, ASRScripted, TTSTone
	s.Script = filepath.Join(t.TempDir(), "script.json")
	require.NoError(t, os.WriteFile(s.Script, []byte(`{"replies":["hello"]}`), 0o644))
	_, closeStages, err := Build(s, clock.NewVirtual())
	require.NoError(t, closeStages())
	require.ErrorIs(t, err, ErrUnavailable)
	assert.Contains(t, strings.Join(Details(err), "\n"), "huggingface.co/taobao-mnn/MNN-Pocket-0.3B-MNN")
}
