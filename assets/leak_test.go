package assets_test

import (
	"fmt"
	"net/http"
	"os"
	"testing"

	"go.uber.org/goleak"

	"github.com/voiceassistant/voice/internal/testenv"
)

// No test leaves a goroutine running, or reads the user's model cache.
// Downloads keep their connections open for the next file, as a client
// should; they are closed first. (An external test package: testenv
// imports assets.)
func TestMain(m *testing.M) {
	code := testenv.Isolated(m).Run()
	http.DefaultClient.CloseIdleConnections()
	if code == 0 {
		if err := goleak.Find(); err != nil {
			fmt.Fprintln(os.Stderr, "goleak:", err)
			code = 1
		}
	}
	os.Exit(code)
}
