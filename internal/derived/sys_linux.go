package derived

import (
	"errors"
	"fmt"
	"os"
	"syscall"
)

// lseek's whences for a sparse file's data and holes (linux/fs.h).
const (
	seekData = 3
	seekHole = 4
)

// dataChunks tells which of a file's chunks hold data (nil: all may),
// from its data and holes as the file system reports them (a file system
// without holes reports it all as data).
func dataChunks(f *os.File, size int64, chunks int) []bool {
	data := make([]bool, chunks)
	for off := int64(0); off < size; {
		start, err := f.Seek(off, seekData)
		if errors.Is(err, syscall.ENXIO) {
			break // nothing but a hole from off on
		}
		if err != nil {
			return nil
		}
		end, err := f.Seek(start, seekHole)
		if err != nil {
			return nil
		}
		markData(data, start, end)
		off = end
	}
	return data
}

// markData sets, in data, the chunks that the bytes [from, to) fall in.
func markData(data []bool, from, to int64) {
	for i := from / chunkBytes; i <= (to-1)/chunkBytes && i < int64(len(data)); i++ {
		data[i] = true
	}
}

// identity is what of a file, besides its size and modification time,
// changes when its content is replaced: its device and inode (a file
// renamed over it), and its change time, which no program sets back
// (`cp new old; touch -d @<old mtime> old` keeps the rest).
func identity(info os.FileInfo) string {
	st, ok := info.Sys().(*syscall.Stat_t)
	if !ok {
		return ""
	}
	return fmt.Sprintf("dev %d ino %d ctime %d.%09d", st.Dev, st.Ino, st.Ctim.Sec, st.Ctim.Nsec)
}
