//go:build !unix

package audio

import (
	"context"
	"os"
)

func openInput(_ context.Context, path string) (*os.File, error) { return os.Open(path) }
