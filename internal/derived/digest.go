package derived

import (
	"encoding/binary"
	"hash/crc32"
	"os"
	"runtime"
	"sync"
	"sync/atomic"

	"golang.org/x/sync/errgroup"
)

// chunkBytes is the unit a file's content is summed in: a chunk that is
// all hole is not read (its sum is that of zeros), and chunks are summed
// on as many cores as there are.
const chunkBytes = 1 << 20

// digest is the CRC-32C of a file's size and of the CRC-32C of each of its
// chunks: a function of its content alone, whether its zeros are written
// or holes.
func digest(f *os.File, size int64) (uint32, error) {
	chunks := int((size + chunkBytes - 1) / chunkBytes)
	sums := make([]uint32, chunks)
	data := dataChunks(f, size, chunks)
	var next atomic.Int64
	var g errgroup.Group
	for range min(runtime.GOMAXPROCS(0), max(chunks, 1)) {
		g.Go(func() error {
			var buf []byte
			for i := int(next.Add(1) - 1); i < chunks; i = int(next.Add(1) - 1) {
				off := int64(i) * chunkBytes
				n := min(chunkBytes, size-off)
				if data != nil && !data[i] && n == chunkBytes {
					sums[i] = zeroChunkSum()
					continue
				}
				if buf == nil {
					buf = make([]byte, chunkBytes)
				}
				if _, err := f.ReadAt(buf[:n], off); err != nil {
					return err
				}
				sums[i] = crc32.Checksum(buf[:n], castagnoli)
			}
			return nil
		})
	}
	if err := g.Wait(); err != nil {
		return 0, err
	}
	b := binary.BigEndian.AppendUint64(make([]byte, 0, 8+4*chunks), uint64(size))
	for _, s := range sums {
		b = binary.BigEndian.AppendUint32(b, s)
	}
	return crc32.Checksum(b, castagnoli), nil
}

var zeroChunkSum = sync.OnceValue(func() uint32 {
	return crc32.Checksum(make([]byte, chunkBytes), castagnoli)
})
