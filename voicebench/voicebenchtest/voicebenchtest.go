// Package voicebenchtest writes tiny VoiceBench datasets for tests, in both
// forms the harness reads: Parquet shards laid out and typed like the
// published dataset (hlt-lab/voicebench), and a JSONL file with WAV files.
package voicebenchtest

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"

	"github.com/parquet-go/parquet-go"

	"github.com/voiceassistant/voice/audio"
)

// Audio is a Hugging Face Audio value as stored in Parquet.
type Audio struct {
	Bytes []byte `parquet:"bytes,optional"`
	Path  string `parquet:"path,optional"`
}

// QARow is a reference-based QA record (sd-qa).
type QARow struct {
	Audio     *Audio `parquet:"audio,optional"`
	ID        string `parquet:"id,optional"`
	Prompt    string `parquet:"prompt,optional"`
	Reference string `parquet:"reference,optional"`
}

// IFEvalKwargs is one instruction's arguments; unused ones are null, as in
// the published ifeval subset.
type IFEvalKwargs struct {
	NumWords *int64   `parquet:"num_words,optional"`
	Relation *string  `parquet:"relation,optional"`
	Keywords []string `parquet:"keywords,list"`
}

// IFEvalRow is an instruction-following record (ifeval).
type IFEvalRow struct {
	Audio             *Audio         `parquet:"audio,optional"`
	Key               int64          `parquet:"key,optional"`
	Prompt            string         `parquet:"prompt,optional"`
	InstructionIDList []string       `parquet:"instruction_id_list,list"`
	Kwargs            []IFEvalKwargs `parquet:"kwargs,list"`
}

// WriteParquet writes rows as the shard at path, making its directory.
func WriteParquet[T any](path string, rows []T) error {
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return err
	}
	var buf bytes.Buffer
	if err := parquet.Write(&buf, rows); err != nil {
		return fmt.Errorf("%s: %w", path, err)
	}
	return os.WriteFile(path, buf.Bytes(), 0o644)
}

// WriteJSONL writes records one per line.
func WriteJSONL(path string, records []map[string]any) error {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	for _, r := range records {
		if err := enc.Encode(r); err != nil {
			return err
		}
	}
	return os.WriteFile(path, buf.Bytes(), 0o644)
}

// WAV encodes 16 kHz mono speech as a 16-bit WAV file in format f, so the
// harness also has to convert it back.
func WAV(pcm []float32, f audio.Format) ([]byte, error) {
	out, err := audio.Convert(pcm, audio.Mono16k, f)
	if err != nil {
		return nil, err
	}
	var buf bytes.Buffer
	if err := audio.EncodeWAV(&buf, f, out, audio.PCM16); err != nil {
		return nil, err
	}
	return buf.Bytes(), nil
}

// Dataset is a tiny dataset written by Write: for each subset, the sample
// ids in order.
type Dataset map[string][]string

// Write makes a tiny dataset in dir from speech that say produces (16 kHz
// mono): sd-qa with two splits of Parquet shards, ifeval as two shards of
// one split with list and struct columns, and alpacaeval as JSONL with WAV
// files and no id (so samples are known by position).
func Write(dir string, say func(text string) ([]float32, error)) (Dataset, error) {
	wav := func(text string, f audio.Format) ([]byte, error) {
		pcm, err := say(text)
		if err != nil {
			return nil, err
		}
		return WAV(pcm, f)
	}
	rate44 := audio.Format{Rate: 44100, Channels: 1}
	stereo48 := audio.Format{Rate: 48000, Channels: 2}
	qa := func(id, prompt, ref string) (QARow, error) {
		b, err := wav(prompt, rate44)
		return QARow{Audio: &Audio{Bytes: b, Path: id + ".wav"}, ID: id, Prompt: prompt, Reference: ref}, err
	}
	var rows [3]QARow
	var err error
	for i, q := range [][3]string{
		{"q1", "what is the capital of france", "paris"},
		{"q2", "how many legs does a spider have", "eight"},
		{"q1", "what is the capital of france", "paris"},
	} {
		if rows[i], err = qa(q[0], q[1], q[2]); err != nil {
			return nil, err
		}
	}
	sdqa := filepath.Join(dir, "sd-qa")
	if err := WriteParquet(filepath.Join(sdqa, "usa-00000-of-00001.parquet"), rows[:2]); err != nil {
		return nil, err
	}
	if err := WriteParquet(filepath.Join(sdqa, "aus-00000-of-00001.parquet"), rows[2:]); err != nil {
		return nil, err
	}

	three, less := int64(3), "less than"
	var ifeval []IFEvalRow
	for i, prompt := range []string{"write a short poem about the sea", "name three colours", "say hello"} {
		b, err := wav(prompt, stereo48)
		if err != nil {
			return nil, err
		}
		ifeval = append(ifeval, IFEvalRow{
			Audio: &Audio{Bytes: b}, Key: int64(1000 + i), Prompt: prompt,
			InstructionIDList: []string{"length_constraints:number_words", "keywords:existence"},
			Kwargs:            []IFEvalKwargs{{NumWords: &three, Relation: &less}, {Keywords: []string{"blue"}}},
		})
	}
	if err := WriteParquet(filepath.Join(dir, "ifeval", "test-00000-of-00002.parquet"), ifeval[:2]); err != nil {
		return nil, err
	}
	if err := WriteParquet(filepath.Join(dir, "ifeval", "test-00001-of-00002.parquet"), ifeval[2:]); err != nil {
		return nil, err
	}

	var alpaca []map[string]any
	if err := os.MkdirAll(filepath.Join(dir, "alpacaeval"), 0o755); err != nil {
		return nil, err
	}
	for i, prompt := range []string{"tell me a joke", "what should i cook tonight", "explain rainbows"} {
		b, err := wav(prompt, audio.Mono16k)
		if err != nil {
			return nil, err
		}
		name := filepath.Join("alpacaeval", fmt.Sprintf("%d.wav", i))
		if err := os.WriteFile(filepath.Join(dir, name), b, 0o644); err != nil {
			return nil, err
		}
		alpaca = append(alpaca, map[string]any{"audio": name, "prompt": prompt})
	}
	if err := WriteJSONL(filepath.Join(dir, "alpacaeval.jsonl"), alpaca); err != nil {
		return nil, err
	}
	return Dataset{
		"sd-qa":      {"aus/q1", "usa/q1", "usa/q2"},
		"ifeval":     {"test/1000", "test/1001", "test/1002"},
		"alpacaeval": {"0", "1", "2"},
	}, nil
}
