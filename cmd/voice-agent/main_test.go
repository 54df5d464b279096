package main

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/voiceassistant/voice/assets"
	"github.com/voiceassistant/voice/internal/wiring"
)

func TestConfigFileUnderFlags(t *testing.T) {
	path := filepath.Join(t.TempDir(), "config.yaml")
	require.NoError(t, os.WriteFile(path, []byte(`
stages:
  vad: energy
  llm: scripted
  tts: none
  barge_in_min: 400ms
  endpoint:
    fallback_silence: 2s
  vad_tuning:
    threshold: 0.6
`), 0o644))
	a := &app{cfg: Config{Stages: wiring.DefaultStages()}}
	root := a.root()
	root.SetOut(&bytes.Buffer{})
	root.SetArgs([]string{"devices", "--backend", "null", "--config", path, "--llm", "mnn"})
	require.NoError(t, root.Execute())

	st := a.cfg.Stages
	assert.Equal(t, "energy", st.VAD, "from the file")
	assert.Equal(t, "none", st.TTS, "from the file")
	assert.Equal(t, 400*time.Millisecond, st.BargeInMin, "from the file")
	assert.Equal(t, "mnn", st.LLM, "the flag wins over the file")
	assert.Equal(t, 2*time.Second, st.Endpoint.FallbackSilence, "from the file")
	assert.Equal(t, 200*time.Millisecond, st.Endpoint.CandidateSilence, "defaults kept beside the file's values")
	assert.InDelta(t, 0.6, st.VADTuning.Threshold, 1e-6, "from the file")
	assert.Equal(t, 250*time.Millisecond, st.VADTuning.MinSpeech, "defaults kept beside the file's values")
	assert.Equal(t, wiring.ASRXASR, st.ASR, "default where neither says")
}

func TestBadConfigFileIsAnError(t *testing.T) {
	path := filepath.Join(t.TempDir(), "config.yaml")
	require.NoError(t, os.WriteFile(path, []byte("stages: [not, a, map"), 0o644))
	a := &app{cfg: Config{Stages: wiring.DefaultStages()}}
	root := a.root()
	root.SetArgs([]string{"devices", "--backend", "null", "--config", path})
	err := root.Execute()
	require.Error(t, err)
	assert.Contains(t, err.Error(), path)
}

func TestModelsCacheFromFlagEnvOrConfigFile(t *testing.T) {
	fromFile, fromEnv, fromFlag := t.TempDir(), t.TempDir(), t.TempDir()
	config := filepath.Join(t.TempDir(), "config.yaml")
	require.NoError(t, os.WriteFile(config, []byte("models_cache: "+fromFile+"\n"), 0o644))
	cases := []struct {
		name string
		env  string
		args []string
		want string
	}{
		{"config file", "", nil, fromFile},
		{"environment over the file", fromEnv, nil, fromEnv},
		{"flag over both", fromEnv, []string{"--models-cache", fromFlag}, fromFlag},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			t.Setenv(assets.EnvCache, c.env)
			if c.env == "" {
				require.NoError(t, os.Unsetenv(assets.EnvCache))
			}
			a := &app{cfg: Config{Stages: wiring.DefaultStages()}}
			root := a.root()
			var out bytes.Buffer
			root.SetOut(&out)
			root.SetArgs(append([]string{"models", "path", "silero-vad-v5", "--config", config}, c.args...))
			require.NoError(t, root.Execute())
			assert.Equal(t, filepath.Join(c.want, "silero-vad-v5"), strings.TrimSpace(out.String()))
		})
	}
}
