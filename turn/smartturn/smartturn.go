// Package smartturn is Smart Turn v3, the model that tells from the last
// 8 s of speech whether the speaker has finished: its Whisper log-mel
// features (features.go, checked against the reference implementation's
// goldens) and its ONNX Runtime session.
package smartturn

import (
	"context"
	"errors"
	"fmt"
	"math"
	"strings"
	"sync"

	ort "github.com/yalue/onnxruntime_go"

	"github.com/voiceassistant/voice/internal/onnx"
)

// Hint tells the user how to get the Smart Turn model.
const Hint = "run `voice-agent models pull smart-turn-v3.2-cpu`, or download smart-turn-v3.2-cpu.onnx from huggingface.co/pipecat-ai/smart-turn-v3 (revision f766f81, see assets/manifest.json) and pass --turn-model PATH"

// Inputs and Outputs are the signature a Smart Turn v3
// model must declare (-1: any batch size; the session feeds batch 1).
var (
	Inputs  = []onnx.Tensor{{Name: "input_features", Type: onnx.Float, Dims: []int64{-1, NumMels, NumFrames}}}
	Outputs = []onnx.Tensor{{Name: "logits", Type: onnx.Float, Dims: []int64{-1, 1}}}
)

// ErrClosed is returned by Predict after Close.
var ErrClosed = errors.New("smart turn: session closed")

// Model runs the Smart Turn v3 end-of-turn model on a turn's audio.
// It implements pipeline.TurnDetector. Predict calls are serialized: the
// feature scratch and the input/output tensors are reused across calls.
type Model struct {
	mu      sync.Mutex
	path    string
	sess    *onnx.Session
	feat    *Featurizer
	in, out *ort.Tensor[float32]
	ins     []ort.Value
	outs    []ort.Value
	run     *ort.RunOptions
}

// New loads the model at modelPath after checking its signature
// (input_features f32 [1,80,800], logits f32 [1,1]); a model that does not
// match is an onnx.ErrModelMismatch.
func New(modelPath string, opts onnx.Options) (*Model, error) {
	sess, err := onnx.Open(modelPath, Inputs, Outputs, opts, Hint)
	if err != nil {
		if !strings.Contains(err.Error(), modelPath) {
			return nil, fmt.Errorf("smart turn: loading %s: %w", modelPath, err)
		}
		return nil, fmt.Errorf("smart turn: %w", err)
	}
	s := &Model{path: modelPath, sess: sess, feat: NewFeaturizer()}
	if s.in, err = ort.NewEmptyTensor[float32](ort.NewShape(1, NumMels, NumFrames)); err == nil {
		if s.out, err = ort.NewEmptyTensor[float32](ort.NewShape(1, 1)); err == nil {
			s.run, err = ort.NewRunOptions()
		}
	}
	if err != nil {
		s.destroy()
		return nil, fmt.Errorf("smart turn: model %s: allocating tensors: %w", modelPath, err)
	}
	s.ins, s.outs = []ort.Value{s.in}, []ort.Value{s.out}
	return s, nil
}

// Path is the model file.
func (s *Model) Path() string { return s.path }

// Predict returns the probability that the turn in pcm (16 kHz mono, the
// whole turn so far; only the last 8 s are used) is complete. The model's
// output is already a probability. Cancelling ctx aborts a running
// inference.
func (s *Model) Predict(ctx context.Context, pcm []float32) (float64, error) {
	if err := ctx.Err(); err != nil {
		return 0, err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.sess == nil {
		return 0, ErrClosed
	}
	if err := s.feat.Compute(s.in.GetData(), pcm); err != nil {
		return 0, fmt.Errorf("smart turn: %w", err)
	}
	if err := s.infer(ctx); err != nil {
		return 0, err
	}
	p := float64(s.out.GetData()[0])
	if math.IsNaN(p) || p < 0 || p > 1 {
		return 0, fmt.Errorf("smart turn: model %s returned %v, not a probability in [0, 1]; a Smart Turn v3 export ends in a sigmoid (%s)", s.path, p, Hint)
	}
	return p, nil
}

// infer runs the model, terminating the run if ctx is cancelled.
func (s *Model) infer(ctx context.Context) error {
	if ctx.Done() == nil {
		if err := s.sess.Run(s.ins, s.outs); err != nil {
			return fmt.Errorf("smart turn: model %s: %w", s.path, err)
		}
		return nil
	}
	terminated := make(chan struct{})
	stop := context.AfterFunc(ctx, func() {
		defer close(terminated)
		_ = s.run.Terminate()
	})
	err := s.sess.RunWithOptions(s.ins, s.outs, s.run)
	if !stop() {
		// The terminate flag was (or is being) set: clear it for the next run.
		<-terminated
		_ = s.run.UnsetTerminate()
		if err != nil {
			return fmt.Errorf("smart turn: %w", ctx.Err())
		}
	}
	if err != nil {
		return fmt.Errorf("smart turn: model %s: %w", s.path, err)
	}
	return nil
}

// Close releases the session; Predict fails afterwards. It is safe to
// call more than once.
func (s *Model) Close() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.destroy()
}

func (s *Model) destroy() error {
	var errs []error
	if s.run != nil {
		errs = append(errs, s.run.Destroy())
		s.run = nil
	}
	for _, t := range []**ort.Tensor[float32]{&s.in, &s.out} {
		if *t != nil {
			errs = append(errs, (*t).Destroy())
			*t = nil
		}
	}
	if s.sess != nil {
		errs = append(errs, s.sess.Destroy())
		s.sess = nil
	}
	if err := errors.Join(errs...); err != nil {
		return fmt.Errorf("smart turn: closing %s: %w", s.path, err)
	}
	return nil
}
