package main

import (
	"bytes"
	"cmp"
	"errors"
	"fmt"
	"io"
	"maps"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"
	"go.yaml.in/yaml/v3"

	"github.com/voiceassistant/voice/audio/device"
	"github.com/voiceassistant/voice/control"
	"github.com/voiceassistant/voice/wiring"
)

// Config is the config file: every knob, overridable by flags.
type Config struct {
	Stages wiring.Stages `yaml:"stages"`
	Device device.Config `yaml:"device"`
	// Control is the control socket `run` serves and `ctl` talks to.
	Control control.Config `yaml:"control"`
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
	if err := a.cfg.validate(); err != nil {
		return "", inFile(path, data, err)
	}
	return path, nil
}

// validate reports the first setting out of its range, by its key.
func (c Config) validate() error {
	if err := c.Stages.Validate(); err != nil {
		return err
	}
	return c.Device.Validate()
}

// inFile is err, from validating the settings in effect, with the file
// and line of the key it names where the file's settings alone give it:
// a value out of range is found after decoding, where yaml's lines are
// gone, and a flag's value is no line of the file.
func inFile(path string, data []byte, err error) error {
	alone := newApp().cfg
	if decodeConfig(data, &alone) != nil {
		return err
	}
	if fileErr := alone.validate(); fileErr == nil || fileErr.Error() != err.Error() {
		return err
	}
	where := "config " + path + ": "
	if line := keyLine(data, err.Error()); line > 0 {
		where += fmt.Sprintf("line %d: ", line)
	}
	return lineError{where: where, err: err}
}

// lineError is a setting's error with where the file has it, said once:
// the settings' own errors start with "config: ".
type lineError struct {
	where string
	err   error
}

func (e lineError) Error() string { return e.where + strings.TrimPrefix(e.err.Error(), "config: ") }
func (e lineError) Unwrap() error { return e.err }

// keyLine is the line in the config file data of the longest key path
// (stages.barge_in.min_speech) that msg names, or of the key under it
// that msg names by its own name (stages.vad_tuning: vad: threshold 5 ...);
// 0 if it names none.
func keyLine(data []byte, msg string) int {
	var doc yaml.Node
	if yaml.Unmarshal(data, &doc) != nil || len(doc.Content) == 0 {
		return 0
	}
	best, line := "", 0
	var section *yaml.Node
	var walk func(n *yaml.Node, prefix string)
	walk = func(n *yaml.Node, prefix string) {
		if n.Kind != yaml.MappingNode {
			return
		}
		for i := 0; i+1 < len(n.Content); i += 2 {
			key := prefix + n.Content[i].Value
			if len(key) > len(best) && namesKey(msg, key) {
				best, line, section = key, n.Content[i].Line, n.Content[i+1]
			}
			walk(n.Content[i+1], key+".")
		}
	}
	walk(doc.Content[0], "")
	if section != nil && section.Kind == yaml.MappingNode {
		for i := 0; i+1 < len(section.Content); i += 2 {
			if namesKey(msg, section.Content[i].Value) {
				return section.Content[i].Line
			}
		}
	}
	return line
}

// namesKey tells whether msg has key as a whole key path, not as the
// start or end of a longer one.
func namesKey(msg, key string) bool {
	partOfKey := func(b byte) bool { return b == '_' || b == '.' || b >= 'a' && b <= 'z' || b >= '0' && b <= '9' }
	for i := 0; ; {
		j := strings.Index(msg[i:], key)
		if j < 0 {
			return false
		}
		start, end := i+j, i+j+len(key)
		if (start == 0 || !partOfKey(msg[start-1])) && (end == len(msg) || !partOfKey(msg[end])) {
			return true
		}
		i = start + 1
	}
}

// maxConfigSize bounds the config file: every setting written out is a few
// kB, and YAML's decoder holds many times a file's size (an 11 MB list took
// 1 GB), so a larger file is a mistake to refuse, not to parse.
const maxConfigSize = 1 << 20

func readConfigFile(path string) ([]byte, error) {
	// A FIFO (or a device) would block the open until someone writes,
	// where Ctrl-C cannot reach: only a file is a config file.
	info, err := os.Stat(path)
	if err != nil {
		return nil, err
	}
	if !info.Mode().IsRegular() {
		return nil, fmt.Errorf("%s is not a file (%s); a config file is a YAML file (voice-agent config prints one)", path, info.Mode().Type())
	}
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
	err := dec.Decode(cfg)
	if errors.Is(err, io.EOF) {
		return nil
	}
	// yaml's errors name Go's types (field min_speach not found in type
	// pipeline.BargeIn); a person editing the file knows its keys, so what
	// can be said in those is. It is asked even when yaml took the file:
	// yaml cuts 1.5 to 1 for a whole-number setting, without a word.
	var doc yaml.Node
	if yaml.Unmarshal(data, &doc) != nil || len(doc.Content) == 0 {
		return err
	}
	var errs []error
	checkNode(doc.Content[0], reflect.TypeFor[Config](), "", &errs)
	if len(errs) == 0 {
		return err
	}
	return errors.Join(errs...)
}

// checkNode adds to errs what in n, the value of the key path, does not
// fit t, the type it is decoded into: a key t has not (with the nearest it
// has) and a value not of its setting's kind, each with its line.
func checkNode(n *yaml.Node, t reflect.Type, path string, errs *[]error) {
	if n.Kind == yaml.AliasNode {
		// Left to yaml's message: walking an anchor's value again at
		// each of its aliases is what yaml bounds, as file bombs do it.
		return
	}
	if t.Kind() != reflect.Struct { // a setting
		err := n.Decode(reflect.New(t).Interface())
		if k := t.Kind(); err == nil && k >= reflect.Int && k <= reflect.Uint64 && n.ShortTag() == "!!float" {
			err = &yaml.TypeError{}
		}
		if err != nil {
			*errs = append(*errs, fmt.Errorf("line %d: %s: %w", n.Line, path, valueError(n, t, err)))
		}
		return
	}
	// A section.
	if n.Kind != yaml.MappingNode {
		if n.Tag != "!!null" {
			*errs = append(*errs, fmt.Errorf("line %d: %s: want its keys indented below it, not %s", n.Line, cmp.Or(path, "the file"), given(n)))
		}
		return
	}
	keys := map[string]reflect.Type{}
	for f := range t.Fields() {
		name, _, _ := strings.Cut(f.Tag.Get("yaml"), ",")
		if f.IsExported() && name != "-" {
			keys[cmp.Or(name, strings.ToLower(f.Name))] = f.Type
		}
	}
	for i := 0; i+1 < len(n.Content); i += 2 {
		k, v := n.Content[i], n.Content[i+1]
		key := k.Value
		if path != "" {
			key = path + "." + k.Value
		}
		if ft, ok := keys[k.Value]; ok {
			checkNode(v, ft, key, errs)
			continue
		}
		if near := nearest(k.Value, slices.Collect(maps.Keys(keys))); near != "" {
			*errs = append(*errs, fmt.Errorf("line %d: unknown key %s; did you mean %s?", k.Line, key, near))
		} else {
			*errs = append(*errs, fmt.Errorf("line %d: unknown key %s (`voice-agent config` prints every key)", k.Line, key))
		}
	}
}

// valueError says what a setting of type t wants instead of n. The error
// of a type that parses itself (a barge-in mode) already says so.
func valueError(n *yaml.Node, t reflect.Type, err error) error {
	if _, ok := errors.AsType[*yaml.TypeError](err); !ok {
		return err
	}
	var want string
	switch k := t.Kind(); {
	case t == reflect.TypeFor[time.Duration]():
		want = "a duration such as 250ms or 1.5s"
	case k == reflect.Bool:
		want = "true or false"
	case k >= reflect.Int && k <= reflect.Uint64:
		want = "a whole number"
	case k == reflect.Float32 || k == reflect.Float64:
		want = "a number"
	case k == reflect.Slice:
		want = "a list such as [a, b]"
	default:
		want = "a " + k.String()
	}
	return fmt.Errorf("want %s, not %s", want, given(n))
}

// given names a value as the file has it.
func given(n *yaml.Node) string {
	switch n.Kind {
	case yaml.SequenceNode:
		return "a list"
	case yaml.MappingNode:
		return "keys"
	}
	return strconv.Quote(n.Value)
}

// nearest is the one of keys closest to key by edit distance, if close
// enough to be a slip of the finger (a third of the key's letters), else "".
func nearest(key string, keys []string) string {
	slices.Sort(keys) // the same answer every time between equally near keys
	best, bestD := "", max(1, len([]rune(key))/3)+1
	for _, k := range keys {
		if d := editDistance(key, k); d < bestD {
			best, bestD = k, d
		}
	}
	return best
}

// editDistance is the Levenshtein distance between a and b, in runes.
func editDistance(a, b string) int {
	ra, rb := []rune(a), []rune(b)
	prev := make([]int, len(rb)+1)
	for j := range prev {
		prev[j] = j
	}
	for i, ca := range ra {
		cur := make([]int, len(rb)+1)
		cur[0] = i + 1
		for j, cb := range rb {
			sub := prev[j]
			if ca != cb {
				sub++
			}
			cur[j+1] = min(prev[j+1]+1, cur[j]+1, sub)
		}
		prev = cur
	}
	return prev[len(rb)]
}

// configCmd prints the settings in effect as a config file: the way to
// see what the defaults, the file and the flags add up to, and to start a
// config file of one's own.
func (a *app) configCmd() *cobra.Command {
	cmd := &cobra.Command{
		Use: "config",
		Example: `  voice-agent config
  voice-agent config --llm-threads 2 --barge-in duck > ~/.config/voice-agent/config.yaml`,
		Short: "Print the settings in effect (defaults, config file and flags) as a config file",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			// The defaults the engines apply to a setting left at zero
			// are printed as the values they are.
			cfg := a.cfg
			cfg.Stages = cfg.Stages.InEffect()
			enc := yaml.NewEncoder(cmd.OutOrStdout())
			enc.SetIndent(2)
			return errors.Join(enc.Encode(cfg), enc.Close())
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
