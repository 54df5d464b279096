package chunk_test

// TestChunker's cases about markdown, code, emoji, whitespace, Max and
// pieces split at awkward places.

import (
	"strings"

	"github.com/voiceassistant/voice/tts/chunk"
)

// markdownCases are lists, headings and other markdown.
func markdownCases() []chunkCase {
	return []chunkCase{
		{
			name: "numbered list items are chunks of their own", cfg: defCfg,
			text: "Steps:\n1. Open the app.\n2. Tap **Start**.\n3. Wait",
			want: []string{"Steps:", "Open the app.", "Tap Start.", "Wait"},
		},
		{
			name: "bullet list items are chunks of their own", cfg: defCfg,
			text: "- apples\n- pears\n* plums\n+ figs",
			want: []string{"apples", "pears", "plums", "figs"},
		},
		{
			name: "nested lists", cfg: defCfg,
			text: "1. First\n   - sub item\n2) Second",
			want: []string{"First", "sub item", "Second"},
		},
		{
			name: "task lists", cfg: defCfg,
			text: "- [ ] todo\n- [x] done",
			want: []string{"todo", "done"},
		},
		{
			name: "headings, bold and italic", cfg: defCfg,
			text: "# Title\n\nSome **bold** and *italic* text.",
			want: []string{"Title", "Some bold and italic text."},
		},
		{
			name: "inline code keeps its text", cfg: defCfg,
			text: "Run `make build` first. Ok",
			want: []string{"Run make build first.", "Ok"},
		},
		{
			name: "a link is its text", cfg: defCfg,
			text: "See [the docs](https://example.com/docs) for more. Ok",
			want: []string{"See the docs for more.", "Ok"},
		},
		{
			name: "an image is its alt text", cfg: defCfg,
			text: "![a cat](cat.png) is cute. Ok",
			want: []string{"a cat is cute.", "Ok"},
		},
		{
			name: "block quotes", cfg: defCfg,
			text: "> To be or not to be.\n> That is it.",
			want: []string{"To be or not to be.", "That is it."},
		},
		{
			name: "tables lose their pipes and separator rows", cfg: defCfg,
			text: "| Name | Age |\n|------|-----|\n| Ann | 30 |",
			want: []string{"Name Age", "Ann 30"},
		},
		{
			name: "rules and blank lines", cfg: defCfg,
			text: "Above\n\n---\n\nBelow",
			want: []string{"Above", "Below"},
		},
		{
			name: "setext underlines", cfg: defCfg,
			text: "Title\n=====\nText",
			want: []string{"Title", "Text"},
		},
		{
			name: "strike-through, underscores in words, bold", cfg: defCfg,
			text: "This is ~~wrong~~ right, my_var is __bold__. Ok",
			want: []string{"This is wrong right,", "my_var is bold.", "Ok"},
		},
		{
			name: "asterisks between blanks or digits are spoken", cfg: defCfg,
			text: "2 * 3 = 6 and 2*3 too. Ok",
			want: []string{"2 * 3 = 6 and 2*3 too.", "Ok"},
		},
		{
			name: "escaped markup is spoken", cfg: defCfg,
			text: `Use \*literal\* stars. Ok`,
			want: []string{"Use *literal* stars.", "Ok"},
		},
	}
}

// codeCases are code blocks.
func codeCases() []chunkCase {
	return []chunkCase{
		{
			name: "code fences are dropped", cfg: defCfg,
			text: "Here:\n```go\nfmt.Println(\"hi. there\")\n```\nDone.",
			want: []string{"Here:", "Done."},
		},
		{
			name: "an unterminated tilde fence runs to the end", cfg: defCfg,
			text: "Code:\n~~~\nx = 1. y = 2.\n",
			want: []string{"Code:"},
		},
		{
			name: "an indented fence in a list", cfg: defCfg,
			text: "1. Run:\n   ```bash\n   make\n   ```\n2. Done",
			want: []string{"Run:", "Done"},
		},
		{
			name: "a shorter fence does not close a longer one", cfg: defCfg,
			text: "````\n```\nstill code\n````\nAfter",
			want: []string{"After"},
		},
		{
			name: "triple backticks inside a line are a code span", cfg: defCfg,
			text: "Text ```x``` here. Ok",
			want: []string{"Text x here.", "Ok"},
		},
	}
}

// emojiCases are emoji and symbols.
func emojiCases() []chunkCase {
	return []chunkCase{
		{
			name: "emoji are not spoken", cfg: defCfg,
			text: "Great job! 🎉 See you soon 👋",
			want: []string{"Great job!", "See you soon"},
		},
		{
			name: "ZWJ sequences, skin tones and flags", cfg: defCfg,
			text: "Family 👨‍👩‍👧 here 👍🏽 and 🇺🇸 flag. Ok",
			want: []string{"Family here and flag.", "Ok"},
		},
		{
			name: "keycaps and variation selectors", cfg: defCfg,
			text: "Press 1️⃣ then ❤️ it. Ok",
			want: []string{"Press then it.", "Ok"},
		},
		{
			name: "emoji bullets", cfg: defCfg,
			text: "✅ Done\n❌ Failed\n• Skipped",
			want: []string{"Done", "Failed", "Skipped"},
		},
		{
			name: "symbols and arrows", cfg: defCfg,
			text: "Go → next ★ step. Ok",
			want: []string{"Go next step.", "Ok"},
		},
		{
			name: "emoji in Chinese", cfg: defCfg,
			text: "太棒了🎉！我们走吧😀。",
			want: []string{"太棒了！", "我们走吧。"},
		},
	}
}

// whitespaceCases are about whitespace.
func whitespaceCases() []chunkCase {
	return []chunkCase{
		{
			name: "whitespace runs and blank lines collapse", cfg: defCfg,
			text: "Hello    world.\n\n\n\tNext   line",
			want: []string{"Hello world.", "Next line"},
		},
		{
			name: "CRLF line ends", cfg: defCfg,
			text: "One.\r\nTwo.\r\n",
			want: []string{"One.", "Two."},
		},
		{
			name: "no-break and zero-width spaces", cfg: defCfg,
			text: "a\u00a0b\u200bc. Ok",
			want: []string{"a bc.", "Ok"},
		},
	}
}

// maxCases are chunks cut at Max.
func maxCases() []chunkCase {
	return []chunkCase{
		{
			name: "Max forces a split at a clause", cfg: chunk.Config{FirstMin: 1000, Max: 30},
			text: "one two three, four five six seven eight nine ten",
			want: []string{"one two three,", "four five six seven eight", "nine ten"},
		},
		{
			name: "Max forces a split at a space", cfg: chunk.Config{FirstMin: 1000, Max: 20},
			text: "alpha beta gamma delta epsilon",
			want: []string{"alpha beta gamma", "delta epsilon"},
		},
		{
			// Changed: a word (or URL) is no longer cut at Max runes.
			name: "Max never cuts a word", cfg: chunk.Config{FirstMin: 1000, Max: 4},
			text: "abcdefghij klm",
			want: []string{"abcdefghij", "klm"},
		},
		{
			name: "Max never cuts a URL", cfg: chunk.Config{FirstMin: 1000, Max: 10},
			text: "see https://example.com/a/b/c now",
			want: []string{"see", "https://example.com/a/b/c", "now"},
		},
		{
			name: "Max counts runes, not bytes", cfg: chunk.Config{FirstMin: 1000, Max: 4},
			text: "天气很好天气很好天",
			want: []string{"天气很好", "天气很好", "天"},
		},
		{
			name: "Max splits CJK without spaces at Max runes", cfg: chunk.Config{FirstMin: 1000, Max: 5},
			text: "我们今天去公园散步吧",
			want: []string{"我们今天去", "公园散步吧"},
		},
		{
			name: "Max prefers a CJK clause", cfg: chunk.Config{FirstMin: 1000, Max: 8},
			text: "我们今天，去公园散步吧",
			want: []string{"我们今天，", "去公园散步吧"},
		},
		{
			name: "Max never puts CJK punctuation first", cfg: chunk.Config{FirstMin: 1000, Max: 4},
			text: "天气很好。明天",
			want: []string{"天气很", "好。", "明天"},
		},
		{
			name: "Max splits mixed text where CJK meets Latin", cfg: chunk.Config{FirstMin: 1000, Max: 6},
			text: "我用Go写代码很开心",
			want: []string{"我用Go写代", "码很开心"},
		},
		{
			name: "Max lands on a clause mark", cfg: chunk.Config{FirstMin: 1000, Max: 10},
			text: "aaa bbb c, dd", // the comma is rune 10
			want: []string{"aaa bbb c,", "dd"},
		},
		{
			name: "Max keeps a title with its name", cfg: chunk.Config{FirstMin: 1000, Max: 12},
			text: "We met Dr. Smith today",
			want: []string{"We met", "Dr. Smith", "today"},
		},
		{
			name: "Max keeps 3 p.m. together", cfg: chunk.Config{FirstMin: 1000, Max: 10},
			text: "Call at 3 p.m. today",
			want: []string{"Call at", "3 p.m.", "today"},
		},
		{
			name: "no Max", cfg: chunk.Config{FirstMin: 1000, Max: 0},
			text: strings.Repeat("word ", 100) + "end",
			want: []string{strings.Repeat("word ", 100) + "end"},
		},
	}
}

// awkwardPieceCases stream their text split at awkward places.
func awkwardPieceCases() []chunkCase {
	return []chunkCase{
		{
			name: "a decimal split after its point", cfg: defCfg,
			text: "Pi is 3.14 today. Ok", pieces: []string{"Pi is 3.", "14 today. Ok"},
			want: []string{"Pi is 3.14 today.", "Ok"},
		},
		{
			name: "an abbreviation split before its period", cfg: defCfg,
			text: "I saw Dr. Smith today. He left.", pieces: []string{"I saw Dr", ". Smith today. He", " left."},
			want: []string{"I saw Dr. Smith today.", "He left."},
		},
		{
			name: "a fence split inside its backticks", cfg: noFirstCfg,
			text: "Code:\n```go\nx. y. z\n```\nDone.", pieces: []string{"Code:\n``", "`go\nx. y. z\n``", "`\nDone."},
			want: []string{"Code:", "Done."},
		},
		{
			name: "a CJK mark split inside its bytes", cfg: defCfg,
			text: "你好，今天天气很好。我们", pieces: []string{"你好，今天天气很好", "\xe3\x80", "\x82我们"},
			want: []string{"你好，今天天气很好。", "我们"},
		},
		{
			name: "an emoji split inside its bytes", cfg: defCfg,
			text: "Great 😀 ok. Next", pieces: []string{"Great \xf0\x9f", "\x98\x80 ok", ". Next"},
			want: []string{"Great ok.", "Next"},
		},
		{
			name: "emphasis split inside its markers", cfg: defCfg,
			text: "**bold** and **more**. Ok", pieces: []string{"**bo", "ld** and *", "*more**", ". Ok"},
			want: []string{"bold and more.", "Ok"},
		},
		{
			name: "a link split inside its destination", cfg: defCfg,
			text: "A [link](https://x.y/z) here. Ok", pieces: []string{"A [li", "nk](http", "s://x.y/z) here.", " Ok"},
			want: []string{"A link here.", "Ok"},
		},
	}
}
