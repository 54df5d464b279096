package audio

import (
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// collect pushes frames through r and returns copies of every emitted
// window (emitted samples are only valid during the callback).
func collect(r *Reframer, frames ...Frame) []Frame {
	var out []Frame
	for _, f := range frames {
		r.Push(f, func(w Frame) {
			w.Samples = slices.Clone(w.Samples)
			out = append(out, w)
		})
	}
	return out
}

// split cuts stream samples starting at pos into frames of the given sizes.
func split(samples []float32, pos int64, sizes []int) []Frame {
	var out []Frame
	for _, n := range sizes {
		n = min(n, len(samples))
		out = append(out, Frame{Format: Mono16k, Pos: pos, Samples: samples[:n]})
		samples = samples[n:]
		pos += int64(n)
	}
	return out
}

func repeat(n, times int) []int {
	out := make([]int, times)
	for i := range out {
		out[i] = n
	}
	return out
}

func TestReframerDevicePeriodsToVADWindows(t *testing.T) {
	tests := []struct {
		name    string
		start   int64 // stream position of the first frame
		in      int   // input frame size
		frames  int
		size    int // output window size
		windows int
		pending int
	}{
		{"160 into 512", 0, 160, 32, 512, 10, 0},                // 5120 = 10*512
		{"160 into 512 with remainder", 0, 160, 10, 512, 3, 64}, // 1600 = 3*512+64
		{"160 into 512 from offset", 48000, 160, 16, 512, 5, 0},
		{"512 into 512", 0, 512, 4, 512, 4, 0},
		{"1000 into 512", 7, 1000, 3, 512, 5, 440},
		{"too short for a window", 0, 160, 3, 512, 0, 480},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			stream := ramp(int(tc.start), tc.in*tc.frames)
			r := NewReframer(tc.size)
			got := collect(r, split(stream, tc.start, repeat(tc.in, tc.frames))...)
			require.Len(t, got, tc.windows)
			for k, w := range got {
				assert.Equal(t, Mono16k, w.Format, "window %d", k)
				assert.Equal(t, tc.start+int64(k*tc.size), w.Pos, "window %d position", k)
				// The ramp value is the stream position, so the samples must
				// match their positions exactly.
				assert.Equal(t, ramp(int(w.Pos), tc.size), w.Samples, "window %d samples", k)
			}
			assert.Equal(t, tc.pending, r.Pending())
		})
	}
}

func TestReframerArbitraryInputSizesMatchOneShot(t *testing.T) {
	const n = 10000
	stream := ramp(1000, n)
	for _, size := range []int{512, 160, 7} {
		oneShot := NewReframer(size)
		want := collect(oneShot, Frame{Format: Mono16k, Pos: 1000, Samples: stream})
		require.Len(t, want, n/size)

		for seed := range uint64(10) {
			rng := rand.New(rand.NewPCG(seed, uint64(size)))
			var sizes []int
			for left := n; left > 0; {
				s := min(left, 1+rng.IntN(1000))
				sizes = append(sizes, s)
				left -= s
			}
			r := NewReframer(size)
			got := collect(r, split(stream, 1000, sizes)...)
			require.Equal(t, want, got, "size %d seed %d", size, seed)
			assert.Equal(t, oneShot.Pending(), r.Pending(), "size %d seed %d", size, seed)
		}
	}
}

func TestReframerGapRestarts(t *testing.T) {
	tests := []struct {
		name        string
		frames      []Frame
		wantPos     []int64
		wantPending int
	}{
		{
			name: "forward gap drops the partial window",
			frames: []Frame{
				{Format: Mono16k, Pos: 0, Samples: ramp(0, 300)},
				{Format: Mono16k, Pos: 1000, Samples: ramp(1000, 300)},
				{Format: Mono16k, Pos: 1300, Samples: ramp(1300, 300)},
			},
			wantPos:     []int64{1000},
			wantPending: 88,
		},
		{
			name: "backward jump restarts too",
			frames: []Frame{
				{Format: Mono16k, Pos: 5000, Samples: ramp(5000, 600)},
				{Format: Mono16k, Pos: 100, Samples: ramp(100, 600)},
			},
			wantPos:     []int64{5000, 100},
			wantPending: 88,
		},
		{
			name: "gap right after a full window",
			frames: []Frame{
				{Format: Mono16k, Pos: 0, Samples: ramp(0, 512)},
				{Format: Mono16k, Pos: 513, Samples: ramp(513, 512)},
			},
			wantPos:     []int64{0, 513},
			wantPending: 0,
		},
		{
			name: "contiguous frames do not restart",
			frames: []Frame{
				{Format: Mono16k, Pos: 0, Samples: ramp(0, 300)},
				{Format: Mono16k, Pos: 300, Samples: ramp(300, 300)},
			},
			wantPos:     []int64{0},
			wantPending: 88,
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			r := NewReframer(512)
			got := collect(r, tc.frames...)
			var pos []int64
			for _, w := range got {
				pos = append(pos, w.Pos)
				assert.Equal(t, ramp(int(w.Pos), 512), w.Samples, "window at %d stitched unrelated audio", w.Pos)
			}
			assert.Equal(t, tc.wantPos, pos)
			assert.Equal(t, tc.wantPending, r.Pending())
		})
	}
}

func TestReframerPendingAndReset(t *testing.T) {
	r := NewReframer(512)
	assert.Equal(t, 0, r.Pending())

	assert.Empty(t, collect(r, Frame{Format: Mono16k, Pos: 0, Samples: ramp(0, 400)}))
	assert.Equal(t, 400, r.Pending())

	r.Reset()
	assert.Equal(t, 0, r.Pending())

	// After a reset the next frame starts a fresh window even if it is
	// contiguous with what came before; the forgotten 400 samples are not
	// part of it.
	got := collect(r, Frame{Format: Mono16k, Pos: 400, Samples: ramp(400, 600)})
	require.Len(t, got, 1)
	assert.Equal(t, int64(400), got[0].Pos)
	assert.Equal(t, ramp(400, 512), got[0].Samples)
	assert.Equal(t, 88, r.Pending())

	// And it keeps the format of the frame that primed it.
	r.Reset()
	f48k := Format{Rate: 48000, Channels: 1}
	got = collect(r, Frame{Format: f48k, Pos: 0, Samples: ramp(0, 512)})
	require.Len(t, got, 1)
	assert.Equal(t, f48k, got[0].Format)
}
