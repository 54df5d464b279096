// Package silero is the Silero VAD v5 session: the speech probability of
// each 32 ms window of 16 kHz audio, with the model's recurrent state and
// context carried from one window to the next.
package silero

import (
	"errors"
	"fmt"
	"math"

	ort "github.com/yalue/onnxruntime_go"

	"github.com/voiceassistant/voice/audio"
	"github.com/voiceassistant/voice/internal/onnx"
	"github.com/voiceassistant/voice/vad"
)

const (
	// contextSize is how much of the previous call's input v5 expects in
	// front of each window: without it the model sees every window cold
	// and its probabilities drift from the reference implementation's.
	contextSize = 64
)

// ModelHint tells users how to get the model when it is missing or broken.
const ModelHint = "run `voice-agent models pull silero-vad-v5` (scripts/setup also installs third_party/models/silero_vad_v5.onnx)"

var (
	sileroInputs = []onnx.Tensor{
		{Name: "input", Type: onnx.Float, Dims: []int64{-1, -1}},
		{Name: "state", Type: onnx.Float, Dims: []int64{2, -1, 128}},
		// The file declares sr as a scalar; [1] and [1,1] tensors are
		// accepted as well, but the scalar is what the graph was traced with.
		{Name: "sr", Type: onnx.Int64, Dims: []int64{}},
	}
	sileroOutputs = []onnx.Tensor{
		{Name: "output", Type: onnx.Float, Dims: []int64{-1, 1}},
		{Name: "stateN", Type: onnx.Float, Dims: []int64{-1, -1, -1}},
	}
)

// Model is a streaming Silero VAD v5 session at 16 kHz: it carries the
// recurrent state and the 64-sample context from one window to the next,
// so consecutive calls must be consecutive audio. Not safe for concurrent
// use.
type Model struct {
	path string
	sess *onnx.Session

	// All tensors are allocated once: at ~0.2 ms per window, per-call
	// allocation and cgo tensor creation would be a visible share of the
	// cost and garbage on the capture path.
	input         *ort.Tensor[float32] // [1, contextSize+vad.WindowSize]
	state, stateN *ort.Tensor[float32] // [2, 1, 128], swapped after each call
	sr            *ort.Scalar[int64]
	output        *ort.Tensor[float32] // [1, 1]
	ins, outs     []ort.Value
}

// New opens the Silero v5 model at modelPath. The model's inputs and
// outputs are checked first, so a wrong file fails here with
// onnx.ErrModelMismatch rather than with an obscure error mid-stream.
func New(modelPath string, opts onnx.Options) (*Model, error) {
	sess, err := onnx.Open(modelPath, sileroInputs, sileroOutputs, opts, ModelHint)
	if err != nil {
		return nil, fmt.Errorf("silero vad: %w", err)
	}
	s := &Model{path: modelPath, sess: sess}
	if err := s.alloc(); err != nil {
		_ = s.Close()
		return nil, fmt.Errorf("silero vad %s: allocating tensors: %w", modelPath, err)
	}
	return s, nil
}

func (s *Model) alloc() error {
	var err error
	if s.input, err = ort.NewEmptyTensor[float32](ort.NewShape(1, contextSize+vad.WindowSize)); err != nil {
		return err
	}
	if s.state, err = ort.NewEmptyTensor[float32](ort.NewShape(2, 1, 128)); err != nil {
		return err
	}
	if s.stateN, err = ort.NewEmptyTensor[float32](ort.NewShape(2, 1, 128)); err != nil {
		return err
	}
	if s.sr, err = ort.NewScalar[int64](audio.ProcessingRate); err != nil {
		return err
	}
	if s.output, err = ort.NewEmptyTensor[float32](ort.NewShape(1, 1)); err != nil {
		return err
	}
	s.ins = []ort.Value{s.input, s.state, s.sr}
	s.outs = []ort.Value{s.output, s.stateN}
	return nil
}

// Path is the model file the session was opened from.
func (s *Model) Path() string { return s.path }

// Window returns the speech probability of the next vad.WindowSize samples of
// 16 kHz mono audio. After an error the stream state is undefined: Reset
// before feeding more audio.
func (s *Model) Window(samples []float32) (float32, error) {
	if s.sess == nil {
		return 0, fmt.Errorf("silero vad %s: session is closed", s.path)
	}
	if len(samples) != vad.WindowSize {
		return 0, fmt.Errorf("silero vad %s: window has %d samples, want %d (16 kHz mono)", s.path, len(samples), vad.WindowSize)
	}
	for i, v := range samples {
		// One NaN would poison the recurrent state for the rest of the
		// stream, so it is refused at the door.
		if math.IsNaN(float64(v)) || math.IsInf(float64(v), 0) {
			return 0, fmt.Errorf("silero vad %s: sample %d of the window is %v", s.path, i, v)
		}
	}
	in := s.input.GetData()
	copy(in[:contextSize], in[vad.WindowSize:])
	copy(in[contextSize:], samples)
	if err := s.sess.Run(s.ins, s.outs); err != nil {
		return 0, fmt.Errorf("silero vad %s: %w", s.path, err)
	}
	// Swapping the state tensors feeds stateN back without a copy; the
	// same tensor is never both input and output of one run, which ONNX
	// Runtime does not promise to handle.
	s.state, s.stateN = s.stateN, s.state
	s.ins[1], s.outs[1] = s.state, s.stateN
	return s.output.GetData()[0], nil
}

// Reset starts a new stream: zero state and zero context, as the model
// authors' reset_states does.
func (s *Model) Reset() {
	if s.sess == nil {
		return
	}
	s.input.ZeroContents()
	s.state.ZeroContents()
	s.stateN.ZeroContents()
}

// Close releases the session and its tensors. It is safe to call twice.
func (s *Model) Close() error {
	errs := []error{destroy(s.input), destroy(s.state), destroy(s.stateN), destroy(s.sr), destroy(s.output)}
	s.input, s.state, s.stateN, s.sr, s.output = nil, nil, nil, nil, nil
	s.ins, s.outs = nil, nil
	if s.sess != nil {
		if err := s.sess.Destroy(); err != nil {
			errs = append(errs, fmt.Errorf("silero vad %s: %w", s.path, err))
		}
		s.sess = nil
	}
	return errors.Join(errs...)
}

// destroy tolerates the nil values a failed allocation leaves behind.
func destroy[P interface {
	*E
	Destroy() error
}, E any](v P) error {
	if v == nil {
		return nil
	}
	return v.Destroy()
}
