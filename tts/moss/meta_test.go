package moss

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// tinyMeta reads the tiny model set's three metadata files.
func tinyMeta(tb testing.TB) (man, tts, codec []byte) {
	tb.Helper()
	read := func(path string) []byte {
		b, err := os.ReadFile(path)
		require.NoError(tb, err)
		return b
	}
	return read(filepath.Join(tinyDir, ManifestFile)), read(filepath.Join(tinyDir, TTSMetaFile)),
		read(filepath.Join(codecDir, CodecMetaFile))
}

// editJSON returns a copy of the JSON object b changed by set.
func editJSON(tb testing.TB, b []byte, set func(m map[string]any)) []byte {
	tb.Helper()
	var m map[string]any
	require.NoError(tb, json.Unmarshal(b, &m))
	set(m)
	out, err := json.Marshal(m)
	require.NoError(tb, err)
	return out
}

func obj(m map[string]any, key string) map[string]any { return m[key].(map[string]any) }

func firstAttn(m map[string]any) map[string]any {
	return obj(m, "streaming_decode")["attention_caches"].([]any)[0].(map[string]any)
}

// metaDamage is metadata a damaged or foreign file might hold, and the
// error parseMeta gives for it.
var metaDamage = []struct {
	name string
	file string // "man", "tts" or "codec"
	set  func(m map[string]any)
	want string
}{
	{"a billion layers", "tts", func(m map[string]any) { obj(m, "model_config")["global_layers"] = 1e9 }, "global_layers is 1000000000, expected 1..65536"},
	{"a fractional size", "tts", func(m map[string]any) { obj(m, "model_config")["hidden_size"] = 7.5 }, "hidden_size is 7.5, not an integer"},
	{"a size past float precision", "tts", func(m map[string]any) { obj(m, "model_config")["n_vq"] = 1e300 }, "not an integer"},
	{"a negative token id", "tts", func(m map[string]any) { obj(m, "model_config")["audio_start_token_id"] = -6 }, "audio_start_token_id is -6, not a token id"},
	{"a huge codebook", "tts", func(m map[string]any) { obj(m, "model_config")["audio_codebook_sizes"] = []int{1 << 30} }, "audio codebook size is 1073741824"},
	{"too few KV names", "tts", func(m map[string]any) { obj(m, "onnx")["prefill_output_names"] = []string{"global_hidden"} }, "do not have 24 KV tensors"},
	{"an empty tensor name", "tts", func(m map[string]any) { obj(m, "onnx")["prefill_input_names"] = []string{"input_ids", ""} }, "empty tensor name"},
	{"a negative voice code", "man", func(m map[string]any) {
		m["builtin_voices"].([]any)[0].(map[string]any)["prompt_audio_codes"].([]any)[0].([]any)[0] = -3
	}, `voice "Junhao" frame 0 has code -3`},
	{"no frame limit", "man", func(m map[string]any) { obj(m, "generation_defaults")["max_new_frames"] = 0 }, "max_new_frames is missing"},
	{"a prompt id past int32", "man", func(m map[string]any) { obj(m, "prompt_templates")["user_prompt_prefix_token_ids"] = []int64{1 << 40} }, "has 1099511627776, not a token id"},
	{"no voices", "man", func(m map[string]any) { delete(m, "builtin_voices") }, "lists no builtin_voices"},
	{"a huge codec cache", "codec", func(m map[string]any) { firstAttn(m)["cache_shape"] = []int{1, 4, 8000000, 64} }, "attention_caches[0]: state shape [1 4 8000000 64]"},
	{"a dynamic codec cache", "codec", func(m map[string]any) { firstAttn(m)["cache_shape"] = []int{1, -1, 8, 64} }, "state shape [1 -1 8 64]"},
	{"a 1-D positions shape", "codec", func(m map[string]any) { firstAttn(m)["positions_shape"] = []int{1} }, "expected 4 and 2 dimensions"},
	{"an empty state name", "codec", func(m map[string]any) { firstAttn(m)["cached_keys_input_name"] = "" }, "empty tensor name"},
	{"a huge sample rate", "codec", func(m map[string]any) { obj(m, "codec_config")["sample_rate"] = 4800000000 }, "sample rate 4800000000 out of range"},
}

func TestParseMeta(t *testing.T) {
	man, tts, codec := tinyMeta(t)
	s, err := parseMeta(metaFile{"man.json", man}, metaFile{"tts.json", tts}, metaFile{"codec.json", codec}, Options{})
	require.NoError(t, err)
	require.Equal(t, 12, s.cfg.layers, "config %+v", s.cfg)
	require.Equal(t, 1024, s.cfg.codebook, "config %+v", s.cfg)
	require.Len(t, s.voice, 5, "voice frames")
	require.Len(t, s.attns, 12, "caches")
	for _, tc := range metaDamage {
		t.Run(tc.name, func(t *testing.T) {
			files := map[string][]byte{"man": man, "tts": tts, "codec": codec}
			files[tc.file] = editJSON(t, files[tc.file], tc.set)
			_, err := parseMeta(metaFile{"man.json", files["man"]}, metaFile{"tts.json", files["tts"]}, metaFile{"codec.json", files["codec"]}, Options{})
			require.ErrorIs(t, err, ErrModelMismatch)
			require.ErrorContains(t, err, tc.want)
			require.ErrorContains(t, err, tc.file+".json")
		})
	}
}

// FuzzParseMeta feeds parseMeta (the three metadata files Open reads) with
// damaged JSON. Every error must be ErrModelMismatch naming one of the
// files; a model set that parses must be one Open could build on: sizes
// and ids in range, voice frames of n_vq codes, name lists that fit the
// layer count, codec state shapes that can be allocated, and prefill rows
// that can be built.
func FuzzParseMeta(f *testing.F) {
	man, tts, codec := tinyMeta(f)
	f.Add(man, tts, codec)
	for _, tc := range metaDamage {
		files := map[string][]byte{"man": man, "tts": tts, "codec": codec}
		files[tc.file] = editJSON(f, files[tc.file], tc.set)
		f.Add(files["man"], files["tts"], files["codec"])
	}
	f.Add([]byte(`{}`), []byte(`{"model_config": {}}`), []byte(`null`))

	f.Fuzz(func(t *testing.T, man, tts, codec []byte) {
		s, err := parseMeta(metaFile{"man.json", man}, metaFile{"tts.json", tts}, metaFile{"codec.json", codec}, Options{})
		if err != nil {
			require.Nil(t, s, "a Synthesizer and an error")
			require.ErrorIs(t, err, ErrModelMismatch)
			msg := err.Error()
			require.True(t, strings.Contains(msg, "man.json") || strings.Contains(msg, "tts.json") || strings.Contains(msg, "codec.json"),
				"error %v names no file", err)
			return
		}
		c := s.cfg
		require.Equal(t, 16, c.nVQ, "n_vq")
		require.Equal(t, 17, c.rowWidth, "row_width")
		for _, v := range []int{c.hidden, c.layers, c.heads, c.headDim, c.codebook} {
			require.Positive(t, v, "size out of range in %+v", c)
			require.LessOrEqual(t, v, maxSize, "size out of range in %+v", c)
		}
		ids := [][]int{{c.pad, c.audioStart, c.audioEnd, c.userSlot, c.assistantSlot}, s.prefix, s.after, s.assist}
		for _, frame := range s.voice {
			require.Len(t, frame, c.nVQ, "voice frame")
			ids = append(ids, frame)
		}
		for _, group := range ids {
			for _, id := range group {
				require.GreaterOrEqual(t, id, 0, "id %d does not fit an int32 tensor", id)
				require.LessOrEqual(t, id, 1<<31-1, "id %d does not fit an int32 tensor", id)
			}
		}
		require.Positive(t, s.frames, "frames %d, seed %d", s.frames, s.seed)
		require.NotZero(t, s.seed, "frames %d, seed %d", s.frames, s.seed)
		require.NoError(t, s.format.Validate())
		nKV := 2 * c.layers
		require.Len(t, s.prefillIn, 2, "name lists of the wrong lengths for %d layers", c.layers)
		require.Len(t, s.localIn, 4, "name lists of the wrong lengths for %d layers", c.layers)
		require.Len(t, s.localOut, 2, "name lists of the wrong lengths for %d layers", c.layers)
		require.Len(t, s.prefillOut, 1+nKV, "name lists of the wrong lengths for %d layers", c.layers)
		require.Len(t, s.decodeOut, 1+nKV, "name lists of the wrong lengths for %d layers", c.layers)
		require.Len(t, s.decodeIn, 2+nKV, "name lists of the wrong lengths for %d layers", c.layers)
		require.GreaterOrEqual(t, len(s.codecIn), 2, "name lists of the wrong lengths for %d layers", c.layers)
		require.GreaterOrEqual(t, len(s.codecOut), 2, "name lists of the wrong lengths for %d layers", c.layers)
		var shapes [][]int64
		for _, o := range s.offsets {
			shapes = append(shapes, o.Shape)
		}
		for _, a := range s.attns {
			require.Len(t, a.CacheShape, 4, "attention cache shapes %v, %v", a.CacheShape, a.PositionsShape)
			require.Len(t, a.PositionsShape, 2, "attention cache shapes %v, %v", a.CacheShape, a.PositionsShape)
			shapes = append(shapes, a.OffsetShape, a.CacheShape, a.PositionsShape)
		}
		require.NotEmpty(t, shapes, "no codec state")
		for _, shape := range shapes {
			n := int64(1)
			for _, d := range shape {
				require.GreaterOrEqual(t, d, int64(1), "state shape %v", shape)
				require.LessOrEqual(t, d, int64(maxStateValues), "state shape %v", shape)
				n *= d
			}
			require.NotEmpty(t, shape, "state shape %v: %d values", shape, n)
			require.LessOrEqual(t, n, int64(maxStateValues), "state shape %v: %d values", shape, n)
		}
		// The prefill rows of a chunk can be built.
		rows := append(s.promptRows(), s.textRows([]int{1, 2, 3})...)
		want := len(s.prefix) + len(s.after) + len(s.assist) + len(s.voice) + 3 + 3
		require.Len(t, rows, want*c.rowWidth, "row values, want %d rows of %d", want, c.rowWidth)
	})
}

// metaFile is one metadata file: its path, for errors, and its contents.
type metaFile struct {
	path string
	data []byte
}

// parseMeta parses and checks the three metadata files of a model set
// (the manifest, the TTS meta and the codec meta) into a Synthesizer
// without a tokenizer or graphs: everything Open reads from JSON.
func parseMeta(man, tts, codec metaFile, opts Options) (*Synthesizer, error) {
	var (
		m  manifest
		tm ttsMeta
		cm codecMeta
	)
	for _, f := range []struct {
		metaFile
		v any
	}{{man, &m}, {tts, &tm}, {codec, &cm}} {
		if err := decodeJSON(f.path, f.data, f.v); err != nil {
			return nil, err
		}
	}
	s := &Synthesizer{}
	if err := s.configure(metaPaths{man: man.path, tts: tts.path, codec: codec.path}, &m, &tm, &cm, opts); err != nil {
		return nil, err
	}
	return s, nil
}
