// Command voice-agent is the headless voice assistant: live on the
// microphone and speaker (run), over recorded audio (replay), and the
// device list (devices).
package main

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"os/signal"
	"path/filepath"
	"strings"
	"syscall"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"
	"gopkg.in/yaml.v3"

	"github.com/voiceassistant/voice/assets"
	"github.com/voiceassistant/voice/audio/device"
	"github.com/voiceassistant/voice/internal/wiring"
	"github.com/voiceassistant/voice/pipeline"
)

// Config is the config file: every knob, overridable by flags.
type Config struct {
	Stages wiring.Stages `yaml:"stages"`
	Device device.Config `yaml:"device"`
	// ModelsCache is where pulled models live; --models-cache and
	// $VOICE_MODELS win over it.
	ModelsCache string `yaml:"models_cache"`
	// LogLevel, LogFormat and JSON are --log-level, --log-format and
	// --json: what a headless agent reports, and how, to its supervisor.
	LogLevel  string `yaml:"log_level"`
	LogFormat string `yaml:"log_format"`
	JSON      bool   `yaml:"json"`
}

// optionalCommands are the commands a build may leave out (by build tag):
// the benchmark harness is not for the glasses.
var optionalCommands []func(*app) *cobra.Command

type app struct {
	configPath string
	// json is cfg.JSON once the config is loaded.
	json bool
	// modelsCache overrides where pulled models live.
	modelsCache string
	cfg         Config
	log         *slog.Logger
}

func main() {
	a := &app{cfg: Config{Stages: wiring.DefaultStages()}}
	root := a.root()
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	err := root.ExecuteContext(ctx)
	stop()
	if err == nil {
		err = checkLeaks()
	}
	if err != nil {
		// Joined errors (several missing models) get a line each; the
		// detail behind them (where each model was looked for) only when
		// asked for.
		for _, line := range strings.Split(err.Error(), "\n") {
			fmt.Fprintf(os.Stderr, "voice-agent: %s\n", line)
		}
		if details := wiring.Details(err); len(details) > 0 {
			if a.cfg.LogLevel == "debug" {
				for _, d := range details {
					fmt.Fprintf(os.Stderr, "voice-agent: %s\n", d)
				}
			} else {
				fmt.Fprintln(os.Stderr, "voice-agent: --log-level debug says where each was looked for and how to get it by hand")
			}
		}
		os.Exit(1)
	}
}

func (a *app) root() *cobra.Command {
	var version bool
	root := &cobra.Command{
		Use:           "voice-agent",
		Short:         "On-device streaming voice assistant",
		SilenceUsage:  true,
		SilenceErrors: true,
		Args:          cobra.NoArgs,
		PersistentPreRunE: func(cmd *cobra.Command, _ []string) error {
			return a.setup(cmd)
		},
		RunE: func(cmd *cobra.Command, _ []string) error {
			if !version {
				return cmd.Help()
			}
			readBuildVersion(a.cfg.Stages.ONNXRuntime).print(cmd.OutOrStdout())
			return nil
		},
	}
	root.Flags().BoolVar(&version, "version", false, "print the version, commit, build tags and engines (as `voice-agent version`)")
	pf := root.PersistentFlags()
	pf.StringVar(&a.configPath, "config", "", "config file (YAML; default $XDG_CONFIG_HOME/voice-agent/config.yaml if present)")
	pf.StringVar(&a.cfg.LogLevel, "log-level", "info", "debug, info, warn or error")
	pf.StringVar(&a.cfg.LogFormat, "log-format", "text", "log format on stderr: text or json")
	pf.BoolVar(&a.cfg.JSON, "json", false, "print events as JSON lines on stdout")
	pf.StringVar(&a.modelsCache, "models-cache", "", "model cache directory (default $VOICE_MODELS, else $XDG_DATA_HOME/voice-agent/models)")
	st := &a.cfg.Stages
	st.AddBackendFlags(pf)
	pf.StringVar(&st.ModelDir, "model-dir", "", "model directory")
	pf.StringVar(&st.VADModel, "vad-model", "", "Silero VAD model (default: model directory, then third_party/models)")
	pf.StringVar(&st.TurnModel, "turn-model", "", "Smart Turn model (default: model directory, then third_party/models)")
	pf.StringVar(&st.LLMModelDir, "llm-model-dir", "", "MNN LLM export directory (default: <model dir>/mnn-pocket-0.3b-int4, then the model directory itself)")
	pf.IntVar(&st.LLMThreads, "llm-threads", 0, "LLM CPU threads (default: one per core but one, at most 4)")
	pf.IntVar(&st.LLMMaxTokens, "llm-max-tokens", 0, "longest reply of the MNN LLM, in tokens (default 512)")
	pf.IntVar(&st.VADThreads, "vad-threads", 0, "VAD model CPU threads (default 1)")
	pf.IntVar(&st.TurnThreads, "turn-threads", 0, "Smart Turn model CPU threads (default 1)")
	pf.IntVar(&st.ASRThreads, "asr-threads", 0, "ASR model CPU threads (default 1)")
	pf.IntVar(&st.TTSThreads, "tts-threads", 0, "TTS model CPU threads (default 1)")
	pf.StringVar(&st.TTSModelDir, "tts-model-dir", "", "MOSS-TTS-Nano ONNX set (default: <model dir>/MOSS-TTS-Nano-100M-ONNX)")
	pf.StringVar(&st.TTSCodecDir, "tts-codec-dir", "", "MOSS audio tokenizer ONNX (default: where the TTS set's manifest points)")
	pf.StringVar(&st.Voice, "voice", "", "built-in voice of the synthesizer (default Junhao)")
	pf.StringVar(&st.ASRModelDir, "asr-model-dir", "", "X-ASR model directory (default: <model dir>/xasr-zh-en-streaming-160ms, the model directory itself, then third_party/models)")
	pf.StringVar(&st.SystemPrompt, "system-prompt", st.SystemPrompt, "system prompt")
	pf.Var(&st.BargeIn.Mode, "barge-in", "when the user speaks over a reply: pause it and decide (cancel or resume), duck it and decide, or off (let it finish; the speech is the next turn)")
	pf.Lookup("barge-in").NoOptDefVal = string(pipeline.InterruptPause)
	pf.BoolVar(&st.Speculate, "speculate", st.Speculate, "start the reply at the user's first pause, before the turn is committed (with an LLM that can take it back)")
	pf.IntVar(&st.Chunk.FirstWords, "first-chunk-words", st.Chunk.FirstWords, "end the first chunk for synthesis after this many words (0: at a clause or sentence)")
	pf.DurationVar(&st.BargeIn.MinSpeech, "barge-in-min-speech", st.BargeIn.MinSpeech, "speech this long interrupts even before it has words (0: at once)")
	pf.IntVar(&st.BargeIn.MinWords, "barge-in-min-words", st.BargeIn.MinWords, "words, backchannels aside, that interrupt (0: only --barge-in-min-speech decides)")
	pf.DurationVar(&st.BargeIn.ResumeAfter, "barge-in-resume-after", st.BargeIn.ResumeAfter, "after a sound that did not interrupt, play on once this much silence has passed")
	pf.StringSliceVar(&st.BargeIn.Backchannels, "backchannels", st.BargeIn.Backchannels, "words and phrases that never interrupt (comma-separated)")
	pf.BoolVar(&st.FrontEnd.AEC, "aec", st.FrontEnd.AEC, "echo cancellation (with a build with -tags webrtcapm)")
	pf.BoolVar(&st.FrontEnd.NS, "ns", st.FrontEnd.NS, "noise suppression")
	pf.BoolVar(&st.FrontEnd.AGC, "agc", st.FrontEnd.AGC, "automatic gain control")
	pf.BoolVar(&st.FrontEnd.HalfDuplex, "half-duplex", st.FrontEnd.HalfDuplex, "close the microphone while the assistant speaks")
	root.AddCommand(a.versionCmd(), a.runCmd(), a.replayCmd(), a.devicesCmd(), a.vadCmd(), a.turnCmd(), a.asrCmd(), a.chatCmd(), a.benchCmd(), a.ttsCmd(), a.modelsCmd())
	for _, c := range optionalCommands {
		root.AddCommand(c(a))
	}
	return root
}

// setup makes the logger, loads the config file and points the model
// cache.
func (a *app) setup(cmd *cobra.Command) error {
	path, err := a.loadConfig(cmd)
	if err != nil {
		return err
	}
	if err := a.cfg.Stages.Validate(); err != nil {
		return err
	}
	if a.log, err = newLogger(os.Stderr, a.cfg.LogLevel, a.cfg.LogFormat); err != nil {
		return err
	}
	if path != "" {
		a.log.Debug("config loaded", "path", path)
	}
	a.json = a.cfg.JSON
	// The cache is found through the environment everywhere
	// (assets.CacheDir): the flag wins, then $VOICE_MODELS, then the file.
	cache := a.modelsCache
	if cache == "" && os.Getenv(assets.EnvCache) == "" {
		cache = a.cfg.ModelsCache
	}
	if cache != "" {
		return os.Setenv(assets.EnvCache, cache)
	}
	return nil
}

// loadConfig loads the config file under the flags: values from the file
// apply unless the same setting was given as a flag. It returns the file
// loaded, "" if none.
func (a *app) loadConfig(cmd *cobra.Command) (string, error) {
	path := a.configPath
	if path == "" {
		dir, err := os.UserConfigDir()
		if err != nil {
			return "", nil
		}
		path = filepath.Join(dir, "voice-agent", "config.yaml")
		if _, err := os.Stat(path); errors.Is(err, os.ErrNotExist) {
			return "", nil
		}
	}
	data, err := os.ReadFile(path)
	if err != nil {
		return "", fmt.Errorf("config: %w", err)
	}
	// Flags win over the file: remember the ones given, load the file over
	// everything, then give those flags again. (A list flag is put back
	// whole: setting it again would append.)
	given := map[string]string{}
	lists := map[pflag.SliceValue][]string{}
	cmd.Flags().Visit(func(f *pflag.Flag) {
		if l, ok := f.Value.(pflag.SliceValue); ok {
			lists[l] = l.GetSlice()
		} else {
			given[f.Name] = f.Value.String()
		}
	})
	if err := decodeConfig(data, &a.cfg); err != nil {
		return "", fmt.Errorf("config %s: %w", path, err)
	}
	for name, v := range given {
		if err := cmd.Flags().Set(name, v); err != nil {
			return "", err
		}
	}
	for l, v := range lists {
		if err := l.Replace(v); err != nil {
			return "", err
		}
	}
	return path, nil
}

// decodeConfig reads a config file over cfg: keys it has replace cfg's
// values, the rest stay.
func decodeConfig(data []byte, cfg *Config) error {
	// A misspelt knob is an error, not a silently ignored line: on a
	// headless device nobody would notice the default still applies.
	dec := yaml.NewDecoder(bytes.NewReader(data))
	dec.KnownFields(true)
	if err := dec.Decode(cfg); err != nil && !errors.Is(err, io.EOF) {
		return err
	}
	return nil
}
