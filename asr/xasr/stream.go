package xasr

// The streaming decode: audio in, feature frames cut into encoder windows,
// the encoder caches fed back from one chunk to the next.

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"time"

	ort "github.com/yalue/onnxruntime_go"

	"github.com/voiceassistant/voice/asr/fbank"
	"github.com/voiceassistant/voice/audio"
)

// frameSource is where windows come from: an *fbank.Online, or a slice of
// frames in tests.
type frameSource interface {
	Ready() int
	Frame(i int) []float32
	Discard(before int)
}

// Accept feeds a frame of 16 kHz mono audio, decodes every complete
// window, and returns the partial transcript so far (no final
// punctuation). Other formats are refused: the pipeline resamples before
// ASR. After an error, Reset before the next utterance.
func (r *Recognizer) Accept(f audio.Frame) (string, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.enc == nil {
		return "", errClosed
	}
	if f.Rate != audio.ProcessingRate || f.Channels != 1 {
		return "", fmt.Errorf("xasr: got %s audio; the recognizer takes %s (resample before ASR)", f.Format, audio.Mono16k)
	}
	if err := r.fb.Accept(f.Samples); err != nil {
		return "", fmt.Errorf("xasr: %w", err)
	}
	r.samples += int64(len(f.Samples))
	if err := r.decode(context.Background(), r.fb, false); err != nil {
		return "", err
	}
	return r.partialText(), nil
}

var errClosed = errors.New("xasr: recognizer is closed")

// Finalize ends the utterance as sherpa-onnx does: it appends TailPadding
// of silence, marks the input finished (the last frames reflect the end of
// the signal), decodes the full windows left, and returns the final
// transcript with a closing full stop (AddFinalStop). The frames after the
// last full window are padding and are not decoded. The recognizer is
// then reset, ready for the next utterance, also after an error. With no
// audio since the last reset it returns "".
func (r *Recognizer) Finalize() (string, error) {
	res, err := r.FinalizeResult()
	return res.Text, err
}

// FinalizeAfter is Finalize for an utterance whose last quiet of audio
// already given to Accept came after the speech (the endpointing wait):
// what pushes the last words through the encoder is audio after them, the
// room's quiet as well as the padding's zeros, so only the rest of
// TailPadding is padded, and the final transcript costs that much less.
// Once ctx is done it stops before the next encoder call and returns
// ctx's error: a fork's final that speech resuming made useless gives its
// core back to the listening recognizer at once.
func (r *Recognizer) FinalizeAfter(ctx context.Context, quiet time.Duration) (string, error) {
	res, err := r.finalize(ctx, quiet)
	return res.Text, err
}

// FinalizeResult is Finalize with the token ids.
func (r *Recognizer) FinalizeResult() (Result, error) { return r.finalize(context.Background(), 0) }

func (r *Recognizer) finalize(ctx context.Context, quiet time.Duration) (Result, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.enc == nil {
		return Result{}, errClosed
	}
	defer r.reset()
	if r.samples == 0 {
		return Result{}, nil
	}
	pad := r.tail[:len(r.tail)-min(len(r.tail), int(audio.Mono16k.Samples(max(quiet, 0))))]
	if err := r.fb.Accept(pad); err != nil {
		return Result{}, fmt.Errorf("xasr: %w", err)
	}
	r.fb.InputFinished()
	if err := r.decode(ctx, r.fb, true); err != nil {
		return Result{}, err
	}
	return Result{Text: AddFinalStop(r.tokens.Detokenize(r.hyp)), Tokens: append([]int(nil), r.hyp...)}, nil
}

// Fork returns a recognizer holding a copy of the utterance so far, for it
// to be finalized (the transcript a commit now would get) while r goes on
// listening. It has tensors and a feature stream of its own and r's
// sessions, which take concurrent runs; what either is given leaves the
// other as it was. Close the fork before r.
func (r *Recognizer) Fork() (*Recognizer, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.enc == nil {
		return nil, errClosed
	}
	f := &Recognizer{info: r.info, tokens: r.tokens, unk: r.unk, spec: r.spec, enc: r.enc, dec: r.dec, join: r.join, forked: true,
		fb: r.fb.Clone(), tail: r.tail, samples: r.samples, next: r.next, hyp: slices.Clone(r.hyp),
		partial: r.partial, partialN: r.partialN, chunks: r.chunks}
	err := f.alloc()
	if err == nil {
		f.encOut, err = ort.NewEmptyTensor[float32](r.encOut.GetShape())
		f.encOuts[0] = f.encOut
	}
	if err != nil {
		return nil, errors.Join(fmt.Errorf("xasr: fork: %w", err), f.Close())
	}
	for i, s := range r.states {
		copyContents(f.states[i].in, s.in)
	}
	// decReady is false: the fork runs its decoder on the hypothesis
	// before it searches.
	return f, nil
}

// copyContents copies src's elements into dst, a tensor of its type and
// shape.
func copyContents(dst, src ort.Value) {
	switch s := src.(type) {
	case *ort.Tensor[float32]:
		copy(dst.(*ort.Tensor[float32]).GetData(), s.GetData())
	case *ort.Tensor[int64]:
		copy(dst.(*ort.Tensor[int64]).GetData(), s.GetData())
	case *ort.Tensor[int32]:
		copy(dst.(*ort.Tensor[int32]).GetData(), s.GetData())
	}
}

// Hypothesis returns the token ids decoded so far in this utterance.
func (r *Recognizer) Hypothesis() []int {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]int(nil), r.hyp...)
}

// Reset drops the utterance: zero caches, no features, empty hypothesis.
func (r *Recognizer) Reset() {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.enc != nil {
		r.reset()
	}
}

func (r *Recognizer) reset() {
	for _, s := range r.states {
		s.in.ZeroContents()
	}
	r.fb.Reset()
	r.samples, r.next, r.chunks = 0, 0, 0
	r.hyp = r.hyp[:0]
	r.decReady = false
	r.partial, r.partialN = "", 0
}

func (r *Recognizer) partialText() string {
	if r.partialN != len(r.hyp) {
		r.partial, r.partialN = r.tokens.Detokenize(r.hyp), len(r.hyp)
	}
	return r.partial
}

// decode runs the encoder on every complete window of src, advancing by
// the shift and discarding frames no later window needs. Once ctx is done
// it stops before the next encoder call.
//
// A window is decoded while its T frames are ready; with final set (the
// input finished) only while a frame past it is ready too: sherpa-onnx's
// rule, processed + T < ready (sherpa-onnx/csrc/online-recognizer-transducer-impl.h:248-251,
// IsReady, checked before every DecodeStreams in its decoding loops; lines
// as of 634265c9b, 1.13.4, the golden's 1.13.8 does the same). The
// streaming side may take the window one frame sooner and decode the same
// windows: finishing the input always adds a frame (the last frames, which
// reach past the audio, come only then), so a window taken with exactly T
// frames ready is one sherpa-onnx takes too.
func (r *Recognizer) decode(ctx context.Context, src frameSource, final bool) error {
	T, shift := r.spec.window, r.spec.shift
	x := r.x.GetData()
	for {
		if err := ctx.Err(); err != nil {
			return fmt.Errorf("xasr: %w", err)
		}
		ready := src.Ready()
		if r.next+T > ready || final && r.next+T == ready {
			return nil
		}
		for t := range T {
			copy(x[t*fbank.NumBins:(t+1)*fbank.NumBins], src.Frame(r.next+t))
		}
		if err := r.chunk(); err != nil {
			return err
		}
		r.next += shift
		src.Discard(r.next)
	}
}

// chunk runs the encoder on r.x and greedy search on its output.
func (r *Recognizer) chunk() error {
	if r.zeroStatesEachChunk {
		for _, s := range r.states {
			s.in.ZeroContents()
		}
	}
	if err := r.enc.Run(r.encIns, r.encOuts); err != nil {
		return fmt.Errorf("xasr: %s: %w", r.info.Encoder, err)
	}
	if r.afterEncoder != nil {
		r.afterEncoder()
	}
	// Feed new_* back by swapping tensors, never the same tensor as input
	// and output of one run.
	k := 1
	for i, s := range r.states {
		if !s.spec.fedBack {
			continue
		}
		s.in, s.out = s.out, s.in
		r.encIns[1+i], r.encOuts[k] = s.in, s.out
		k++
	}
	if r.lens != nil && !r.lens.spec.fedBack {
		switch t := r.lens.in.(type) {
		case *ort.Tensor[int64]:
			for i := range t.GetData() {
				t.GetData()[i] += r.spec.lensStep
			}
		case *ort.Tensor[int32]:
			for i := range t.GetData() {
				t.GetData()[i] += int32(r.spec.lensStep)
			}
		}
	}
	r.chunks++
	return r.search()
}
