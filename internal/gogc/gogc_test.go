package gogc

import (
	"os"
	"runtime/debug"
	"testing"

	"github.com/stretchr/testify/require"
)

func TestPercent(t *testing.T) {
	current := debug.SetGCPercent(Percent)
	defer debug.SetGCPercent(current)
	if os.Getenv("GOGC") != "" {
		t.Skip("the user's GOGC is in effect")
	}
	require.Equal(t, Percent, current, "the collector's percent was not set")
}
