package graphedit

import (
	"os"
	"testing"

	"github.com/voiceassistant/voice/internal/testenv"
)

// No test reads the user's model cache.
func TestMain(m *testing.M) { os.Exit(testenv.Isolated(m).Run()) }
