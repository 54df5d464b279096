//go:build unix

package audio

import (
	"context"
	"os"
	"syscall"
	"time"
)

// openInput opens path for reading. Opening a FIFO blocks until a writer
// comes; if ctx ends first, openInput becomes that writer for an instant,
// so the blocked open returns and nothing is left waiting.
func openInput(ctx context.Context, path string) (*os.File, error) {
	if st, err := os.Stat(path); err != nil || st.Mode()&os.ModeNamedPipe == 0 {
		return os.Open(path)
	}
	type opened struct {
		f   *os.File
		err error
	}
	done := make(chan opened, 1)
	go func() {
		f, err := os.Open(path)
		done <- opened{f, err}
	}()
	select {
	case o := <-done:
		return o.f, o.err
	case <-ctx.Done():
	}
	// The writer's open fails (ENXIO) until the reader's open is under
	// way, so it is retried until the reader is released.
	tick := time.NewTicker(5 * time.Millisecond)
	defer tick.Stop()
	for {
		if w, err := os.OpenFile(path, os.O_WRONLY|syscall.O_NONBLOCK, 0); err == nil {
			w.Close()
		}
		select {
		case o := <-done:
			if o.f != nil {
				o.f.Close()
			}
			return nil, ctx.Err()
		case <-tick.C:
		}
	}
}
