package chunk_test

import (
	"strings"
	"testing"
	"unicode"

	"github.com/stretchr/testify/require"

	"github.com/voiceassistant/voice/tts/chunk"
)

// benchmarkReply is a realistic ~500-token markdown reply.
const benchmarkReply = "Sure! Here's a quick overview of how to set up the project. 🚀\n\n" +
	"## Prerequisites\n\n" +
	"Before you start, make sure you have the following installed:\n\n" +
	"1. **Go 1.22** or later (check with `go version`).\n" +
	"2. **Docker**, e.g. Docker Desktop 4.30, for the database.\n" +
	"3. About 2.5 GB of free disk space, and a stable connection.\n\n" +
	"## Steps\n\n" +
	"- Clone the repository from https://github.com/example/project.git and open it in your editor.\n" +
	"- Copy `.env.example` to `.env`, then set `DB_PASSWORD` to something secure.\n" +
	"- Run the setup script:\n\n" +
	"```bash\nmake setup\ndocker compose up -d\n```\n\n" +
	"- Start the server with `go run ./cmd/server`; it listens on port 8,080 by default.\n\n" +
	"> **Note:** Dr. Smith's team at the U.S. office found that the first build takes 3 to 5 minutes, " +
	"i.e. longer than later builds, because the module cache is still empty and every dependency has to be " +
	"downloaded, verified and compiled before anything else can happen.\n\n" +
	"| Command | Purpose |\n|---------|---------|\n| `make test` | Runs the unit tests |\n| `make lint` | Checks the style |\n\n" +
	"Once the server is up, open [the dashboard](http://localhost:8080/dash) in a browser. You should see a green " +
	"status badge ✅ and the version number, 1.4.2, in the footer. If the badge is red, the database is probably " +
	"not reachable yet; wait a few seconds and reload the page, since the container can take a while to start on " +
	"slower machines.\n\n" +
	"If anything goes wrong, check the logs (they rotate daily at 10:30 a.m.), or email support@example.com " +
	"with the output of `make doctor` attached. 你也可以用中文提问，我们会尽快回复。" +
	"Let me know if you have any other questions, and happy hacking! 😄"

// tokens splits text the way an LLM streams it: words with their leading
// space, split every 4 characters, punctuation and CJK characters on their
// own, and emoji cut into their bytes.
func tokens(text string) []string {
	var out []string
	start, n := 0, 0
	for i, r := range text {
		split := i > start && (unicode.IsSpace(r) && !unicode.IsSpace(rune(text[i-1])) ||
			unicode.IsPunct(r) || unicode.IsSymbol(r) || unicode.Is(unicode.Han, r) || n >= 4)
		if split {
			out = append(out, text[start:i])
			start, n = i, 0
		}
		if r >= 0x1f000 { // byte-level tokens
			out = append(out, text[start:i+2])
			start = i + 2
		}
		n++
	}
	return append(out, text[start:])
}

func BenchmarkChunker(b *testing.B) {
	pieces := tokens(benchmarkReply)
	require.Equal(b, benchmarkReply, strings.Join(pieces, ""))
	b.ReportAllocs()
	var chunks int
	for b.Loop() {
		c := chunk.New(chunk.DefaultConfig())
		chunks = 0
		for _, p := range pieces {
			chunks += len(c.Push(p))
		}
		chunks += len(c.Flush())
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/1e3/float64(b.N*len(pieces)), "us/piece")
	b.ReportMetric(float64(len(pieces)), "pieces")
	b.ReportMetric(float64(chunks), "chunks")
}
