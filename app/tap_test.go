package app

import (
	"errors"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func constant(v float32, n int) []float32 {
	out := make([]float32, n)
	for i := range out {
		out[i] = v
	}
	return out
}

func TestLevelOf(t *testing.T) {
	tests := []struct {
		name    string
		samples []float32
		want    float64
	}{
		{"empty", nil, 0},
		{"silence", constant(0, 160), 0},
		{"full scale", constant(1, 160), 1},
		{"-20 dBFS", constant(0.1, 160), 2.0 / 3},
		{"-60 dBFS is the floor", constant(0.001, 160), 0},
		{"below the floor", constant(0.0001, 160), 0},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			assert.InDelta(t, tc.want, levelOf(tc.samples), 1e-6)
		})
	}
}

func TestGate(t *testing.T) {
	tests := []struct {
		muted, pushToTalk, talking, open bool
	}{
		{false, false, false, true},
		{true, false, false, false},
		{false, true, false, false},
		{false, true, true, true},
		{true, true, true, false},
	}
	for _, tc := range tests {
		var g Gate
		g.SetMuted(tc.muted)
		g.SetPushToTalk(tc.pushToTalk)
		g.SetTalking(tc.talking)
		assert.Equal(t, tc.open, g.Open(), "%+v", tc)
	}
}

// halver is a front-end that halves the capture.
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

func TestTap(t *testing.T) {
	var levels []float64
	inner := &halver{}
	g := &Gate{}
	tp := &tap{inner: inner, gate: g, onLevel: func(l float64) { levels = append(levels, l) }}
	in := constant(0.2, 160)
	for i := range 2 * levelWindow {
		g.SetMuted(i >= levelWindow)
		require.NoError(t, tp.Far(make([]float32, 160)))
		out, err := tp.Near(in)
		require.NoError(t, err)
		if i < levelWindow {
			assert.Equal(t, constant(0.1, 160), out, "the inner front-end runs first")
		} else {
			assert.Equal(t, constant(0, 160), out, "muted")
		}
	}
	assert.Equal(t, constant(0.2, 160), in, "the source's frame is left alone")
	assert.Equal(t, 2*levelWindow, inner.far)
	require.Len(t, levels, 2, "one reading per window")
	assert.InDelta(t, 2.0/3, levels[0], 1e-6)
	assert.Zero(t, levels[1])

	bad := &tap{inner: failing{}, gate: g, onLevel: func(float64) {}}
	assert.EqualError(t, bad.Far(nil), "far failed")
	_, err := bad.Near(in)
	assert.EqualError(t, err, "near failed")
}
