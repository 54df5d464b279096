package main

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"
	"go.yaml.in/yaml/v3"

	"github.com/voiceassistant/voice/audio/device"
	"github.com/voiceassistant/voice/internal/wiring"
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
	data, err := readConfigFile(path)
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

// maxConfigSize bounds the config file: every setting written out is a few
// kB, and YAML's decoder holds many times a file's size (an 11 MB list took
// 1 GB), so a larger file is a mistake to refuse, not to parse.
const maxConfigSize = 1 << 20

func readConfigFile(path string) ([]byte, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	data, err := io.ReadAll(io.LimitReader(f, maxConfigSize+1))
	if err != nil {
		return nil, err
	}
	if len(data) > maxConfigSize {
		return nil, fmt.Errorf("%s is larger than %d KiB; a config file holds settings only (voice-agent config prints them all)", path, maxConfigSize>>10)
	}
	return data, nil
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

// configCmd prints the settings in effect as a config file: the way to
// see what the defaults, the file and the flags add up to, and to start a
// config file of one's own.
func (a *app) configCmd() *cobra.Command {
	cmd := &cobra.Command{
		Use: "config",
		Example: `  voice-agent config
  voice-agent config --llm-threads 2 --barge-in=duck > ~/.config/voice-agent/config.yaml`,
		Short: "Print the settings in effect (defaults, config file and flags) as a config file",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			enc := yaml.NewEncoder(cmd.OutOrStdout())
			enc.SetIndent(2)
			return errors.Join(enc.Encode(a.cfg), enc.Close())
		},
	}
	a.deviceFlags(cmd.Flags())
	return a.stageFlags(cmd, wiring.PipelineFlags)
}

// deviceFlags are the sound card's settings, for the commands that open it.
func (a *app) deviceFlags(f *pflag.FlagSet) {
	d := &a.cfg.Device
	f.StringVar(&d.Backend, "backend", d.Backend, "audio backend: pulseaudio, alsa, null (default: automatic)")
	f.StringVar(&d.Capture, "capture", d.Capture, "capture device name (default: system default)")
	f.StringVar(&d.Playback, "playback", d.Playback, "playback device name (default: system default)")
	f.IntVar(&d.Rate, "rate", d.Rate, "device sample rate")
}
