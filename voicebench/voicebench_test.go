package voicebench_test

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.uber.org/goleak"

	"github.com/voiceassistant/voice/audio"
	"github.com/voiceassistant/voice/internal/testenv"
	"github.com/voiceassistant/voice/standin"
	"github.com/voiceassistant/voice/voicebench"
	"github.com/voiceassistant/voice/voicebench/voicebenchtest"
	"github.com/voiceassistant/voice/wiring"
)

// template is the tiny dataset, written once and copied for each test
// (some damage theirs).
var template struct {
	dir string
	ds  voicebenchtest.Dataset
	err error
}

// No test leaves a goroutine running, or reads the user's model cache.
func TestMain(m *testing.M) {
	dir, err := os.MkdirTemp("", "voicebench")
	if err != nil {
		panic(err)
	}
	template.dir = dir
	template.ds, template.err = voicebenchtest.Write(dir, voice)
	code := testenv.Isolated(m).Run()
	os.RemoveAll(dir)
	if code == 0 {
		if err := goleak.Find(); err != nil {
			fmt.Fprintln(os.Stderr, "goleak:", err)
			code = 1
		}
	}
	os.Exit(code)
}

const (
	heard = "what is the capital of france"
	reply = "Paris is the capital of France."
)

// voice stands in for speech: one second of a voiced signal, which the
// energy VAD double hears.
func voice(string) ([]float32, error) {
	return standin.Voice(time.Second, standin.Utterance{End: time.Second}), nil
}

func dataset(t testing.TB) (string, voicebenchtest.Dataset) {
	t.Helper()
	require.NoError(t, template.err)
	dir := filepath.Join(t.TempDir(), "data")
	require.NoError(t, os.CopyFS(dir, os.DirFS(template.dir)))
	return dir, template.ds
}

// doubles are the stage doubles with a script: every sample is heard as
// heard and answered with reply, its first word 100 ms after the
// transcript.
func doubles(t testing.TB) wiring.Stages {
	t.Helper()
	script := filepath.Join(t.TempDir(), "script.json")
	data, err := json.Marshal(map[string]any{
		"user":              []map[string]any{{"start_ms": 0, "end_ms": 300, "text": heard}}, // every sample speaks at once
		"replies":           []string{reply},
		"first_token_ms":    100,
		"tokens_per_second": 50,
	})
	require.NoError(t, err)
	require.NoError(t, os.WriteFile(script, data, 0o644))
	s := wiring.DefaultStages()
	s.VAD, s.ASR, s.Turn, s.LLM, s.TTS = wiring.VADEnergy, wiring.ASRScripted, wiring.TurnNone, wiring.LLMScripted, wiring.TTSTone
	s.Script = script
	s.FrontEnd = wiring.FrontEnd{}
	return s
}

func readResults(t testing.TB, dir, subset string) []map[string]any {
	t.Helper()
	f, err := os.Open(voicebench.ResultsPath(dir, subset))
	require.NoError(t, err)
	defer f.Close()
	var recs []map[string]any
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		var rec map[string]any
		require.NoError(t, json.Unmarshal(sc.Bytes(), &rec), sc.Text())
		recs = append(recs, rec)
	}
	require.NoError(t, sc.Err())
	return recs
}

func ids(recs []map[string]any) []string {
	var out []string
	for _, r := range recs {
		out = append(out, r[voicebench.KeySampleID].(string))
	}
	slices.Sort(out)
	return out
}

func TestDatasetReadsBothForms(t *testing.T) {
	dir, want := dataset(t)
	tests := []struct {
		subset, split string
		ids           []string
		fields        map[string]any // of the first sample
	}{
		{"sd-qa", "", want["sd-qa"], map[string]any{"id": "q1", "prompt": heard, "reference": "paris"}},
		{"sd-qa", "usa", []string{"usa/q1", "usa/q2"}, map[string]any{"id": "q1", "reference": "paris"}},
		{"ifeval", "", want["ifeval"], map[string]any{"key": int64(1000), "instruction_id_list": []any{"length_constraints:number_words", "keywords:existence"}}},
		{"alpacaeval", "", want["alpacaeval"], map[string]any{"prompt": "tell me a joke"}},
	}
	for _, tc := range tests {
		t.Run(tc.subset+"/"+tc.split, func(t *testing.T) {
			ds, err := voicebench.Open(dir, tc.subset, tc.split)
			require.NoError(t, err)
			defer ds.Close()
			var got []string
			for s, err := range ds.All() {
				require.NoError(t, err)
				if len(got) == 0 {
					for k, v := range tc.fields {
						assert.Equal(t, v, s.Fields[k], k)
					}
				}
				assert.NotContains(t, s.Fields, voicebench.AudioColumn)
				pcm, err := s.PCM(context.Background())
				require.NoError(t, err, s.ID)
				// One second at whatever rate it was stored, back at 16 kHz.
				assert.InDelta(t, audio.ProcessingRate, len(pcm), 2, s.ID)
				got = append(got, s.ID)
			}
			slices.Sort(got)
			assert.Equal(t, tc.ids, got)
		})
	}
}

// A run cancelled after a few results resumes: the finished samples are
// neither redone nor duplicated, and every result is complete.
func TestRunResumesAfterInterruption(t *testing.T) {
	data, want := dataset(t)
	out := t.TempDir()
	stages := doubles(t)
	for _, subset := range []string{"sd-qa", "ifeval", "alpacaeval"} {
		t.Run(subset, func(t *testing.T) {
			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			var mu sync.Mutex
			var first []string
			cfg := voicebench.Config{Data: data, Subset: subset, Out: out, Workers: 2, Modality: voicebench.ModalityAudio, Stages: stages,
				OnResult: func(r voicebench.Result) {
					mu.Lock()
					defer mu.Unlock()
					first = append(first, r.Sample.ID)
					cancel() // interrupted after the first result
				}}
			_, err := voicebench.Run(ctx, cfg)
			require.ErrorIs(t, err, context.Canceled)
			done := readResults(t, out, subset)
			require.NotEmpty(t, done)
			require.Less(t, len(done), len(want[subset]), "the interruption left work to resume")

			var second []string
			cfg.OnResult = func(r voicebench.Result) {
				mu.Lock()
				defer mu.Unlock()
				second = append(second, r.Sample.ID)
			}
			sum, err := voicebench.Run(context.Background(), cfg)
			require.NoError(t, err)
			assert.Equal(t, len(done), sum.Skipped)
			assert.Equal(t, len(want[subset])-len(done), sum.Answered)
			for _, id := range ids(done) {
				assert.NotContains(t, second, id, "finished sample redone")
			}

			recs := readResults(t, out, subset)
			assert.Equal(t, want[subset], ids(recs), "every sample once")
			assert.Equal(t, done, recs[:len(done)], "earlier results kept as written")
			for _, r := range recs {
				assert.Equal(t, reply, r[voicebench.KeyResponse])
				assert.Equal(t, heard, r[voicebench.KeyTranscript])
				assert.NotContains(t, r, voicebench.KeyError)
				lat := r[voicebench.KeyLatency].(map[string]any)
				assert.InDelta(t, 100, lat["first_token"], 1e-9, "the script's first token")
				for _, k := range []string{"endpoint", "asr_final", "first_audio", "end_to_end"} {
					assert.Contains(t, lat, k)
				}
				assert.Contains(t, r, voicebench.KeyLLMStats, "the LLM's compute, which the virtual clock leaves out")
			}
			// A third run has nothing left.
			sum, err = voicebench.Run(context.Background(), cfg)
			require.NoError(t, err)
			assert.Equal(t, voicebench.Summary{Skipped: len(want[subset])}, sum)
		})
	}
	info, err := voicebench.ReadRunInfo(out)
	require.NoError(t, err)
	assert.Equal(t, []string{"vad", "asr", "llm", "tts"}, info.StandIns)
	assert.Equal(t, []string{"alpacaeval", "ifeval", "sd-qa"}, info.Subsets)
	// The JSON a stand-in run writes calls them so, not test doubles.
	files := []string{filepath.Join(out, voicebench.RunInfoFile)}
	for _, subset := range info.Subsets {
		files = append(files, voicebench.ResultsPath(out, subset))
	}
	for _, f := range files {
		data, err := os.ReadFile(f)
		require.NoError(t, err)
		assert.NotRegexp(t, `(?i)double`, string(data), f)
	}
}

// Records keep the dataset's own fields and types, as VoiceBench's
// evaluators read them.
func TestResultsKeepDatasetFields(t *testing.T) {
	data, _ := dataset(t)
	out := t.TempDir()
	_, err := voicebench.Run(context.Background(), voicebench.Config{Data: data, Subset: "ifeval", Out: out, Workers: 1,
		Modality: voicebench.ModalityText, Stages: doubles(t), Limit: 1})
	require.NoError(t, err)
	recs := readResults(t, out, "ifeval")
	require.Len(t, recs, 1)
	// Text mode times the first token in wall time: at least the script's
	// 100 ms.
	lat := recs[0][voicebench.KeyLatency].(map[string]any)
	assert.GreaterOrEqual(t, lat["first_token"], 100.0)
	delete(recs[0], voicebench.KeyLatency)
	// The LLM's own account of its work comes along.
	stats := recs[0][voicebench.KeyLLMStats].(map[string]any)
	assert.Greater(t, stats["generated_tokens"], 0.0)
	delete(recs[0], voicebench.KeyLLMStats)
	got, err := json.Marshal(recs[0])
	require.NoError(t, err)
	assert.JSONEq(t, `{
		"key": 1000, "prompt": "write a short poem about the sea",
		"instruction_id_list": ["length_constraints:number_words", "keywords:existence"],
		"kwargs": [{"num_words": 3, "relation": "less than", "keywords": []},
		           {"num_words": null, "relation": null, "keywords": ["blue"]}],
		"sample_id": "test/1000", "response": "Paris is the capital of France."
	}`, string(got), "no asr_transcript in text mode")
}

// Bad input gives an error that names it, and never costs finished
// results.
func TestBadInput(t *testing.T) {
	tests := []struct {
		name    string
		subset  string
		damage  func(t *testing.T, data string)
		wantErr []string
	}{
		{
			name: "missing audio file", subset: "alpacaeval",
			damage: func(t *testing.T, data string) {
				require.NoError(t, os.Remove(filepath.Join(data, "alpacaeval", "2.wav")))
			},
			wantErr: []string{"sample 2", "2.wav", "unreadable audio in 1 of the samples"},
		},
		{
			name: "bad audio fields", subset: "alpacaeval",
			damage: func(t *testing.T, data string) {
				require.NoError(t, voicebenchtest.WriteJSONL(filepath.Join(data, "alpacaeval.jsonl"), []map[string]any{
					{"audio": "alpacaeval/0.wav", "prompt": "tell me a joke"}, {"audio": 5, "prompt": "x"}, {"prompt": "y"},
				}))
			},
			wantErr: []string{`sample 1: "audio" must be a WAV path`, `sample 2: no "audio" field`, "unreadable audio in 2 of the samples"},
		},
		{
			name: "corrupt WAV in a Parquet row", subset: "sd-qa",
			damage: func(t *testing.T, data string) {
				rows := []voicebenchtest.QARow{
					{Audio: &voicebenchtest.Audio{Bytes: []byte("RIFF, but not really")}, ID: "q9", Prompt: "x"},
					{Audio: &voicebenchtest.Audio{Bytes: []byte("fLaC\x00\x00\x00\x22")}, ID: "q8", Prompt: "y"},
				}
				require.NoError(t, voicebenchtest.WriteParquet(filepath.Join(data, "sd-qa", "usa-00000-of-00001.parquet"), rows))
			},
			wantErr: []string{"sample usa/q9: audio: read from the audio column: not a WAV file", "sample usa/q8: the audio is FLAC; only WAV is decoded"},
		},
		{
			name: "corrupt Parquet shard", subset: "ifeval",
			damage: func(t *testing.T, data string) {
				path := filepath.Join(data, "ifeval", "test-00001-of-00002.parquet")
				require.NoError(t, os.WriteFile(path, []byte("PAR1 this is not a parquet file PAR1"), 0o644))
			},
			wantErr: []string{"test-00001-of-00002.parquet"},
		},
		{
			name: "damaged Parquet page", subset: "ifeval",
			damage: func(t *testing.T, data string) {
				path := filepath.Join(data, "ifeval", "test-00001-of-00002.parquet")
				b, err := os.ReadFile(path)
				require.NoError(t, err)
				for i := 4; i < 64; i++ {
					b[i] = 0xff // the first page's header
				}
				require.NoError(t, os.WriteFile(path, b, 0o644))
			},
			wantErr: []string{"test-00001-of-00002.parquet"},
		},
		{
			name: "missing Parquet shard", subset: "ifeval",
			damage: func(t *testing.T, data string) {
				require.NoError(t, os.Remove(filepath.Join(data, "ifeval", "test-00000-of-00002.parquet")))
			},
			wantErr: []string{"lacks shard 0 of 2"},
		},
		{
			name: "shard numbering", subset: "ifeval",
			damage: func(t *testing.T, data string) {
				dir := filepath.Join(data, "ifeval")
				require.NoError(t, os.Rename(filepath.Join(dir, "test-00001-of-00002.parquet"), filepath.Join(dir, "test-00002-of-00002.parquet")))
			},
			wantErr: []string{"disagree on their number (test-00002-of-00002.parquet)"},
		},
		{
			name: "unknown subset", subset: "mmsu",
			wantErr: []string{`unknown subset "mmsu"`, "alpacaeval, ifeval, sd-qa"},
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			data, _ := dataset(t)
			out := t.TempDir()
			stages := doubles(t)
			// A first, good run leaves results behind in every subset.
			for _, subset := range []string{"sd-qa", "ifeval", "alpacaeval"} {
				_, err := voicebench.Run(context.Background(), voicebench.Config{Data: data, Subset: subset, Out: out, Workers: 1,
					Modality: voicebench.ModalityAudio, Stages: stages, Limit: 1})
				require.NoError(t, err)
			}
			before := map[string][]byte{}
			for _, subset := range []string{"sd-qa", "ifeval", "alpacaeval"} {
				b, err := os.ReadFile(voicebench.ResultsPath(out, subset))
				require.NoError(t, err)
				before[subset] = b
			}
			if tc.damage != nil {
				tc.damage(t, data)
			}
			_, err := voicebench.Run(context.Background(), voicebench.Config{Data: data, Subset: tc.subset, Out: out, Workers: 2,
				Modality: voicebench.ModalityAudio, Stages: stages})
			require.Error(t, err)
			t.Log(err)
			for _, want := range tc.wantErr {
				assert.Contains(t, err.Error(), want)
			}
			for subset, b := range before {
				after, err := os.ReadFile(voicebench.ResultsPath(out, subset))
				require.NoError(t, err)
				assert.Equal(t, string(b), string(after[:min(len(after), len(b))]), "%s: finished results kept", subset)
			}
		})
	}
}

// Only the unreadable sample is left out, and a rerun picks it up once it
// is fixed.
func TestUnreadableSampleIsRetried(t *testing.T) {
	data, want := dataset(t)
	out := t.TempDir()
	wav := filepath.Join(data, "alpacaeval", "1.wav")
	good, err := os.ReadFile(wav)
	require.NoError(t, err)
	require.NoError(t, os.WriteFile(wav, []byte("not a wav"), 0o644))
	cfg := voicebench.Config{Data: data, Subset: "alpacaeval", Out: out, Workers: 2, Modality: voicebench.ModalityAudio, Stages: doubles(t)}
	sum, err := voicebench.Run(context.Background(), cfg)
	var inErr *voicebench.InputError
	require.ErrorAs(t, err, &inErr)
	assert.Equal(t, "1", inErr.ID)
	assert.Equal(t, voicebench.Summary{Answered: 2, BadInput: 1}, sum)
	assert.Equal(t, []string{"0", "2"}, ids(readResults(t, out, "alpacaeval")))

	require.NoError(t, os.WriteFile(wav, good, 0o644))
	sum, err = voicebench.Run(context.Background(), cfg)
	require.NoError(t, err)
	assert.Equal(t, voicebench.Summary{Answered: 1, Skipped: 2}, sum)
	assert.Equal(t, want["alpacaeval"], ids(readResults(t, out, "alpacaeval")))
}

// A line cut short by an interruption is dropped and its sample redone;
// a results file that is not the harness's is refused.
func TestResultsFileRecovery(t *testing.T) {
	data, want := dataset(t)
	tests := []struct {
		name     string
		existing string
		wantErr  string
		answered int
	}{
		{"partial last line", `{"sample_id":"0","response":"x"}` + "\n" + `{"sample_id":"1","resp`, "", 2},
		{"empty file", "", "", 3},
		{"not written by the harness", `{"prompt":"x","response":"y"}` + "\n", `no "sample_id"`, 0},
		{"garbage", "not json\n", "line 1", 0},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			out := t.TempDir()
			path := voicebench.ResultsPath(out, "alpacaeval")
			require.NoError(t, os.WriteFile(path, []byte(tc.existing), 0o644))
			sum, err := voicebench.Run(context.Background(), voicebench.Config{Data: data, Subset: "alpacaeval", Out: out, Workers: 2,
				Modality: voicebench.ModalityText, Stages: doubles(t)})
			if tc.wantErr != "" {
				require.ErrorContains(t, err, tc.wantErr)
				after, err := os.ReadFile(path)
				require.NoError(t, err)
				assert.Equal(t, tc.existing, string(after), "left as it was")
				return
			}
			require.NoError(t, err)
			assert.Equal(t, tc.answered, sum.Answered)
			assert.Equal(t, want["alpacaeval"], ids(readResults(t, out, "alpacaeval")))
		})
	}
}

func TestBadConfig(t *testing.T) {
	data, _ := dataset(t)
	base := voicebench.Config{Data: data, Subset: "alpacaeval", Workers: 1, Modality: voicebench.ModalityText, Stages: doubles(t)}
	tests := []struct {
		name    string
		change  func(c *voicebench.Config)
		wantErr string
	}{
		{"modality", func(c *voicebench.Config) { c.Modality = "video" }, `unknown modality "video"`},
		{"workers", func(c *voicebench.Config) { c.Workers = 0 }, "workers must be at least 1"},
		{"limit", func(c *voicebench.Config) { c.Limit = -1 }, "limit must not be negative"},
		{"split of JSONL", func(c *voicebench.Config) { c.Split = "test" }, "has no splits"},
		{"unknown split", func(c *voicebench.Config) { c.Subset, c.Split = "sd-qa", "gbr" }, `no split "gbr" (available: aus, usa)`},
		{"path as subset", func(c *voicebench.Config) { c.Subset = "../x" }, "bad subset name"},
		{"missing stage model", func(c *voicebench.Config) { c.Stages.Script = filepath.Join(data, "none.json") }, "none.json"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			cfg := base
			cfg.Out = t.TempDir()
			tc.change(&cfg)
			_, err := voicebench.Run(context.Background(), cfg)
			require.ErrorContains(t, err, tc.wantErr)
		})
	}
}

// One output directory holds one set-up: results of another are refused.
func TestOutputOfAnotherSetupRefused(t *testing.T) {
	data, _ := dataset(t)
	out := t.TempDir()
	cfg := voicebench.Config{Data: data, Subset: "alpacaeval", Out: out, Workers: 1, Modality: voicebench.ModalityText, Stages: doubles(t), Limit: 1}
	_, err := voicebench.Run(context.Background(), cfg)
	require.NoError(t, err)
	cfg.Modality = voicebench.ModalityAudio
	_, err = voicebench.Run(context.Background(), cfg)
	require.ErrorContains(t, err, "another set-up")
	assert.Len(t, readResults(t, out, "alpacaeval"), 1)
}

// The front-end runs as configured; without echo cancellation in the
// build the run goes on half duplex (which a single question never
// notices). Noise suppression stays off: it rightly removes the steady
// tone that stands in for speech here.
func TestFrontEndAsConfigured(t *testing.T) {
	data, _ := dataset(t)
	out := t.TempDir()
	stages := doubles(t)
	stages.FrontEnd = wiring.FrontEnd{AEC: true}
	sum, err := voicebench.Run(context.Background(), voicebench.Config{Data: data, Subset: "alpacaeval", Out: out, Workers: 1,
		Modality: voicebench.ModalityAudio, Stages: stages, Limit: 1})
	require.NoError(t, err)
	assert.Equal(t, voicebench.Summary{Answered: 1}, sum)
	recs := readResults(t, out, "alpacaeval")
	require.Len(t, recs, 1)
	assert.Equal(t, reply, recs[0][voicebench.KeyResponse])
}
