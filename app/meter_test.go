package app

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/voiceassistant/voice/audio"
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

// The meter reads what comes through the chain before it, one reading a
// window: full level while the microphone is open, none while muted.
func TestMeterAfterTheGate(t *testing.T) {
	var levels []float64
	var g audio.Gate
	capture := audio.Chain(&g, &meter{onLevel: func(l float64) { levels = append(levels, l) }})
	in := constant(0.1, 160)
	for i := range 2 * levelWindow {
		g.SetMuted(i >= levelWindow)
		_, err := capture.Near(in)
		require.NoError(t, err)
	}
	require.Len(t, levels, 2, "one reading per window")
	assert.InDelta(t, 2.0/3, levels[0], 1e-6)
	assert.Zero(t, levels[1])
}
