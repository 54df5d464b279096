package smartturn

import (
	"encoding/json"
	"math"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/voiceassistant/voice/internal/testenv"

	"github.com/voiceassistant/voice/turn/smartturn/internal/golden"
)

type goldenIndex struct {
	Cases []struct {
		Name            string  `json:"name"`
		Seconds         float64 `json:"seconds"`
		Samples         int     `json:"samples"`
		InputSum        float64 `json:"input_sum"`
		InputSumSquares float64 `json:"input_sum_squares"`
		File            string  `json:"file"`
	} `json:"cases"`
}

func readGoldenIndex(t testing.TB) goldenIndex {
	t.Helper()
	raw, err := os.ReadFile(filepath.Join("testdata", "whisper_features_golden.json"))
	require.NoError(t, err, "regenerate with /usr/bin/python3 scripts/models/whisper_features_golden.py")
	var idx goldenIndex
	require.NoError(t, json.Unmarshal(raw, &idx))
	require.NotEmpty(t, idx.Cases)
	return idx
}

func TestWhisperFeaturesGolden(t *testing.T) {
	for _, c := range readGoldenIndex(t).Cases {
		t.Run(c.Name, func(t *testing.T) {
			pcm := golden.Signal(c.Seconds)
			require.Len(t, pcm, c.Samples)
			var sum, ss float64
			for _, v := range pcm {
				sum += float64(v)
				ss += float64(v) * float64(v)
			}
			// The Go and Python inputs must be the same samples.
			require.InDelta(t, c.InputSum, sum, 1e-6*float64(len(pcm)), "input drifted from the script's test_signal")
			require.InDelta(t, c.InputSumSquares, ss, 1e-6*float64(len(pcm)), "input drifted from the script's test_signal")

			want := testenv.Float32Gz(t, filepath.Join("testdata", c.File))
			require.Len(t, want, FeatureLen)
			got, err := WhisperFeatures(pcm)
			require.NoError(t, err)
			require.Len(t, got, FeatureLen)
			worst, at := 0.0, 0
			for i := range want {
				if d := math.Abs(float64(got[i] - want[i])); d > worst {
					worst, at = d, i
				}
			}
			t.Logf("%s: max abs diff %.3g at mel %d frame %d", c.Name, worst, at/NumFrames, at%NumFrames)
			assert.LessOrEqual(t, worst, 1e-3, "mel %d frame %d: got %v want %v", at/NumFrames, at%NumFrames, got[at], want[at])
		})
	}
}

func TestWhisperFeaturesErrors(t *testing.T) {
	_, err := WhisperFeatures(nil)
	require.Error(t, err)
	assert.Contains(t, err.Error(), "no audio")

	for _, bad := range []float32{float32(math.NaN()), float32(math.Inf(1)), float32(math.Inf(-1))} {
		pcm := golden.Signal(1)
		pcm[500] = bad
		_, err := WhisperFeatures(pcm)
		require.Error(t, err, "%v", bad)
		assert.Contains(t, err.Error(), "NaN or infinite")
		// Also before the analysed last 8 s.
		long := make([]float32, WindowSamples+1000)
		long[10] = bad
		_, err = WhisperFeatures(long)
		require.Error(t, err, "%v outside the window", bad)
	}

	err = NewFeaturizer().Compute(make([]float32, 10), golden.Signal(1))
	require.Error(t, err)
	assert.Contains(t, err.Error(), "output buffer")
}

func TestWhisperFeaturesShape(t *testing.T) {
	// Silence is valid: a constant buffer normalizes to zeros, every
	// energy hits the 1e-10 floor, and the output is (-10+4)/4 throughout.
	got, err := WhisperFeatures(make([]float32, 1234))
	require.NoError(t, err)
	for _, v := range got {
		require.Equal(t, float32(-1.5), v)
	}
	// Only the last 8 s count: a longer prefix changes nothing.
	tail := golden.Signal(8)
	long := append(golden.Signal(3), tail...)
	a, err := WhisperFeatures(tail)
	require.NoError(t, err)
	b, err := WhisperFeatures(long)
	require.NoError(t, err)
	assert.Equal(t, a, b)
	// A reused Featurizer gives the same result as a fresh one.
	f := NewFeaturizer()
	dst := make([]float32, FeatureLen)
	require.NoError(t, f.Compute(dst, golden.Signal(2)))
	require.NoError(t, f.Compute(dst, tail))
	assert.Equal(t, a, dst)
}

func TestSlaneyMelFilters(t *testing.T) {
	tabs := tables()
	require.Len(t, tabs.mel, NumMels)
	// Slaney normalization makes each triangle's area (in Hz) one, up to
	// the sampling of the 40 Hz bins.
	for m, w := range tabs.mel {
		require.NotEmpty(t, w, "filter %d is empty", m)
		require.GreaterOrEqual(t, tabs.melLo[m], 0)
		require.LessOrEqual(t, tabs.melLo[m]+len(w), numBins)
	}
	// Below 1 kHz the Slaney scale is linear: 200/3 Hz per mel.
	assert.InDelta(t, 15.0, hzToMel(1000), 1e-12)
	assert.InDelta(t, 1000.0, melToHz(15), 1e-9)
	assert.InDelta(t, 4000.0, melToHz(hzToMel(4000)), 1e-9)
}

func BenchmarkWhisperFeatures8s(b *testing.B) {
	pcm := golden.Signal(8)
	f := NewFeaturizer()
	dst := make([]float32, FeatureLen)
	b.ReportAllocs()
	b.ResetTimer()
	start := time.Now()
	for b.Loop() {
		require.NoError(b, f.Compute(dst, pcm))
	}
	b.ReportMetric(float64(time.Since(start).Microseconds())/1000/float64(b.N), "ms/op")
}
