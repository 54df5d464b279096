package malloc

import (
	"os"
	"runtime"
	"testing"

	"github.com/stretchr/testify/require"
)

func TestLimited(t *testing.T) {
	if os.Getenv("MALLOC_ARENA_MAX") != "" {
		require.False(t, Limited(), "the user's MALLOC_ARENA_MAX was overridden")
		return
	}
	if runtime.GOOS == "linux" {
		// The build machines and the device images use glibc.
		require.True(t, Limited(), "the allocator's arenas were not capped")
	}
}
