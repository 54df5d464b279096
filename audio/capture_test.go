package audio

import (
	"errors"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestGate(t *testing.T) {
	for _, muted := range []bool{false, true} {
		var g Gate
		g.SetMuted(muted)
		assert.Equal(t, !muted, g.Open(), "muted %v", muted)
	}
}

// halver is a capture stage that halves the capture and counts far frames.
type halver struct{ far int }

func (h *halver) Far([]float32) error { h.far++; return nil }
func (h *halver) Near(f []float32) ([]float32, error) {
	out := make([]float32, len(f))
	for i, s := range f {
		out[i] = s / 2
	}
	return out, nil
}

type failing struct{}

func (failing) Far([]float32) error               { return errors.New("far failed") }
func (failing) Near([]float32) ([]float32, error) { return nil, errors.New("near failed") }

// A chain runs its stages in order, skips nil ones, gives every stage the
// far frames, leaves the source's frame alone when the gate silences it,
// and stops at a stage's error.
func TestChain(t *testing.T) {
	inner := &halver{}
	var g Gate
	c := Chain(inner, nil, &g)
	in := []float32{0.2, 0.2}
	for i := range 4 {
		g.SetMuted(i >= 2)
		require.NoError(t, c.Far(make([]float32, 2)))
		out, err := c.Near(in)
		require.NoError(t, err)
		if i < 2 {
			assert.Equal(t, []float32{0.1, 0.1}, out, "the first stage runs first")
		} else {
			assert.Equal(t, []float32{0, 0}, out, "muted")
		}
	}
	assert.Equal(t, []float32{0.2, 0.2}, in, "the source's frame is left alone")
	assert.Equal(t, 4, inner.far)

	bad := Chain(failing{}, &g)
	assert.EqualError(t, bad.Far(nil), "far failed")
	_, err := bad.Near(in)
	assert.EqualError(t, err, "near failed")

	out, err := Chain().Near(in)
	require.NoError(t, err)
	assert.Equal(t, in, out, "an empty chain passes the capture on")
}

// A resting front end passes frames through and does no work; a rest that
// begins between a frame's far and near sides waits for the next frame,
// so the front end never gets one side of a frame without the other.
func TestResting(t *testing.T) {
	inner := &halver{}
	r := &Resting{FrontEnd: inner}
	frame := []float32{0.5, -0.5}
	near := func() []float32 {
		t.Helper()
		out, err := r.Near(frame)
		require.NoError(t, err)
		return out
	}
	require.NoError(t, r.Far(frame))
	r.Rest(true)
	assert.Equal(t, []float32{0.25, -0.25}, near(), "the frame begun awake ends awake")
	require.NoError(t, r.Far(frame))
	assert.Equal(t, frame, near())
	assert.Equal(t, 1, inner.far)
	r.Rest(false)
	require.NoError(t, r.Far(frame))
	assert.Equal(t, []float32{0.25, -0.25}, near())
	assert.Equal(t, 2, inner.far)
}
