package fbank

import (
	"math"
	"math/rand/v2"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// streamAll feeds pcm to a fresh Online in chunks of next() samples,
// checking after every Accept that exactly the frames whose samples have
// all arrived are ready and that little audio is buffered, and returns all
// frames after InputFinished.
func streamAll(t testing.TB, opts Options, pcm []float32, next func() int) [][]float32 {
	t.Helper()
	o, err := NewOnline(opts)
	require.NoError(t, err)
	return streamInto(t, o, pcm, next)
}

func mustOnline(t testing.TB, opts Options) *Online {
	t.Helper()
	o, err := NewOnline(opts)
	require.NoError(t, err)
	return o
}

func streamInto(t testing.TB, o *Online, pcm []float32, next func() int) [][]float32 {
	t.Helper()
	for fed := 0; fed < len(pcm); {
		n := min(next(), len(pcm)-fed)
		require.NoError(t, o.Accept(pcm[fed:fed+n]))
		fed += n
		require.Equal(t, readyBeforeEnd(fed), o.Ready(), "after %d samples", fed)
		require.Less(t, len(o.buf), FrameLength, "buffered samples after %d", fed)
	}
	o.InputFinished()
	require.Equal(t, NumFrames(len(pcm)), o.Ready())
	out := make([][]float32, o.Ready())
	for i := range out {
		out[i] = o.Frame(i)
	}
	return out
}

// readyBeforeEnd is the number of frames computable from n samples
// without knowing where the audio ends: frame t needs samples up to
// t*160 + 279.
func readyBeforeEnd(n int) int {
	if n < FrameLength-frameOffset {
		return 0
	}
	return (n-(FrameLength-frameOffset))/FrameShift + 1
}

func requireSameFrames(t testing.TB, want, got [][]float32) {
	t.Helper()
	require.Len(t, got, len(want))
	for i := range want {
		for m := range want[i] {
			if math.Float32bits(want[i][m]) != math.Float32bits(got[i][m]) {
				require.Failf(t, "streaming differs from offline", "frame %d bin %d: %g vs %g", i, m, got[i][m], want[i][m])
			}
		}
	}
}

func TestOnlineMatchesCompute(t *testing.T) {
	lengths := []int{0, 1, 2, 79, 80, 81, 119, 120, 121, 199, 200, 239, 240, 279, 280, 281, 399, 400, 401,
		439, 440, 441, 559, 560, 1234, 4000, 16037, 48000}
	chunkings := []struct {
		name string
		next func(rng *rand.Rand) int
	}{
		{"1", func(*rand.Rand) int { return 1 }},
		{"160", func(*rand.Rand) int { return 160 }},
		{"161", func(*rand.Rand) int { return 161 }},
		{"random 1..3000", func(rng *rand.Rand) int { return 1 + rng.IntN(3000) }},
		{"random 1..50", func(rng *rand.Rand) int { return 1 + rng.IntN(50) }},
		{"whole", func(*rand.Rand) int { return math.MaxInt32 }},
	}
	for _, n := range lengths {
		pcm := testSignal(n, uint64(n))
		want, err := Compute(pcm, XASR)
		require.NoError(t, err)
		require.Len(t, want, NumFrames(n))
		for _, ch := range chunkings {
			if ch.name == "1" && n > 5000 {
				continue // slow under -race, covered by the others
			}
			rng := rand.New(rand.NewPCG(uint64(n), 99))
			got := streamAll(t, XASR, pcm, func() int { return ch.next(rng) })
			requireSameFrames(t, want, got)
		}
	}
}

func TestOnlineRandomChunksManySeeds(t *testing.T) {
	pcm := testSignal(3*SampleRate+123, 5)
	want, err := Compute(pcm, XASR)
	require.NoError(t, err)
	for seed := range uint64(20) {
		rng := rand.New(rand.NewPCG(seed, 3))
		got := streamAll(t, XASR, pcm, func() int { return 1 + rng.IntN(3000) })
		requireSameFrames(t, want, got)
	}
}

func TestOnlineDiscardAndReset(t *testing.T) {
	pcm := testSignal(2*SampleRate+77, 11)
	want, err := Compute(pcm, XASR)
	require.NoError(t, err)

	o := mustOnline(t, XASR)
	rng := rand.New(rand.NewPCG(1, 2))
	var got [][]float32
	for fed := 0; fed < len(pcm); {
		n := min(1+rng.IntN(700), len(pcm)-fed)
		require.NoError(t, o.Accept(pcm[fed:fed+n]))
		fed += n
		// Read every ready frame (some more than once, like the recognizer's
		// overlapping windows) and keep only the last 13.
		for i := o.Discarded(); i < o.Ready(); i++ {
			f := o.Frame(i)
			if i == len(got) {
				got = append(got, append([]float32(nil), f...))
			}
			require.Equal(t, got[i], f)
		}
		o.Discard(o.Ready() - 13)
		require.LessOrEqual(t, len(o.frames), 13)
	}
	o.InputFinished()
	for i := o.Discarded(); i < o.Ready(); i++ {
		if i == len(got) {
			got = append(got, o.Frame(i))
		}
	}
	requireSameFrames(t, want, got)
	first := o.Discarded()
	require.Positive(t, first)
	assert.Panics(t, func() { o.Frame(first - 1) })
	assert.Panics(t, func() { o.Frame(o.Ready()) })
	o.Discard(first - 5) // going back is a no-op
	assert.Equal(t, first, o.Discarded())
	o.Discard(1 << 30) // clamped
	assert.Equal(t, o.Ready(), o.Discarded())

	require.ErrorIs(t, o.Accept(pcm[:10]), ErrFinished)
	assert.True(t, o.InputDone())

	// A reset stream starts over, numbering from 0, with the same results.
	o.Reset()
	assert.Zero(t, o.Ready())
	assert.Zero(t, o.Discarded())
	assert.False(t, o.InputDone())
	again := streamInto(t, o, pcm, func() int { return 160 })
	requireSameFrames(t, want, again)
}
