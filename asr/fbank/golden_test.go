package fbank

import (
	"bytes"
	"encoding/binary"
	"encoding/json"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/voiceassistant/voice/internal/testenv"
)

// goldenCase is one case of the golden fixtures
// (scripts/models/fbank_golden.py).
type goldenCase struct {
	Name            string             `json:"name"`
	Input           string             `json:"input"`
	Offset          int                `json:"offset"`
	Samples         int                `json:"samples"`
	Frames          int                `json:"frames"`
	InputSum        float64            `json:"input_sum"`
	InputSumSquares float64            `json:"input_sum_squares"`
	Options         map[string]float64 `json:"options"`
	File            string             `json:"file"`
	FileF64         string             `json:"file_f64"`
}

type goldenIndex struct {
	Options map[string]any `json:"options"`
	Cases   []goldenCase   `json:"cases"`
}

func readGoldenIndex(t testing.TB) goldenIndex {
	t.Helper()
	raw, err := os.ReadFile(filepath.Join("testdata", "fbank_golden.json"))
	require.NoError(t, err, "regenerate with /usr/bin/python3 scripts/models/fbank_golden.py")
	var idx goldenIndex
	require.NoError(t, json.Unmarshal(raw, &idx))
	require.NotEmpty(t, idx.Cases)
	return idx
}

// readWav16 reads a mono 16-bit PCM RIFF/WAVE file as samples / 32768.
func readWav16(t testing.TB, path string) []float32 {
	t.Helper()
	raw, err := os.ReadFile(path)
	require.NoError(t, err)
	require.True(t, len(raw) >= 12 && string(raw[:4]) == "RIFF" && string(raw[8:12]) == "WAVE", "not a WAVE file")
	var pcm []float32
	fmtSeen := false
	for p := 12; p+8 <= len(raw); {
		id, size := string(raw[p:p+4]), int(binary.LittleEndian.Uint32(raw[p+4:p+8]))
		body := raw[p+8 : min(len(raw), p+8+size)]
		switch id {
		case "fmt ":
			require.GreaterOrEqual(t, len(body), 16)
			require.EqualValues(t, 1, binary.LittleEndian.Uint16(body[0:2]), "PCM")
			require.EqualValues(t, 1, binary.LittleEndian.Uint16(body[2:4]), "mono")
			require.EqualValues(t, SampleRate, binary.LittleEndian.Uint32(body[4:8]), "rate")
			require.EqualValues(t, 16, binary.LittleEndian.Uint16(body[14:16]), "bits")
			fmtSeen = true
		case "data":
			pcm = make([]float32, len(body)/2)
			for i := range pcm {
				pcm[i] = float32(int16(binary.LittleEndian.Uint16(body[2*i:]))) / 32768
			}
		}
		p += 8 + size + size&1
	}
	require.True(t, fmtSeen)
	require.NotNil(t, pcm, "no data chunk")
	return pcm
}

func goldenInput(t testing.TB, c goldenCase) []float32 {
	t.Helper()
	var pcm []float32
	switch {
	case c.Input == "":
		pcm = make([]float32, c.Offset+c.Samples) // silence
	case filepath.Ext(c.Input) == ".wav":
		pcm = readWav16(t, filepath.Join("testdata", c.Input))
	default:
		data := testenv.Gunzip(t, filepath.Join("testdata", c.Input))
		pcm = make([]float32, len(data)/4)
		require.NoError(t, binary.Read(bytes.NewReader(data), binary.LittleEndian, pcm))
	}
	require.GreaterOrEqual(t, len(pcm), c.Offset+c.Samples)
	pcm = pcm[c.Offset : c.Offset+c.Samples]
	var sum, ss float64
	for _, v := range pcm {
		sum += float64(v)
		ss += float64(v) * float64(v)
	}
	require.InDelta(t, c.InputSum, sum, 1e-9*float64(len(pcm)+1), "input drifted from the script's")
	require.InDelta(t, c.InputSumSquares, ss, 1e-9*float64(len(pcm)+1), "input drifted from the script's")
	return pcm
}

func maxDiff(t testing.TB, got [][]float32, want []float32) (worst float64, frame, bin int) {
	t.Helper()
	require.Len(t, want, len(got)*NumBins)
	for i, f := range got {
		require.Len(t, f, NumBins)
		for m, v := range f {
			if d := math.Abs(float64(v) - float64(want[i*NumBins+m])); d > worst || math.IsNaN(d) {
				worst, frame, bin = d, i, m
			}
		}
	}
	return worst, frame, bin
}

// caseOptions is the golden case's mel range: XASR unless the case
// overrides it.
func caseOptions(t testing.TB, c goldenCase) Options {
	t.Helper()
	opts := XASR
	for k, v := range c.Options {
		switch k {
		case "low_freq":
			opts.LowFreq = v
		case "high_freq":
			opts.HighFreq = v
		default:
			require.Failf(t, "fixture overrides an option this package does not take", "%s", k)
		}
	}
	return opts
}

func TestGoldenTorchaudio(t *testing.T) {
	idx := readGoldenIndex(t)
	// The fixture must have been made with the options this package
	// implements, and with X-ASR's mel range by default: the one
	// Gilgamesh-J/X-ASR X-ASR-zh-en/zipformer/onnx_pretrained-streaming.py:410-417
	// gives kaldifeat (high_freq -400; kaldifeat's low_freq default 20) and
	// k2-fsa/sherpa-onnx sherpa-onnx/csrc/features.h:28,38 defaults to.
	for k, v := range map[string]any{
		"sample_frequency": 16000.0, "frame_length": 25.0, "frame_shift": 10.0, "window_type": "povey",
		"dither": 0.0, "snip_edges": false, "preemphasis_coefficient": 0.97, "remove_dc_offset": true,
		"round_to_power_of_two": true, "num_mel_bins": float64(NumBins), "low_freq": XASR.LowFreq, "high_freq": XASR.HighFreq,
		"use_energy": false, "use_log_fbank": true, "use_power": true, "vtln_warp": 1.0, "subtract_mean": false,
	} {
		assert.Equal(t, v, idx.Options[k], "fixture option %s", k)
	}
	// This package computes in float32 in kaldi-native-fbank's order of
	// operations (TestSherpaOnnxFeatures holds it to that, bit for bit),
	// torchaudio in float32 in its own order or in float64: up to ~5e-4
	// apart in bins whose energy is near the floor, 2e-5 elsewhere.
	const tol, tolF64 = 2e-3, 2e-3
	for _, c := range idx.Cases {
		t.Run(c.Name, func(t *testing.T) {
			pcm := goldenInput(t, c)
			want := testenv.Float32Gz(t, filepath.Join("testdata", c.File))
			require.Equal(t, c.Frames, NumFrames(len(pcm)))

			opts := caseOptions(t, c)
			got, err := Compute(pcm, opts)
			require.NoError(t, err)
			require.Len(t, got, c.Frames)
			worst, fr, bin := maxDiff(t, got, want)
			t.Logf("%s: %d samples, %d frames, max |Go - torchaudio| = %.3g (frame %d, bin %d: %g vs %g)",
				c.Name, len(pcm), len(got), worst, fr, bin, got[fr][bin], want[fr*NumBins+bin])
			assert.LessOrEqual(t, worst, tol)

			worst64, fr, bin := maxDiff(t, got, testenv.Float32Gz(t, filepath.Join("testdata", c.FileF64)))
			t.Logf("%s: max |Go - torchaudio float64| = %.3g (frame %d, bin %d)", c.Name, worst64, fr, bin)
			assert.LessOrEqual(t, worst64, tolF64)

			// The streaming path gives the same frames, bit for bit.
			rng := rand.New(rand.NewPCG(uint64(len(pcm)), 7))
			on := streamAll(t, opts, pcm, func() int { return 1 + rng.IntN(3000) })
			requireSameFrames(t, got, on)

			if c.Name == "silence" {
				floor := float32(math.Log(fltEpsilon))
				for _, f := range got {
					for _, v := range f {
						require.Equal(t, floor, v)
					}
				}
				for _, v := range want {
					require.Equal(t, floor, v, "torchaudio's floor is log(FLT_EPSILON) too")
				}
			}
		})
	}
}
