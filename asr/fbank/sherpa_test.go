package fbank

import (
	"encoding/json"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/voiceassistant/voice/internal/testenv"
)

// TestSherpaOnnxFeatures: the X-ASR encoder sees what it sees under
// sherpa-onnx, its reference runtime, bit for bit. The golden holds the
// encoder inputs sherpa-onnx 1.13.8 (kaldi-native-fbank v1.22.3 inside)
// was fed on each test recording and its tail padding, captured by
// scripts/models/sherpa_xasr_golden.sh (asr/xasr/testdata/sherpa; the
// same golden's tokens are asr/xasr's TestTokensMatchSherpaOnnx). Frames
// past the last window it decoded never reached its encoder, so they are
// not in the golden. scripts/test also runs this under qemu as arm64,
// where Go may fuse a multiply and an add unless told not to.
func TestSherpaOnnxFeatures(t *testing.T) {
	const root = "../.."
	raw, err := os.ReadFile(filepath.Join(root, "asr", "xasr", "testdata", "sherpa", "golden.json"))
	require.NoError(t, err)
	var g struct {
		TailPadding int `json:"tail_padding_samples"`
		Recordings  []struct {
			Name, File, Features string
			Samples              int
			FeatureFrames        int `json:"feature_frames"` // the frames its encoder was fed
		}
	}
	require.NoError(t, json.Unmarshal(raw, &g))
	require.NotEmpty(t, g.Recordings)
	for _, rec := range g.Recordings {
		t.Run(rec.Name, func(t *testing.T) {
			pcm := readWav16(t, filepath.Join(root, rec.File))
			require.Len(t, pcm, rec.Samples)
			want := testenv.Float32Gz(t, filepath.Join(root, rec.Features))
			require.Len(t, want, rec.FeatureFrames*NumBins)
			got, err := Compute(append(pcm, make([]float32, g.TailPadding)...), XASR)
			require.NoError(t, err)
			require.GreaterOrEqual(t, len(got), rec.FeatureFrames)
			differ, first := 0, -1
			for f := range rec.FeatureFrames {
				for m, v := range got[f] {
					if v != want[f*NumBins+m] {
						differ++
						if first < 0 {
							first = f*NumBins + m
						}
					}
				}
			}
			if differ > 0 {
				f, m := first/NumBins, first%NumBins
				t.Errorf("%d of %d values differ from sherpa-onnx's; the first, frame %d bin %d: %g, not %g",
					differ, len(want), f, m, got[f][m], want[first])
			}
		})
	}
}
