package audio

import (
	"runtime"
	"sync"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// ramp returns n samples counting up from start, so any reordering, loss
// or duplication shows up as a wrong value.
func ramp(start, n int) []float32 {
	out := make([]float32, n)
	for i := range out {
		out[i] = float32(start + i)
	}
	return out
}

func TestRingCapacityRoundsUpToPowerOfTwo(t *testing.T) {
	for _, tc := range []struct{ capacity, want int }{
		{1, 1}, {2, 2}, {3, 4}, {5, 8}, {8, 8}, {9, 16}, {1000, 1024}, {1024, 1024},
	} {
		r := NewRing(tc.capacity)
		assert.Equal(t, tc.want, r.Cap(), "NewRing(%d)", tc.capacity)
		assert.Equal(t, 0, r.Len())
		assert.Equal(t, tc.want, r.Free())
	}
}

// TestRingOps runs scripted sequences of operations on an 8-sample ring and
// checks every return value and counter after each step.
func TestRingOps(t *testing.T) {
	type op struct {
		write  int    // samples to offer to Write (from the running ramp)
		read   int    // buffer size offered to Read
		skipTo uint64 // SkipTo position, applied when skip is true
		skip   bool

		wantN    int       // Write/Read return value
		wantRead []float32 // what Read copied out
		wantLen  int
		wantW    uint64 // Written
		wantC    uint64 // Consumed
	}
	tests := []struct {
		name string
		ops  []op
	}{
		{
			name: "write then read all",
			ops: []op{
				{write: 5, wantN: 5, wantLen: 5, wantW: 5},
				{read: 5, wantN: 5, wantRead: ramp(0, 5), wantW: 5, wantC: 5},
			},
		},
		{
			name: "write partial when full",
			ops: []op{
				{write: 6, wantN: 6, wantLen: 6, wantW: 6},
				{write: 5, wantN: 2, wantLen: 8, wantW: 8},
				{write: 1, wantN: 0, wantLen: 8, wantW: 8},
				{read: 8, wantN: 8, wantRead: ramp(0, 8), wantW: 8, wantC: 8},
			},
		},
		{
			name: "read partial when short",
			ops: []op{
				{write: 3, wantN: 3, wantLen: 3, wantW: 3},
				{read: 8, wantN: 3, wantRead: ramp(0, 3), wantW: 3, wantC: 3},
				{read: 8, wantN: 0, wantRead: []float32{}, wantW: 3, wantC: 3},
			},
		},
		{
			name: "wraparound write and read",
			ops: []op{
				{write: 6, wantN: 6, wantLen: 6, wantW: 6},
				{read: 4, wantN: 4, wantRead: ramp(0, 4), wantLen: 2, wantW: 6, wantC: 4},
				// Positions 6..11 land at indices 6,7,0,1,2,3.
				{write: 6, wantN: 6, wantLen: 8, wantW: 12, wantC: 4},
				{read: 7, wantN: 7, wantRead: ramp(4, 7), wantLen: 1, wantW: 12, wantC: 11},
				{write: 7, wantN: 7, wantLen: 8, wantW: 19, wantC: 11},
				{read: 100, wantN: 8, wantRead: ramp(11, 8), wantW: 19, wantC: 19},
			},
		},
		{
			name: "many laps",
			ops: func() []op {
				var ops []op
				w, c := 0, 0
				for range 20 {
					ops = append(ops, op{write: 5, wantN: 5, wantLen: 5, wantW: uint64(w + 5), wantC: uint64(c)})
					w += 5
					ops = append(ops, op{read: 5, wantN: 5, wantRead: ramp(c, 5), wantW: uint64(w), wantC: uint64(c + 5)})
					c += 5
				}
				return ops
			}(),
		},
		{
			name: "skip within written",
			ops: []op{
				{write: 6, wantN: 6, wantLen: 6, wantW: 6},
				{read: 2, wantN: 2, wantRead: ramp(0, 2), wantLen: 4, wantW: 6, wantC: 2},
				{skip: true, skipTo: 4, wantLen: 2, wantW: 6, wantC: 4},
				{read: 8, wantN: 2, wantRead: ramp(4, 2), wantW: 6, wantC: 6},
			},
		},
		{
			name: "skip beyond write position clamps",
			ops: []op{
				{write: 6, wantN: 6, wantLen: 6, wantW: 6},
				{skip: true, skipTo: 100, wantLen: 0, wantW: 6, wantC: 6},
				// Nothing is owed: the next write is readable at once.
				{write: 3, wantN: 3, wantLen: 3, wantW: 9, wantC: 6},
				{read: 8, wantN: 3, wantRead: ramp(6, 3), wantW: 9, wantC: 9},
			},
		},
		{
			name: "skip backwards is a no-op",
			ops: []op{
				{write: 6, wantN: 6, wantLen: 6, wantW: 6},
				{read: 4, wantN: 4, wantRead: ramp(0, 4), wantLen: 2, wantW: 6, wantC: 4},
				{skip: true, skipTo: 1, wantLen: 2, wantW: 6, wantC: 4},
				{skip: true, skipTo: 4, wantLen: 2, wantW: 6, wantC: 4},
				{read: 8, wantN: 2, wantRead: ramp(4, 2), wantW: 6, wantC: 6},
			},
		},
		{
			name: "skip frees room for writing",
			ops: []op{
				{write: 8, wantN: 8, wantLen: 8, wantW: 8},
				{write: 1, wantN: 0, wantLen: 8, wantW: 8},
				{skip: true, skipTo: 5, wantLen: 3, wantW: 8, wantC: 5},
				{write: 10, wantN: 5, wantLen: 8, wantW: 13, wantC: 5},
				{read: 8, wantN: 8, wantRead: ramp(5, 8), wantW: 13, wantC: 13},
			},
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			r := NewRing(8)
			next := 0 // next ramp value to write
			for i, o := range tc.ops {
				switch {
				case o.skip:
					r.SkipTo(o.skipTo)
				case o.write > 0:
					n := r.Write(ramp(next, o.write))
					assert.Equal(t, o.wantN, n, "op %d: Write", i)
					next += n
				default:
					buf := make([]float32, o.read)
					for j := range buf {
						buf[j] = -1 // must stay untouched past n
					}
					n := r.Read(buf)
					require.Equal(t, o.wantN, n, "op %d: Read", i)
					assert.Equal(t, o.wantRead, buf[:n], "op %d: samples", i)
					for j := n; j < len(buf); j++ {
						assert.Equal(t, float32(-1), buf[j], "op %d: Read wrote past n", i)
					}
				}
				assert.Equal(t, o.wantLen, r.Len(), "op %d: Len", i)
				assert.Equal(t, r.Cap()-o.wantLen, r.Free(), "op %d: Free", i)
				assert.Equal(t, o.wantW, r.Written(), "op %d: Written", i)
				assert.Equal(t, o.wantC, r.Consumed(), "op %d: Consumed", i)
			}
		})
	}
}

// TestRingSPSC moves a million sequence-numbered samples through a small
// ring with one producer and one consumer running concurrently, in uneven
// block sizes so the two sides wrap at different places.
func TestRingSPSC(t *testing.T) {
	const total = 1_000_000 // float32 is exact for integers up to 2^24
	r := NewRing(1000)

	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		block := make([]float32, 333)
		next := 0
		for next < total {
			n := min(len(block), total-next, 1+next%len(block))
			for i := range n {
				block[i] = float32(next + i)
			}
			w := 0
			for w < n {
				got := r.Write(block[w:n])
				if got == 0 {
					runtime.Gosched()
				}
				w += got
			}
			next += n
		}
	}()

	buf := make([]float32, 257)
	want := 0
	bad := -1
	for want < total {
		n := r.Read(buf[:1+want%len(buf)])
		if n == 0 {
			runtime.Gosched()
			continue
		}
		for i, v := range buf[:n] {
			if bad < 0 && v != float32(want+i) {
				bad = want + i
			}
		}
		want += n
	}
	wg.Wait()
	require.Equal(t, -1, bad, "first out-of-order sample position")
	assert.Equal(t, uint64(total), r.Written())
	assert.Equal(t, uint64(total), r.Consumed())
	assert.Equal(t, 0, r.Len())
}

func TestRingNoAllocs(t *testing.T) {
	r := NewRing(1024)
	in := ramp(0, 300)
	out := make([]float32, 300)
	allocs := testing.AllocsPerRun(200, func() {
		if r.Write(in) != len(in) {
			panic("short write")
		}
		if r.Read(out) != len(out) {
			panic("short read")
		}
	})
	assert.Zero(t, allocs)
	assert.Equal(t, in, out)
}
