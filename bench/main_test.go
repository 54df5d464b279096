package bench

import (
	"os"
	"testing"

	"github.com/voiceassistant/voice/internal/testenv"
)

// The replays look for installed models (wiring.Stages.WithInstalled):
// in a temporary cache, not the user's.
func TestMain(m *testing.M) { os.Exit(testenv.Isolated(m).Run()) }
