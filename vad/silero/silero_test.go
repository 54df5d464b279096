package silero

import (
	"context"
	"encoding/binary"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/voiceassistant/voice/audio"
	"github.com/voiceassistant/voice/audio/testspeech"
	"github.com/voiceassistant/voice/internal/onnx"
	"github.com/voiceassistant/voice/internal/testenv"
	"github.com/voiceassistant/voice/vad"
)

func openSilero(tb testing.TB) *Model {
	tb.Helper()
	s, err := New(testenv.Model(tb, "silero_vad_v5.onnx"), onnx.Options{})
	require.NoError(tb, err)
	tb.Cleanup(func() { assert.NoError(tb, s.Close()) })
	return s
}

func newSileroDetector(t *testing.T) *vad.Detector {
	t.Helper()
	d, err := vad.NewDetector(openSilero(t), vad.DefaultConfig())
	require.NoError(t, err)
	return d
}

// The spliced recording the real-model tests share: speaking it takes a
// few espeak-ng runs, which is worth doing once.
var speech = sync.OnceValues(func() (spliced, error) {
	pcm, spans, err := testspeech.Splice(
		testspeech.Part{Silence: time.Second},
		testspeech.Part{Text: "The quick brown fox jumps over the lazy dog"},
		testspeech.Part{Silence: 1500 * time.Millisecond},
		testspeech.Part{Text: "What will the weather be like tomorrow morning"},
		testspeech.Part{Silence: time.Second},
	)
	return spliced{pcm, spans}, err
})

type spliced struct {
	pcm   []float32
	spans []testspeech.Span
}

func splicedSpeech(t *testing.T) spliced {
	t.Helper()
	if err := testspeech.Available(); err != nil {
		testenv.Missing(t, err.Error())
	}
	s, err := speech()
	require.NoError(t, err)
	return s
}

func TestSileroFindsSpeech(t *testing.T) {
	d := newSileroDetector(t)
	sp := splicedSpeech(t)
	segs, err := vad.Segments(context.Background(), d, audio.SliceSource(sp.pcm))
	require.NoError(t, err)
	require.Len(t, segs, len(sp.spans), "segments %v for utterances %v", segs, sp.spans)
	const tolerance = 100 * time.Millisecond
	for i, s := range segs {
		start, end := audio.Mono16k.Duration(s.Start), audio.Mono16k.Duration(s.End)
		want := sp.spans[i]
		t.Logf("%q: spliced %v-%v, detected %v-%v (start %+v, end %+v)", want.Text,
			want.Start, want.End, start, end, start-want.Start, end-want.End)
		assert.InDelta(t, want.Start.Seconds(), start.Seconds(), tolerance.Seconds(), "start of %q", want.Text)
		assert.InDelta(t, want.End.Seconds(), end.Seconds(), tolerance.Seconds(), "end of %q", want.Text)
	}
}

func TestSileroIgnoresSilenceAndNoise(t *testing.T) {
	d := newSileroDetector(t)
	silence := make([]float32, 3*audio.ProcessingRate)
	segs, err := vad.Segments(context.Background(), d, audio.SliceSource(silence))
	require.NoError(t, err)
	assert.Empty(t, segs, "silence")

	// Uniform noise with an RMS of -30 dBFS: amplitude a has RMS a/sqrt(3).
	r := rand.New(rand.NewPCG(1, 2))
	a := math.Pow(10, -30.0/20) * math.Sqrt(3)
	noise := make([]float32, 5*audio.ProcessingRate)
	for i := range noise {
		noise[i] = float32(a * (2*r.Float64() - 1))
	}
	segs, err = vad.Segments(context.Background(), d, audio.SliceSource(noise))
	require.NoError(t, err)
	assert.Empty(t, segs, "white noise")
}

func TestSileroStreamingEqualsOffline(t *testing.T) {
	d := newSileroDetector(t)
	sp := splicedSpeech(t)
	want, err := vad.Feed(d, sp.pcm, nil)
	require.NoError(t, err)
	require.NotEmpty(t, want)
	for seed := range uint64(3) {
		r := rand.New(rand.NewPCG(seed, 7))
		got, err := vad.Feed(d, sp.pcm, func() int { return 1 + r.IntN(2000) })
		require.NoError(t, err)
		assert.Equal(t, want, got, "seed %d", seed)
	}
}

func TestSileroWindow(t *testing.T) {
	s := openSilero(t)
	r := rand.New(rand.NewPCG(3, 4))
	windows := make([][]float32, 20)
	for i := range windows {
		windows[i] = make([]float32, vad.WindowSize)
		for j := range windows[i] {
			windows[i][j] = float32(0.3 * math.Sin(float64(i*vad.WindowSize+j)*0.05) * (1 + 0.1*r.Float64()))
		}
	}
	run := func() []float32 {
		var probs []float32
		for _, w := range windows {
			p, err := s.Window(w)
			require.NoError(t, err)
			require.True(t, p >= 0 && p <= 1, "probability %v", p)
			probs = append(probs, p)
		}
		return probs
	}
	first := run()
	// Without Reset the state and context carry over, so the same audio
	// scores differently; after Reset it scores exactly as the first time.
	assert.NotEqual(t, first, run())
	s.Reset()
	assert.Equal(t, first, run())

	path := testenv.Model(t, "silero_vad_v5.onnx")
	_, err := s.Window(make([]float32, 100))
	require.ErrorContains(t, err, "100 samples, want 512")
	assert.ErrorContains(t, err, path)
	bad := make([]float32, vad.WindowSize)
	bad[7] = float32(math.NaN())
	_, err = s.Window(bad)
	require.ErrorContains(t, err, "sample 7")

	require.NoError(t, s.Close())
	require.NoError(t, s.Close())
	_, err = s.Window(windows[0])
	require.ErrorContains(t, err, "closed")
	s.Reset() // harmless after Close
}

func TestNewSileroErrors(t *testing.T) {
	testenv.Model(t, "silero_vad_v5.onnx")
	dir := t.TempDir()
	corrupt := filepath.Join(dir, "corrupt.onnx")
	require.NoError(t, os.WriteFile(corrupt, []byte("not a model"), 0o644))
	other := filepath.Join(dir, "identity.onnx")
	require.NoError(t, os.WriteFile(other, identityModel(), 0o644))

	for _, tc := range []struct {
		name, path, want string
	}{
		{"missing file", filepath.Join(dir, "nowhere.onnx"), "scripts/setup"},
		{"corrupt file", corrupt, "corrupt or not a model"},
		{"another model", other, `no input "input"`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s, err := New(tc.path, onnx.Options{})
			require.Error(t, err)
			assert.Nil(t, s)
			assert.Contains(t, err.Error(), tc.path)
			assert.Contains(t, err.Error(), tc.want)
		})
	}
	_, err := New(other, onnx.Options{})
	assert.ErrorIs(t, err, onnx.ErrModelMismatch)

	// The model is really loadable: the mismatch is about its tensors.
	sess, err := onnx.Open(other, []onnx.Tensor{{Name: "x", Type: onnx.Float}}, []onnx.Tensor{{Name: "y", Type: onnx.Float}}, onnx.Options{}, "")
	require.NoError(t, err)
	require.NoError(t, sess.Destroy())
}

// identityModel is the smallest valid ONNX model: y = Identity(x) on f32
// [1], protobuf-encoded by hand so the test needs no Python.
func identityModel() []byte {
	tensorType := msg(field(1, varint(1)), field(2, msg(field(1, msg(field(1, varint(1)))))))
	valueInfo := func(name string) wire {
		return msg(field(1, str(name)), field(2, msg(field(1, tensorType))))
	}
	node := msg(field(1, str("x")), field(2, str("y")), field(4, str("Identity")))
	graph := msg(field(1, node), field(2, str("g")), field(11, valueInfo("x")), field(12, valueInfo("y")))
	opset := msg(field(1, str("")), field(2, varint(13)))
	return msg(field(1, varint(8)), field(7, graph), field(8, opset)).payload
}

// Protobuf wire format: a field is a tag (number<<3 | wire type) followed
// by a varint or a length-delimited payload.
type wire struct {
	kind    byte // 0 varint, 2 bytes
	payload []byte
}

func varint(v uint64) wire  { return wire{0, binary.AppendUvarint(nil, v)} }
func str(s string) wire     { return wire{2, []byte(s)} }
func msg(fs ...[]byte) wire { return wire{2, concat(fs)} }

func field(n int, w wire) []byte {
	out := binary.AppendUvarint(nil, uint64(n)<<3|uint64(w.kind))
	if w.kind == 2 {
		out = binary.AppendUvarint(out, uint64(len(w.payload)))
	}
	return append(out, w.payload...)
}

func concat(bs [][]byte) []byte {
	var out []byte
	for _, b := range bs {
		out = append(out, b...)
	}
	return out
}

func BenchmarkSileroWindow(b *testing.B) {
	s := openSilero(b)
	sp, err := speech()
	if err != nil || testspeech.Available() != nil {
		// Noise works as well for timing; the cost does not depend on it.
		r := rand.New(rand.NewPCG(5, 6))
		sp.pcm = make([]float32, 10*audio.ProcessingRate)
		for i := range sp.pcm {
			sp.pcm[i] = float32(0.1 * (2*r.Float64() - 1))
		}
	}
	n := len(sp.pcm) / vad.WindowSize
	i := 0
	b.ReportAllocs()
	for b.Loop() {
		_, err := s.Window(sp.pcm[i*vad.WindowSize : (i+1)*vad.WindowSize])
		require.NoError(b, err)
		i = (i + 1) % n
	}
	b.ReportMetric(float64(b.Elapsed().Microseconds())/1000/float64(b.N), "ms/window")
}

// The floor leaves Silero's boundaries where hearing every window puts
// them: the quiet it skips is given back to the model, a second of it,
// before the next window above the floor. (With a quarter of a second
// given back, the demo's second start came a window early.)
func TestFloorKeepsTheBoundaries(t *testing.T) {
	demo, err := audio.ReadWAVMono16k(context.Background(), "../../test/testdata/demo.wav")
	require.NoError(t, err)
	for name, pcm := range map[string][]float32{"spliced": splicedSpeech(t).pcm, "demo": demo} {
		segments := func(floor float64) []vad.Segment {
			cfg := vad.DefaultConfig()
			cfg.FloorDBFS = floor
			d, err := vad.NewDetector(openSilero(t), cfg)
			require.NoError(t, err)
			segs, err := vad.Segments(context.Background(), d, audio.SliceSource(pcm))
			require.NoError(t, err)
			return segs
		}
		every := segments(0)
		require.Len(t, every, 2, name)
		assert.Equal(t, every, segments(vad.DefaultConfig().FloorDBFS), name)
	}
}
