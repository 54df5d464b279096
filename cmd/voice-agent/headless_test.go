package main

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"reflect"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.yaml.in/yaml/v3"

	"github.com/voiceassistant/voice/wiring"
)

const exampleConfig = "../../configs/voice-agent.yaml"

// loadWith runs `config` (which takes every flag and opens nothing) under
// the given config file and returns the configuration it ended up with.
func loadWith(t *testing.T, path string, flags ...string) (Config, error) {
	t.Helper()
	a := newApp()
	root := a.root()
	root.SetOut(&bytes.Buffer{})
	root.SetArgs(append([]string{"config", "--config", path}, flags...))
	err := root.Execute()
	return a.cfg, err
}

func TestExampleConfigLoads(t *testing.T) {
	cfg, err := loadWith(t, exampleConfig, "--llm-threads", "3")
	require.NoError(t, err)
	assert.Equal(t, 3, cfg.Stages.LLMThreads, "the flag wins")
	assert.Equal(t, 1, cfg.Stages.TTSThreads)
	assert.Equal(t, 20*time.Millisecond, cfg.Device.Period)
	assert.Equal(t, 2*time.Second, cfg.Device.PlaybackBuffer)
	assert.True(t, cfg.JSON)
	assert.Equal(t, wiring.DefaultStages().Endpoint, cfg.Stages.Endpoint, "the example spells out the defaults")
	assert.Equal(t, wiring.DefaultStages().VADTuning, cfg.Stages.VADTuning, "the example spells out the defaults")
}

// TestExampleConfigHasEveryKnob keeps the example in step with Config: a
// knob added to the code and not to the example fails here.
func TestExampleConfigHasEveryKnob(t *testing.T) {
	data, err := os.ReadFile(exampleConfig)
	require.NoError(t, err)
	var doc yaml.Node
	require.NoError(t, yaml.Unmarshal(data, &doc))
	var inFile []string
	nodeKeys(doc.Content[0], "", &inFile)
	var inCode []string
	typeKeys(reflect.TypeFor[Config](), "", &inCode)
	sort.Strings(inFile)
	sort.Strings(inCode)
	assert.Equal(t, inCode, inFile)
}

func nodeKeys(n *yaml.Node, prefix string, keys *[]string) {
	for i := 0; i+1 < len(n.Content); i += 2 {
		key, val := prefix+n.Content[i].Value, n.Content[i+1]
		if val.Kind == yaml.MappingNode {
			nodeKeys(val, key+".", keys)
			continue
		}
		*keys = append(*keys, key)
	}
}

func typeKeys(t reflect.Type, prefix string, keys *[]string) {
	for f := range t.Fields() {
		name, _, _ := strings.Cut(f.Tag.Get("yaml"), ",")
		if name == "-" || !f.IsExported() {
			continue
		}
		key := prefix + name
		if f.Type.Kind() == reflect.Struct { // a section
			typeKeys(f.Type, key+".", keys)
			continue
		}
		*keys = append(*keys, key)
	}
}

func TestConfigFileErrors(t *testing.T) {
	for _, tc := range []struct {
		name, file string
		want       []string
	}{
		{"misspelt knob", "stages:\n  llm_thread: 2\n", []string{"line 2: unknown key stages.llm_thread; did you mean llm_threads?"}},
		{"misspelt nested knob", "stages:\n  barge_in:\n    min_speach: 1s\n", []string{"line 3: unknown key stages.barge_in.min_speach; did you mean min_speech?"}},
		{"misspelt section", "devices:\n  rate: 16000\n", []string{"line 1: unknown key devices; did you mean device?"}},
		{"unknown knob", "stages:\n  frobnicate: 1\n", []string{"unknown key stages.frobnicate (`voice-agent config` prints every key)"}},
		{"wrong type", "stages:\n  vad_threads: many\n", []string{`line 2: stages.vad_threads: want a whole number, not "many"`}},
		// yaml alone cuts these to 1 and 1ns, without a word.
		{"a fraction for a whole number", "stages:\n  memory_budget: 1.5\n", []string{`line 2: stages.memory_budget: want a whole number, not "1.5"`}},
		{"a bare number for a duration", "stages:\n  barge_in:\n    min_speech: 1.5\n", []string{`line 3: stages.barge_in.min_speech: want a duration such as 250ms or 1.5s, not "1.5"`}},
		{"a budget past any device", "stages:\n  memory_budget: 17592186044417\n", []string{"stages.memory_budget: 17592186044417 MiB is not between 0 (no budget) and 1048576 (1 TiB)"}},
		{"not a duration", "stages:\n  barge_in:\n    min_speech: soon\n", []string{`line 3: stages.barge_in.min_speech: want a duration such as 250ms or 1.5s, not "soon"`}},
		{"a list for a word", "stages:\n  barge_in:\n    backchannels: yeah\n", []string{`stages.barge_in.backchannels: want a list such as [a, b], not "yeah"`}},
		{"a value for a section", "stages: 5\n", []string{`line 1: stages: want its keys indented below it, not "5"`}},
		{"a mode's own error", "stages:\n  barge_in:\n    mode: sometimes\n", []string{`line 3: stages.barge_in.mode: "sometimes" is not a barge-in mode`}},
		{"every error", "stages:\n  llm_thread: 2\n  asr_threads: x\n", []string{"line 2: unknown key stages.llm_thread", "line 3: stages.asr_threads"}},
		{"unknown log format", "log_format: xml\n", []string{`log format "xml"`}},
		{"unknown log level", "log_level: loud\n", []string{"log level"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "config.yaml")
			require.NoError(t, os.WriteFile(path, []byte(tc.file), 0o644))
			_, err := loadWith(t, path)
			require.Error(t, err)
			for _, w := range tc.want {
				assert.Contains(t, err.Error(), w)
			}
			// The file's keys, not the Go types they decode into.
			assert.NotRegexp(t, `main\.Config|pipeline\.|wiring\.|\bin type\b`, err.Error())
		})
	}
}

// A value out of range in the config file is named by the file and the
// key's line, as a value of the wrong type is (bug: "config:
// stages.history_tokens: -1 is negative", no file, no line); a flag's is
// named by its key alone, and a flag over a bad file value wins, as it
// does over any.
func TestConfigRangeErrorsNameFileAndLine(t *testing.T) {
	for _, tc := range []struct {
		name, file string
		flags      []string
		want       string // after "config PATH: "; "-": no error
	}{
		{"a token budget", "stages:\n  llm_threads: 2\n  history_tokens: -1\n", nil, "line 3: stages.history_tokens: -1 is negative (0 means no bound)"},
		{"a nested duration", "stages:\n  barge_in:\n    mode: duck\n    min_speech: -1s\n", nil, "line 4: stages.barge_in.min_speech: -1s is not between 0 and 1h"},
		{"two keys apart", "stages:\n  endpoint:\n    candidate_silence: 5s\n    fallback_silence: 1s\n", nil, "line 4: stages.endpoint.fallback_silence: 1s is shorter than candidate_silence 5s"},
		{"a device rate", "log_level: info\ndevice:\n  rate: 7\n", nil, "line 3: device.rate: 7 Hz is out of range (8000..384000)"},
		{"a key named inside its section's error", "stages:\n  vad_tuning:\n    min_speech: 250ms\n    threshold: 5\n", nil, "line 4: stages.vad_tuning: vad: threshold 5 out of range"},
		{"a flag over a bad file value", "device:\n  rate: 7\n", []string{"--rate", "16000"}, "-"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "config.yaml")
			require.NoError(t, os.WriteFile(path, []byte(tc.file), 0o644))
			_, err := loadWith(t, path, tc.flags...)
			if tc.want == "-" {
				require.NoError(t, err)
				return
			}
			require.Error(t, err)
			assert.Truef(t, strings.HasPrefix(err.Error(), "config "+path+": "+tc.want), "%v", err)
		})
	}
	path := filepath.Join(t.TempDir(), "config.yaml")
	require.NoError(t, os.WriteFile(path, []byte("stages:\n  llm_threads: 2\n"), 0o644))
	_, err := loadWith(t, path, "--llm-threads", "999")
	require.EqualError(t, err, "config: stages.llm_threads: 999 is not between 0 (the default) and 256", "a flag's value is not the file's")
}

func TestEmptyConfigFileKeepsDefaults(t *testing.T) {
	path := filepath.Join(t.TempDir(), "config.yaml")
	require.NoError(t, os.WriteFile(path, []byte("# nothing set\n"), 0o644))
	cfg, err := loadWith(t, path)
	require.NoError(t, err)
	assert.Equal(t, wiring.DefaultStages(), cfg.Stages)
}

func TestLoggerFormats(t *testing.T) {
	for _, tc := range []struct {
		format string
		want   string
	}{
		{"text", `level=WARN msg=hello n=1`},
		{"", `level=WARN msg=hello n=1`},
		{"json", `"level":"WARN","msg":"hello","n":1}`},
	} {
		var buf bytes.Buffer
		log, err := newLogger(&buf, "warn", tc.format)
		require.NoError(t, err)
		log.Info("dropped below the level")
		log.Warn("hello", "n", 1)
		assert.Contains(t, buf.String(), tc.want, tc.format)
		assert.NotContains(t, buf.String(), "dropped", tc.format)
	}
}

// devices --json lists the devices as the events are written: lower_snake
// keys.
func TestDevicesJSON(t *testing.T) {
	_, _, out := executed(t, "devices", "--backend", "null", "--json")
	var infos []map[string]any
	require.NoError(t, json.Unmarshal(out.Bytes(), &infos), out.String())
	require.NotEmpty(t, infos)
	for _, in := range infos {
		assert.Contains(t, []any{"capture", "playback"}, in["kind"])
		assert.Contains(t, in, "name")
		assert.Contains(t, in, "default")
	}
}
