package main

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.yaml.in/yaml/v3"

	"github.com/voiceassistant/voice/assets"
	"github.com/voiceassistant/voice/internal/derived"
	"github.com/voiceassistant/voice/pipeline"
	"github.com/voiceassistant/voice/wiring"
)

func TestConfigFileUnderFlags(t *testing.T) {
	path := filepath.Join(t.TempDir(), "config.yaml")
	require.NoError(t, os.WriteFile(path, []byte(`
stages:
  vad: energy
  llm: scripted
  tts: none
  barge_in:
    mode: duck
    min_speech: 400ms
    backchannels: [yeah, 嗯]
  endpoint:
    fallback_silence: 2s
  vad_tuning:
    threshold: 0.6
`), 0o644))
	a := newApp()
	root := a.root()
	root.SetOut(&bytes.Buffer{})
	root.SetArgs([]string{"config", "--config", path, "--llm", "mnn", "--barge-in-min-words", "2", "--backchannels", "ok,sure"})
	require.NoError(t, root.Execute())

	st := a.cfg.Stages
	assert.Equal(t, "energy", st.VAD, "from the file")
	assert.Equal(t, "none", st.TTS, "from the file")
	assert.Equal(t, pipeline.InterruptDuck, st.BargeIn.Mode, "from the file")
	assert.Equal(t, 400*time.Millisecond, st.BargeIn.MinSpeech, "from the file")
	assert.Equal(t, 2, st.BargeIn.MinWords, "the flag")
	assert.Equal(t, []string{"ok", "sure"}, st.BargeIn.Backchannels, "the flag wins over the file, whole")
	assert.Equal(t, time.Second, st.BargeIn.ResumeAfter, "default")
	assert.Equal(t, "mnn", st.LLM, "the flag wins over the file")
	assert.Equal(t, 2*time.Second, st.Endpoint.FallbackSilence, "from the file")
	assert.Equal(t, 200*time.Millisecond, st.Endpoint.CandidateSilence, "defaults kept beside the file's values")
	assert.InDelta(t, 0.6, st.VADTuning.Threshold, 1e-6, "from the file")
	assert.Equal(t, 250*time.Millisecond, st.VADTuning.MinSpeech, "defaults kept beside the file's values")
	assert.Equal(t, wiring.ASRXASR, st.ASR, "default where neither says")
}

// Settings that make no sense are errors naming their key, whether they
// come from the file or a flag; zero is a setting, not "the default".
func TestConfigValuesAreChecked(t *testing.T) {
	for _, tc := range []struct {
		name, yaml string
		args       []string
		err        string
	}{
		{"negative min speech", "stages:\n  barge_in:\n    min_speech: -1s\n", nil, "stages.barge_in.min_speech: -1s"},
		{"negative continuation window", "stages:\n  continue:\n    window: -1s\n", nil, "stages.continue.window: -1s"},
		{"negative fallback", "stages:\n  endpoint:\n    fallback_silence: -1s\n", nil, "stages.endpoint.fallback_silence: -1s"},
		{"unknown mode", "stages:\n  barge_in:\n    mode: sometimes\n", nil, `"sometimes" is not a barge-in mode`},
		{"flag", "", []string{"--barge-in-resume-after", "-2s"}, "stages.barge_in.resume_after: -2s"},
		{"old key", "stages:\n  barge_in_min: 250ms\n", nil, "line 2: unknown key stages.barge_in_min"},
		{"zero is a setting", "stages:\n  barge_in:\n    min_speech: 0s\n    mode: off\n", nil, ""},
		{"older true/false", "", []string{"--barge-in=false"}, ""},
		{"negative token budget", "stages:\n  history_tokens: -1\n", nil, "stages.history_tokens: -1 is negative"},
		{"device period", "device:\n  period: -20ms\n", nil, "device.period: -20ms is out of range"},
		{"device rate", "device:\n  rate: 7\n", nil, "device.rate: 7 Hz is out of range"},
		{"a list too long to be settings", "stages:\n  barge_in:\n    backchannels: [" + strings.Repeat("yeah, ", 200_000) + "ok]\n", nil, "larger than 1024 KiB"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "config.yaml")
			require.NoError(t, os.WriteFile(path, []byte(tc.yaml), 0o644))
			a := newApp()
			root := a.root()
			root.SetOut(&bytes.Buffer{})
			root.SetArgs(append([]string{"config", "--config", path}, tc.args...))
			err := root.Execute()
			if tc.err == "" {
				require.NoError(t, err)
				assert.Equal(t, pipeline.InterruptOff, a.cfg.Stages.BargeIn.Mode)
				return
			}
			require.ErrorContains(t, err, tc.err)
		})
	}
}

func TestBadConfigFileIsAnError(t *testing.T) {
	path := filepath.Join(t.TempDir(), "config.yaml")
	require.NoError(t, os.WriteFile(path, []byte("stages: [not, a, map"), 0o644))
	a := newApp()
	root := a.root()
	root.SetArgs([]string{"config", "--config", path})
	err := root.Execute()
	require.Error(t, err)
	assert.Contains(t, err.Error(), path)
}

// A --config that is a FIFO is refused at once (bug: the open waited for
// a writer, where Ctrl-C could not reach it).
func TestConfigThatIsNotAFile(t *testing.T) {
	fifo := filepath.Join(t.TempDir(), "config.yaml")
	require.NoError(t, syscall.Mkfifo(fifo, 0o600))
	done := make(chan error, 1)
	go func() {
		root := newApp().root()
		root.SetArgs([]string{"config", "--config", fifo})
		done <- root.Execute()
	}()
	select {
	case err := <-done:
		require.Error(t, err)
		assert.Contains(t, err.Error(), fifo+" is not a file")
	case <-time.After(5 * time.Second):
		// Unblock the open so the test's goroutine ends.
		f, err := os.OpenFile(fifo, os.O_WRONLY, 0)
		if err == nil {
			f.Close()
		}
		t.Fatal("still opening the FIFO")
	}
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
			a := newApp()
			root := a.root()
			var out bytes.Buffer
			root.SetOut(&out)
			// A model scripts/setup does not install, so the cache is where it is.
			root.SetArgs(append([]string{"models", "path", "smart-turn-v3.2-cpu", "--config", config}, c.args...))
			require.NoError(t, root.Execute())
			assert.Equal(t, filepath.Join(c.want, "smart-turn-v3.2-cpu"), strings.TrimSpace(out.String()))
		})
	}
}

// FuzzConfigFile: any file either is refused with an error or gives a
// configuration whose settings are checked without a panic, and which
// reads back the same once written out.
func FuzzConfigFile(f *testing.F) {
	example, err := os.ReadFile(filepath.Join("..", "..", "configs", "voice-agent.yaml"))
	require.NoError(f, err)
	f.Add(example)
	f.Add([]byte("stages:\n  barge_in:\n    mode: duck\n    min_speech: 0s\n    backchannels: [yeah, 嗯]\n"))
	f.Add([]byte("stages:\n  endpoint:\n    fallback_silence: -1s\n"))
	f.Add([]byte("stages: [not, a, map"))
	f.Add([]byte("device:\n  rate: 99999999999999999999\n"))
	f.Fuzz(func(t *testing.T, data []byte) {
		cfg := Config{Stages: wiring.DefaultStages()}
		if decodeConfig(data, &cfg) != nil {
			return
		}
		if cfg.Stages.Validate() != nil {
			return
		}
		out, err := yaml.Marshal(cfg)
		require.NoError(t, err)
		again := Config{Stages: wiring.DefaultStages()}
		require.NoError(t, decodeConfig(out, &again), "%s", out)
		// An empty list and no list are the same setting.
		for _, c := range []*Config{&cfg, &again} {
			if len(c.Stages.BargeIn.Backchannels) == 0 {
				c.Stages.BargeIn.Backchannels = nil
			}
			if len(c.Stages.Tools.Disable) == 0 {
				c.Stages.Tools.Disable = nil
			}
		}
		require.Equal(t, cfg, again)
	})
}

// What `config` prints is a config file that gives the same settings back,
// flags included: the way to start one's own.
func TestConfigPrintsAFileThatLoadsBack(t *testing.T) {
	a, _, out := executed(t, "config", "--llm-threads", "3", "--barge-in", "duck", "--rate", "44100", "--backchannels", "ok,sure")
	printed := a.cfg

	path := filepath.Join(t.TempDir(), "config.yaml")
	require.NoError(t, os.WriteFile(path, out.Bytes(), 0o644))
	loaded, err := loadWith(t, path)
	require.NoError(t, err)
	printed.Stages = printed.Stages.InEffect()
	assert.Equal(t, printed, loaded)
	assert.Equal(t, 3, loaded.Stages.LLMThreads)
	assert.Equal(t, pipeline.InterruptDuck, loaded.Stages.BargeIn.Mode)
	assert.Equal(t, 44100, loaded.Device.Rate)
	assert.Equal(t, []string{"ok", "sure"}, loaded.Stages.BargeIn.Backchannels)
}

// Each command offers the flags of the stages it runs: the pipeline
// commands every stage's, a single-stage command its stage's, and the
// model and device commands none.
func TestFlagsBelongToTheCommandsThatUseThem(t *testing.T) {
	pipelineFlags := []string{"vad", "vad-model", "turn", "turn-model", "asr", "asr-model-dir", "llm", "llm-model-dir",
		"llm-threads", "system-prompt", "tts", "voice", "barge-in", "speculate", "aec", "half-duplex", "script", "onnxruntime", "model-dir", "tools"}
	for _, tc := range []struct {
		command []string
		has     []string
		lacks   []string
	}{
		{[]string{"run"}, append([]string{"capture", "backend"}, pipelineFlags...), nil},
		{[]string{"replay"}, append([]string{"compute-scale"}, pipelineFlags...), []string{"capture"}},
		{[]string{"config"}, append([]string{"capture", "rate"}, pipelineFlags...), nil},
		{[]string{"bench", "pipeline"}, append([]string{"compute-scale"}, pipelineFlags...), nil},
		{[]string{"vad"}, []string{"vad", "vad-model", "vad-threads", "onnxruntime", "model-dir"}, []string{"asr", "llm-threads", "barge-in", "script"}},
		{[]string{"turn"}, []string{"turn", "turn-model", "script"}, []string{"vad", "aec"}},
		{[]string{"asr"}, []string{"asr", "asr-model-dir", "script"}, []string{"turn-model", "speculate"}},
		{[]string{"chat"}, []string{"llm", "llm-model-dir", "system-prompt", "script", "tools", "tools-disable", "notes-file"}, []string{"onnxruntime", "tts", "barge-in"}},
		{[]string{"bench", "llm"}, []string{"llm", "llm-threads"}, []string{"vad", "tts", "tools"}},
		{[]string{"bench", "stages"}, []string{"vad", "llm", "tts", "memory-budget"}, []string{"tools", "tools-disable"}},
		{[]string{"tts"}, []string{"tts", "voice", "tts-model-dir", "onnxruntime"}, []string{"script", "llm", "barge-in"}},
		{[]string{"models", "list"}, nil, pipelineFlags},
		{[]string{"models", "pull"}, []string{"mirror"}, pipelineFlags},
		{[]string{"devices"}, []string{"backend"}, pipelineFlags},
		{[]string{"version"}, []string{"onnxruntime"}, []string{"vad", "llm", "barge-in", "model-dir"}},
	} {
		t.Run(strings.Join(tc.command, " "), func(t *testing.T) {
			cmd, rest, err := newApp().root().Find(tc.command)
			require.NoError(t, err)
			require.Empty(t, rest)
			for _, name := range tc.has {
				assert.NotNil(t, cmd.Flags().Lookup(name), "--%s", name)
			}
			for _, name := range tc.lacks {
				assert.Nil(t, cmd.Flags().Lookup(name), "--%s", name)
			}
		})
	}
}

// A command typed wrong says how to type it.
func TestWrongUsageSaysWhatToType(t *testing.T) {
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"vad"}, "usage: voice-agent vad IN.wav [flags]"},
		{[]string{"models", "path", "a", "b"}, "usage: voice-agent models path [NAME] [flags]"},
		{[]string{"vad", "--modle", "x", "a.wav"}, "`voice-agent vad --help` lists its flags"},
		{[]string{"models", "list", "--llm-threads", "2"}, "`voice-agent models list --help` lists its flags"},
		{[]string{"frobnicate"}, "`voice-agent --help` lists the commands"},
	} {
		t.Run(strings.Join(tc.args, " "), func(t *testing.T) {
			root := newApp().root()
			root.SetOut(&bytes.Buffer{})
			root.SetArgs(tc.args)
			err := root.Execute()
			require.Error(t, err)
			assert.Contains(t, err.Error(), tc.want)
		})
	}
}

// A mistyped command or flag is refused (main exits 1, as for any other
// usage error) and names the command or flag that is near, where one is;
// a group typed alone still shows its help and succeeds.
func TestTyposAreRefusedWithWhatWasMeant(t *testing.T) {
	for _, tc := range []struct {
		args []string
		// want is what the error says, in order; none: no error, and the
		// help is printed.
		want []string
		// lacks is what the error must not say.
		lacks string
	}{
		{[]string{"models", "lst"}, []string{`unknown command "lst" for "voice-agent models"`, "Did you mean this? list", "`voice-agent models --help` lists the commands"}, ""},
		{[]string{"bench", "lmm"}, []string{`unknown command "lmm" for "voice-agent bench"`, "Did you mean this? llm"}, ""},
		{[]string{"voicebench", "foo"}, []string{`unknown command "foo" for "voice-agent voicebench"`, "`voice-agent voicebench --help` lists the commands"}, "Did you mean"},
		{[]string{"replya"}, []string{`unknown command "replya" for "voice-agent"`, "Did you mean this? replay", "`voice-agent --help` lists the commands"}, ""},
		{[]string{"run", "--spekulate"}, []string{"unknown flag: --spekulate", "Did you mean this? --speculate", "`voice-agent run --help` lists its flags"}, ""},
		{[]string{"models", "pull", "--mirorr", "x"}, []string{"unknown flag: --mirorr", "Did you mean this? --mirror", "`voice-agent models pull --help` lists its flags"}, ""},
		{[]string{"models", "list", "--frobnicate"}, []string{"unknown flag: --frobnicate"}, "Did you mean"},
		{[]string{"vad", "-x", "a.wav"}, []string{"unknown shorthand flag"}, "Did you mean"},
		{[]string{"models"}, nil, ""},
		{[]string{"bench"}, nil, ""},
	} {
		t.Run(strings.Join(tc.args, " "), func(t *testing.T) {
			root := newApp().root()
			var out bytes.Buffer
			root.SetOut(&out)
			empty := filepath.Join(t.TempDir(), "empty.yaml")
			require.NoError(t, os.WriteFile(empty, nil, 0o644))
			root.SetArgs(append(tc.args, "--config", empty))
			err := root.Execute()
			if tc.want == nil {
				require.NoError(t, err)
				assert.Contains(t, out.String(), "Available Commands:")
				return
			}
			require.Error(t, err)
			msg := err.Error()
			for _, w := range tc.want {
				i := strings.Index(msg, w)
				require.GreaterOrEqual(t, i, 0, "%q lacks %q", msg, w)
				msg = msg[i+len(w):]
			}
			if tc.lacks != "" {
				assert.NotContains(t, err.Error(), tc.lacks)
			}
		})
	}
}

// `config` prints the values the stages run with where a setting is left
// to its engine's default, the ones --help states, not the zero that
// stands for them.
func TestConfigPrintsTheDefaultsInEffect(t *testing.T) {
	_, root, out := executed(t, "config")
	var printed Config
	require.NoError(t, yaml.Unmarshal(out.Bytes(), &printed))

	config, _, err := root.Find([]string{"config"})
	require.NoError(t, err)
	st := printed.Stages
	for _, tc := range []struct {
		flag    string
		printed any
	}{
		{"voice", st.Voice},
		{"llm-threads", st.LLMThreads},
		{"llm-max-tokens", st.LLMMaxTokens},
		{"vad-threads", st.VADThreads},
		{"turn-threads", st.TurnThreads},
		{"asr-threads", st.ASRThreads},
		{"tts-threads", st.TTSThreads},
	} {
		t.Run(tc.flag, func(t *testing.T) {
			assert.NotZero(t, tc.printed)
			assert.Contains(t, config.Flags().Lookup(tc.flag).Usage, fmt.Sprintf("(default %v", tc.printed), "--help states the default printed")
		})
	}
}

// A flag's value follows it as the next argument, as the docs write it,
// or after "=": `--barge-in off` must not leave "off" to the command as an
// argument of its own.
func TestBargeInTakesItsValueEitherWay(t *testing.T) {
	empty := filepath.Join(t.TempDir(), "empty.yaml")
	require.NoError(t, os.WriteFile(empty, nil, 0o644))
	for _, tc := range []struct {
		args []string
		want pipeline.InterruptMode
		err  string
	}{
		{[]string{"--barge-in", "off"}, pipeline.InterruptOff, ""},
		{[]string{"--barge-in=duck"}, pipeline.InterruptDuck, ""},
		{[]string{"--barge-in"}, "", "flag needs an argument: --barge-in"},
	} {
		t.Run(strings.Join(tc.args, " "), func(t *testing.T) {
			cfg, err := loadWith(t, empty, tc.args...)
			if tc.err != "" {
				require.ErrorContains(t, err, tc.err)
				return
			}
			require.NoError(t, err)
			assert.Equal(t, tc.want, cfg.Stages.BargeIn.Mode)
		})
	}
}

// A bool flag's usage line names no argument: pflag takes a backquoted
// word in a flag's usage for the name of its argument, and `--version
// voice-agent version` read as if it took one.
func TestBoolFlagsShowNoArgument(t *testing.T) {
	eachCommand(newApp().root(), func(c *cobra.Command) {
		c.Flags().VisitAll(func(f *pflag.Flag) {
			if f.Value.Type() == "bool" {
				name, _ := pflag.UnquoteUsage(f)
				assert.Empty(t, name, "%s --%s", c.CommandPath(), f.Name)
			}
		})
	})
}

// The models' stand-ins are called so wherever the help names them: no
// command's help says "test double" (their name before).
func TestHelpCallsStandInsSo(t *testing.T) {
	root := newApp().root()
	var all strings.Builder
	eachCommand(root, func(c *cobra.Command) {
		var help strings.Builder
		root.SetOut(&help)
		require.NoError(t, c.Help())
		assert.NotRegexp(t, `(?i)\bdoubles?\b`, help.String(), "%s --help", c.CommandPath())
		all.WriteString(help.String())
	})
	assert.Contains(t, all.String(), "energy (stand-in)", "the stage flags mark the stand-ins")
}

// eachCommand calls f with c and every command under it.
func eachCommand(c *cobra.Command, f func(*cobra.Command)) {
	f(c)
	for _, sub := range c.Commands() {
		eachCommand(sub, f)
	}
}

// A recording in another format is named, with how to convert it, by the
// command that reads it.
func TestReplayOfAnMP3SaysHowToConvertIt(t *testing.T) {
	dir := t.TempDir()
	empty := filepath.Join(dir, "empty.yaml")
	require.NoError(t, os.WriteFile(empty, nil, 0o644))
	mp3 := filepath.Join(dir, "talk.mp3")
	require.NoError(t, os.WriteFile(mp3, append([]byte("ID3\x04\x00\x00\x00\x00\x00\x00"), make([]byte, 100)...), 0o644))
	root := newApp().root()
	root.SetOut(&bytes.Buffer{})
	root.SetArgs([]string{"replay", mp3, "--config", empty})
	err := root.Execute()
	require.ErrorContains(t, err, "not a WAV file but MP3 audio")
	assert.ErrorContains(t, err, "ffmpeg -i IN -ar 16000 -ac 1 OUT.wav")
}

// executed runs the command line with an empty config file, and returns
// the app, its command tree and what it printed.
func executed(t *testing.T, args ...string) (*app, *cobra.Command, *bytes.Buffer) {
	t.Helper()
	a := newApp()
	root := a.root()
	var out bytes.Buffer
	root.SetOut(&out)
	empty := filepath.Join(t.TempDir(), "empty.yaml")
	require.NoError(t, os.WriteFile(empty, nil, 0o644))
	root.SetArgs(append(args, "--config", empty))
	require.NoError(t, root.Execute())
	return a, root, &out
}

// Ctrl-C while an engine makes a model's derived weights (in C++, which
// no context reaches: 15 s for the full-size X-ASR) ends the process a
// grace later, with the signal's code; a process that holds no derived
// folder, or that ends without a signal, is left to end its own way; and
// the watch ends when asked, leaving no goroutine for the leak check.
func TestInterruptAbandonsADerivation(t *testing.T) {
	for _, tc := range []struct {
		name     string
		holding  bool
		cause    error
		wantExit int
	}{
		{"Ctrl-C while deriving", true, interrupted{os.Interrupt}, 130},
		{"SIGTERM while deriving", true, interrupted{syscall.SIGTERM}, 143},
		{"Ctrl-C after the models loaded", false, interrupted{os.Interrupt}, 0},
		{"a normal end while deriving", true, nil, 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Setenv("XDG_CACHE_HOME", t.TempDir())
			if tc.holding {
				weights := filepath.Join(t.TempDir(), "model.onnx")
				require.NoError(t, os.WriteFile(weights, []byte("weights"), 0o644))
				_, release, err := derived.Acquire("onnxruntime", "1", weights)
				require.NoError(t, err)
				defer release()
			}
			ctx, cancel := context.WithCancelCause(context.Background())
			exited := make(chan int, 1)
			stop := abandonDerivation(ctx, 10*time.Millisecond, func(code int) { exited <- code })
			cancel(tc.cause)
			got := 0
			select {
			case got = <-exited:
			case <-time.After(200 * time.Millisecond):
			}
			stop()
			assert.Equal(t, tc.wantExit, got)
		})
	}
}
