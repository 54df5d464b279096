//go:build unix

package onnx_test

import (
	"path/filepath"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/voiceassistant/voice/internal/onnx"
)

// A path that cannot hold a model is named as such before anything opens
// it: a FIFO would block the open until a writer came, and a directory
// mapped gave "no such device".
func TestDeclarationRefusesWhatIsNotAFile(t *testing.T) {
	dir := t.TempDir()
	fifo := filepath.Join(dir, "model.onnx")
	require.NoError(t, syscall.Mkfifo(fifo, 0o644))
	for _, tc := range []struct{ path, says string }{
		{dir, "is a directory"},
		{fifo, "is not a regular file"},
	} {
		done := make(chan error, 1)
		go func() { _, _, err := onnx.Declaration(tc.path); done <- err }()
		select {
		case err := <-done:
			require.Error(t, err, tc.path)
			assert.Contains(t, err.Error(), tc.path)
			assert.Contains(t, err.Error(), tc.says)
			assert.NotContains(t, err.Error(), "no such device")
		case <-time.After(5 * time.Second):
			t.Fatalf("Declaration(%s) blocked", tc.path)
		}
	}
}
