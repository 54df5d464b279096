package voicebench

import (
	"bytes"
	"context"
	"encoding/json"
	"strings"
	"testing"

	"github.com/parquet-go/parquet-go"
	"github.com/stretchr/testify/require"

	"github.com/voiceassistant/voice/audio"
	"github.com/voiceassistant/voice/voicebench/voicebenchtest"
)

// FuzzParseDone feeds parseDone, which reads the results of an earlier
// run to resume it, with damaged OUT/SUBSET.jsonl files. An error must
// name the file; a file that parses keeps its complete lines (what it
// drops is one line cut short), finds each line's sample_id, and takes a
// result appended by this harness as one more finished sample.
func FuzzParseDone(f *testing.F) {
	for _, s := range []string{
		"", "\n\n", `{"sample_id":"0","response":"x"}` + "\n",
		`{"sample_id":"0","response":"x"}` + "\n" + `{"sample_id":"1","resp`,
		`{"sample_id":"usa/q1","response":"Paris.","latency_ms":{"endpoint":12.5},"llm_stats":{"prompt_tokens":3}}` + "\r\n",
		`{"prompt":"x","response":"y"}` + "\n", "not json\n", `{"sample_id":null}` + "\n", `{"sample_id":7}` + "\n",
		"[1]\n", "null\n", `{"sample_id":"a"} {"sample_id":"b"}` + "\n",
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		done, complete, err := parseDone("out/sd-qa.jsonl", data)
		if err != nil {
			require.ErrorContains(t, err, "out/sd-qa.jsonl line ", "error does not name the file and line")
			return
		}
		require.GreaterOrEqual(t, complete, 0, "complete %d of %q", complete, data)
		require.LessOrEqual(t, complete, len(data), "complete %d of %q", complete, data)
		if complete > 0 {
			require.Equal(t, byte('\n'), data[complete-1], "complete %d of %q", complete, data)
		}
		require.NotContains(t, string(data[complete:]), "\n", "complete %d of %q", complete, data)
		lines := 0
		for _, line := range bytes.Split(data[:complete], []byte("\n")) {
			if len(bytes.TrimSpace(line)) == 0 {
				continue
			}
			lines++
			var rec map[string]any
			require.NoError(t, json.Unmarshal(line, &rec), "line %q parsed, but not as an object", line)
			id, ok := rec[KeySampleID].(string)
			require.True(t, ok, "line %q: sample_id is not a string", line)
			require.True(t, done[id], "line %q: sample_id not noted as done", line)
		}
		require.LessOrEqual(t, len(done), lines, "%d ids from %d lines", len(done), lines)
		// What the harness appends after the complete lines is read back.
		res := Result{Sample: Sample{ID: "new\n\"one\"", Fields: map[string]any{"prompt": "p", KeySampleID: "shadowed"}}, Response: "r"}
		line, err := json.Marshal(res)
		require.NoError(t, err)
		more := append(append(bytes.Clone(data[:complete]), line...), '\n')
		done2, complete2, err := parseDone("out/sd-qa.jsonl", more)
		require.NoError(t, err, "after appending %s", line)
		require.Equal(t, len(more), complete2, "after appending %s: %v", line, done2)
		require.True(t, done2[res.Sample.ID], "after appending %s: %v", line, done2)
		require.GreaterOrEqual(t, len(done2), len(done), "after appending %s: %v", line, done2)
	})
}

// maxFuzzParquet bounds the Parquet files FuzzParquetRows reads: small
// files find the decoder's trust in lengths as well as big ones.
const maxFuzzParquet = 64 << 10

// parquetSeed is a shard as voicebenchtest writes them.
func parquetSeed[T any](tb testing.TB, rows []T) []byte {
	tb.Helper()
	var buf bytes.Buffer
	require.NoError(tb, parquet.Write(&buf, rows))
	return buf.Bytes()
}

// FuzzParquetRows feeds the shard reader (footer checks, then every row
// as a sample) with damaged Parquet files. It must fail with an error
// naming the shard, never panic or allocate what a damaged length claims;
// the samples it reads are the split's, without their audio column.
func FuzzParquetRows(f *testing.F) {
	wav, err := voicebenchtest.WAV([]float32{0, 0.25, -0.25, 0.5}, audio.Mono16k)
	require.NoError(f, err)
	three, less := int64(3), "less than"
	qa := parquetSeed(f, []voicebenchtest.QARow{
		{Audio: &voicebenchtest.Audio{Bytes: wav, Path: "q1.wav"}, ID: "q1", Prompt: "what is the capital of france", Reference: "paris"},
		{Audio: &voicebenchtest.Audio{Bytes: []byte("fLaC\x00\x00\x00\x22")}, ID: "q2", Prompt: "x"},
		{ID: "q3"},
	})
	ifeval := parquetSeed(f, []voicebenchtest.IFEvalRow{{
		Audio: &voicebenchtest.Audio{Bytes: wav}, Key: 1000, Prompt: "say hello",
		InstructionIDList: []string{"length_constraints:number_words", "keywords:existence"},
		Kwargs:            []voicebenchtest.IFEvalKwargs{{NumWords: &three, Relation: &less}, {Keywords: []string{"blue"}}},
	}})
	f.Add(qa)
	f.Add(ifeval)
	damaged := bytes.Clone(ifeval)
	for i := 4; i < 64 && i < len(damaged); i++ {
		damaged[i] = 0xff // the first page's header
	}
	f.Add(damaged)
	f.Add(qa[:len(qa)-9])
	f.Add([]byte("PAR1 this is not a parquet file PAR1"))
	f.Add([]byte("PAR1\xff\xff\xff\x7fPAR1"))

	f.Fuzz(func(t *testing.T, data []byte) {
		if len(data) > maxFuzzParquet {
			t.Skip()
		}
		pq, err := parquetFile(bytes.NewReader(data), int64(len(data)))
		if err != nil {
			require.Nil(t, pq, "a file and an error")
			return
		}
		d := &Dataset{shards: []parquetShard{{split: "test", path: "fuzz.parquet", pq: pq}}}
		d.HasAudio()
		n := 0
		for s, err := range d.All() {
			if err != nil {
				require.ErrorContains(t, err, "fuzz.parquet", "error does not name the shard")
				return
			}
			require.True(t, strings.HasPrefix(s.ID, "test/"), "sample id %q is not the split's", s.ID)
			require.NotContains(t, s.Fields, AudioColumn, "sample %s keeps its audio column", s.ID)
			if n == 0 {
				if pcm, err := s.PCM(context.Background()); err == nil {
					require.NotEmpty(t, pcm, "sample %s: no error and no audio", s.ID)
				}
			}
			if n++; n == 1000 {
				return
			}
		}
		require.Equal(t, pq.NumRows(), int64(n), "samples from a file of %d rows", pq.NumRows())
	})
}
