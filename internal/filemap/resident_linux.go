package filemap

import (
	"syscall"

	"github.com/voiceassistant/voice/internal/memstat"
)

// DropResident takes out of the process's resident memory the pages of
// the files it maps that match says are to go, where the mapping holds
// them unchanged from the file, and returns how many bytes they were. A
// page the process touches again comes back from the page cache (or the
// file), so what stays resident is what the process goes on reading:
// for files read whole once, at a load, and in part from then on.
//
// A private mapping's page written to is the process's own copy, which
// dropping would lose: a mapping that holds one is left as it is.
func DropResident(match func(path string) bool) int64 {
	areas, err := memstat.Areas()
	if err != nil {
		return 0
	}
	var dropped int64
	for _, a := range areas {
		if a.Anon != 0 || a.RSS == 0 || !match(a.Name) {
			continue
		}
		if _, _, errno := syscall.Syscall(syscall.SYS_MADVISE, a.Start, a.End-a.Start, syscall.MADV_DONTNEED); errno == 0 {
			dropped += a.RSS
		}
	}
	return dropped
}
