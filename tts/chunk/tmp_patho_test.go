package chunk_test

import (
	"strings"
	"testing"
	"time"

	"github.com/voiceassistant/voice/tts/chunk"
)

func TestTmpPatho(t *testing.T) {
	for _, unit := range []string{"a", "word ", "天", "-", "*", "`", "。", "!", "[", "](", "```\n", "a, ", "Dr. ", "\n"} {
		text := strings.Repeat(unit, 100000/len(unit))
		for _, cfg := range []chunk.Config{{FirstMin: 12, Max: 200}, {FirstMin: 1000, Max: 0}} {
			t0 := time.Now()
			c := chunk.New(cfg)
			n := 0
			for i := 0; i < len(text); i += 3 {
				n += len(c.Push(text[i:min(len(text), i+3)]))
			}
			n += len(c.Flush())
			t.Logf("%q %+v: %v, %d chunks", unit, cfg, time.Since(t0), n)
		}
	}
}
