package chunk_test

import (
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/voiceassistant/voice/tts/chunk"
)

func TestSource(t *testing.T) {
	for _, tc := range []struct {
		name, reply, heard, want string
		ok                       bool
	}{
		{"plain", "It is sunny today. And warm.", "It is sunny", "It is sunny", true},
		{"the leading space a model writes", " Sure, it is sunny.", "Sure, it", " Sure, it", true},
		{"emphasis before, not after", "It is **very** sunny.", "It is very", "It is **very", true},
		{"a heading and a list", "## Plan\n\n1. **Go** first\n2. Then", "Plan Go first", "## Plan\n\n1. **Go** first", true},
		{"a sentence, not the line break after it", "Hello there.\n\nNext line.", "Hello there.", "Hello there.", true},
		{"a link's text", "See [the docs](http://x.y/z) now.", "See the docs", "See [the docs", true},
		{"Chinese", "你好。今天天气很好，我们出去走走吧。", "你好。今天", "你好。今天", true},
		{"everything", " Done.", "Done.", " Done.", true},
		{"nothing heard", "Hello.", "", "", true},
		{"words the reply does not say", "Hello there.", "Hello world", "", false},
		{"more than the reply says", "Hello.", "Hello. Again", "", false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, ok := chunk.Source(tc.reply, tc.heard)
			assert.Equal(t, tc.ok, ok)
			assert.Equal(t, tc.want, got)
		})
	}
}

// Every start of a reply's speakable text that a barge-in can leave (whole
// words) has a source: a start of the reply, ending in what was heard, that
// says exactly it. The realistic reply always has one; of random replies
// (markup soup), nearly all do, and every source found is right.
func TestSourceOfEveryHeardStart(t *testing.T) {
	check := func(t *testing.T, reply string) (found, starts int) {
		t.Helper()
		words := strings.Fields(chunk.Speakable(reply))
		for i := 1; i <= len(words); i++ {
			heard := strings.Join(words[:i], " ")
			starts++
			got, ok := chunk.Source(reply, heard)
			if !ok {
				continue
			}
			found++
			require.True(t, strings.HasPrefix(reply, got), "%q is not a start of %q", got, reply)
			require.Equal(t, heard, chunk.Speakable(got), "the source %q of %q", got, heard)
			require.False(t, strings.HasSuffix(got, " ") || strings.HasSuffix(got, "\n"), "%q ends past what was heard", got)
		}
		return found, starts
	}
	found, starts := check(t, benchmarkReply)
	assert.Equal(t, starts, found, "the realistic reply")
	assert.Equal(t, "Sure! Here's a quick overview of how to set up the project. 🚀\n\n## Prerequisites",
		must(chunk.Source(benchmarkReply, "Sure! Here's a quick overview of how to set up the project. Prerequisites")))

	found, starts = 0, 0
	for seed := range uint64(300) {
		reply := randomReply(rand.New(rand.NewPCG(seed, 7)))
		f, s := check(t, reply)
		found, starts = found+f, starts+s
	}
	t.Logf("random replies: a source for %d of %d heard starts", found, starts)
	assert.Greater(t, float64(found), 0.95*float64(starts))
}

func must(s string, ok bool) string {
	if !ok {
		return "(none)"
	}
	return s
}

// BenchmarkSource finds the source of the realistic reply's speakable text
// cut in the middle, as a barge-in does: once per barge-in, on the
// pipeline's goroutine.
func BenchmarkSource(b *testing.B) {
	words := strings.Fields(chunk.Speakable(benchmarkReply))
	heard := strings.Join(words[:len(words)/2], " ")
	for b.Loop() {
		if _, ok := chunk.Source(benchmarkReply, heard); !ok {
			b.Fatal("no source")
		}
	}
}
