package xasr

// Greedy transducer search over the encoder output of each chunk.

import "fmt"

// search is greedy transducer search over the encoder frames of one
// chunk: per frame the joiner's argmax; a token other than blank and <unk>
// is appended and the decoder rerun on the new context. At most one
// symbol per frame.
func (r *Recognizer) search() error {
	if !r.decReady {
		if err := r.runDecoder(); err != nil {
			return err
		}
	}
	d := r.info.Dim
	frames := r.encOut.GetData()
	enc := r.joinEnc.GetData()
	for t := range r.info.FramesPerChunk {
		copy(enc, frames[t*d:(t+1)*d])
		if err := r.join.Run(r.joinIns, r.joinOuts); err != nil {
			return fmt.Errorf("xasr: %s: %w", r.info.Joiner, err)
		}
		if y := argmax(r.logit.GetData()); y != 0 && y != r.unk {
			r.hyp = append(r.hyp, y)
			if err := r.runDecoder(); err != nil {
				return err
			}
		}
	}
	return nil
}

// runDecoder computes decOut for the last ContextSize tokens of the
// hypothesis. Before its start the context is icefall's [-1, ..., -1,
// blank] (MODELS.md says [0, 0]; the reference decoders, icefall's and
// sherpa-onnx's greedy search, start from this, and the exported decoder
// embeds -1 as zeros).
func (r *Recognizer) runDecoder() error {
	y := r.y.GetData()
	n := len(y)
	for i := range y {
		switch j := len(r.hyp) - n + i; {
		case j >= 0:
			y[i] = int64(r.hyp[j])
		case j == -1:
			y[i] = 0
		default:
			y[i] = -1
		}
	}
	if err := r.dec.Run(r.decIns, r.decOuts); err != nil {
		r.decReady = false
		return fmt.Errorf("xasr: %s: %w", r.info.Decoder, err)
	}
	r.decReady = true
	return nil
}

func argmax(v []float32) int {
	best := 0
	for i, x := range v {
		if x > v[best] {
			best = i
		}
	}
	return best
}
