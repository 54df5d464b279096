package chunk_test

import (
	"fmt"
	"math/rand/v2"
	"strings"
	"testing"
	"unicode"
	"unicode/utf8"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/voiceassistant/voice/tts/chunk"
)

// whole pushes text at once and then flushes.
func whole(cfg chunk.Config, text string) []string {
	c := chunk.New(cfg)
	return append(c.Push(text), c.Flush()...)
}

// streamed pushes pieces one by one and then flushes.
func streamed(cfg chunk.Config, pieces []string) []string {
	c := chunk.New(cfg)
	var out []string
	for _, p := range pieces {
		out = append(out, c.Push(p)...)
	}
	return append(out, c.Flush()...)
}

// runePieces splits text into pieces of random rune counts (1..8).
func runePieces(rng *rand.Rand, text string) []string {
	var out []string
	for text != "" {
		n := 1 + rng.IntN(8)
		cut := 0
		for range n {
			if cut >= len(text) {
				break
			}
			_, size := utf8.DecodeRuneInString(text[cut:])
			cut += size
		}
		out = append(out, text[:cut])
		text = text[cut:]
	}
	return out
}

// wordPieces splits text the way LLM tokens usually arrive: each piece is
// a word with its leading space, and punctuation on its own.
func wordPieces(text string) []string {
	var out []string
	start := 0
	for i, r := range text {
		if i > start && (unicode.IsSpace(r) || unicode.IsPunct(r)) {
			out = append(out, text[start:i])
			start = i
		}
	}
	if start < len(text) {
		out = append(out, text[start:])
	}
	return out
}

// bytePieces splits text into pieces of random byte counts (1..n), which
// cut multi-byte characters in two.
func bytePieces(rng *rand.Rand, text string, n int) []string {
	var out []string
	for text != "" {
		k := min(len(text), 1+rng.IntN(n))
		out = append(out, text[:k])
		text = text[k:]
	}
	return out
}

// bytesEach is one piece per byte.
func bytesEach(text string) []string {
	out := make([]string, len(text))
	for i := range len(text) {
		out[i] = text[i : i+1]
	}
	return out
}

// runesEach is one piece per rune.
func runesEach(text string) []string {
	var out []string
	for len(text) > 0 {
		_, size := utf8.DecodeRuneInString(text)
		out = append(out, text[:size])
		text = text[size:]
	}
	return out
}

type chunkCase struct {
	name string
	cfg  chunk.Config
	text string
	want []string
	// pieces, if set, is one more way to stream text, split at an awkward
	// place.
	pieces []string
}

func chunkCases() []chunkCase {
	// Most cases are about where a chunk may end at all, so their first
	// chunk is not cut short by a word or character count; FirstWords and
	// FirstChars have cases of their own.
	def := chunk.DefaultConfig()
	def.FirstWords, def.FirstChars = 0, 0
	words := chunk.Config{FirstMin: 12, FirstWords: 3, Max: 200}
	chars := chunk.DefaultConfig()
	noFirst := chunk.Config{FirstMin: 1000, Max: 200}
	return []chunkCase{
		{
			name: "the first chunk ends after FirstWords words, the second at a clause", cfg: words,
			text: "It is sunny and warm today, with a breeze. Later rain, maybe.",
			want: []string{"It is sunny", "and warm today,", "with a breeze.", "Later rain, maybe."},
		},
		{
			name: "a sentence shorter than FirstWords ends the first chunk", cfg: words,
			text: "Yes. It is sunny and warm.",
			want: []string{"Yes.", "It is sunny and warm."},
		},
		{
			name: "a clause before FirstWords words ends the first chunk once FirstMin long", cfg: words,
			text: "Unfortunately, it will rain all day.",
			want: []string{"Unfortunately,", "it will rain all day."},
		},
		{
			name: "FirstWords does not cut after a title", cfg: words,
			text: "I saw Dr. Smith today. He left.",
			want: []string{"I saw Dr. Smith", "today.", "He left."},
		},
		{
			name: "FirstWords leaves text without spaces alone", cfg: words,
			text: "今天天气很好，我们去公园吧。好的",
			want: []string{"今天天气很好，我们去公园吧。", "好的"},
		},
		{
			name: "a Chinese first chunk ends after a particle once half FirstChars long", cfg: chars,
			text: "今天的天气很好，适合出去散步。明天会下雨。",
			want: []string{"今天的", "天气很好，适合出去散步。", "明天会下雨。"},
		},
		{
			name: "a Chinese first chunk ends at a particle; the second at a clause once FirstMin long", cfg: chars,
			text: "北京明天是晴天，最高气温十五度，最低三度。",
			want: []string{"北京明天是", "晴天，最高气温十五度，最低三度。"},
		},
		{
			name: "a Chinese first chunk ends before a preposition", cfg: chars,
			text: "我们明天在公园见面吧。",
			want: []string{"我们明天", "在公园见面吧。"},
		},
		{
			name: "a Chinese first chunk without a natural break ends at FirstChars, inside a word if it must", cfg: chars,
			text: "北京天气预报显示明天晴朗。",
			want: []string{"北京天气预", "报显示明天晴朗。"},
		},
		{
			name: "a Chinese first chunk ends where the predicate starts", cfg: chars,
			text: "明天会下一整天的雨。天气很冷。",
			want: []string{"明天会", "下一整天的雨。", "天气很冷。"},
		},
		{
			name: "a Chinese first chunk keeps a number with the characters beside it", cfg: chars,
			text: "会议在2026年11月30日开始。第2个是两个。",
			want: []string{"会议在2026年11月30日", "开始。", "第2个是两个。"},
		},
		{
			name: "an English first chunk keeps a number with its unit", cfg: chars,
			text: "It is 5 km away. It costs $12.50.",
			want: []string{"It is", "5 km away.", "It costs $12.50."},
		},
		{
			name: "a short Chinese sentence is one chunk", cfg: chars,
			text: "好的。我来查一下。",
			want: []string{"好的。", "我来查一下。"},
		},
		{
			name: "FirstChars leaves a first English word to FirstWords", cfg: chars,
			text: "Sure, here is my answer.",
			want: []string{"Sure, here", "is my answer."},
		},
		{
			name: "FirstChars leaves text with spaces to FirstWords", cfg: chars,
			text: "It is sunny today, so go out.",
			want: []string{"It is", "sunny today,", "so go out."},
		},
		// The basics.
		{name: "empty", cfg: def, text: "", want: nil},
		{name: "only spaces", cfg: def, text: "  \n ", want: nil},
		{name: "no boundary is flushed", cfg: def, text: "hello there", want: []string{"hello there"}},
		{
			name: "first chunk at a clause once FirstMin is reached", cfg: def,
			text: "Hello there, how are you today? I am fine.",
			want: []string{"Hello there,", "how are you today?", "I am fine."},
		},
		{
			name: "a short opener waits for the sentence", cfg: def,
			text: "Hi, there. Next one",
			want: []string{"Hi, there.", "Next one"},
		},
		{
			name: "only the first chunk ends at a clause", cfg: chunk.Config{FirstMin: 5, Max: 200},
			text: "Well, I think so, yes. Done.",
			want: []string{"Well,", "I think so, yes.", "Done."},
		},
		{
			name: "sentences end at . ! ? followed by space", cfg: def,
			text: "Wow! Really? Yes. Fine",
			want: []string{"Wow!", "Really?", "Yes.", "Fine"},
		},
		{name: "a sentence end at the very end waits for Flush", cfg: def, text: "It is done.", want: []string{"It is done."}},
		{
			name: "runs of marks stay together", cfg: def,
			text: "Really?! Yes... I think so. Ok",
			want: []string{"Really?!", "Yes...", "I think so.", "Ok"},
		},
		{
			name: "a closing quote stays with its sentence", cfg: def,
			text: `He said "Stop." Then he left.`,
			want: []string{`He said "Stop."`, "Then he left."},
		},
		{
			name: "a semicolon ends a sentence", cfg: def,
			text: "Wait; there is more. Ok",
			want: []string{"Wait;", "there is more.", "Ok"},
		},
		{
			name: "an ellipsis character ends a sentence", cfg: def,
			text: "Well… I am not sure. Ok",
			want: []string{"Well…", "I am not sure.", "Ok"},
		},

		// Decimals, numbers, times.
		{
			name: "no split inside decimals", cfg: def,
			text: "Pi is about 3.14 today. Ok",
			want: []string{"Pi is about 3.14 today.", "Ok"},
		},
		{
			name: "a decimal at the end of a sentence", cfg: def,
			text: "Pi is 3.14. Next",
			want: []string{"Pi is 3.14.", "Next"},
		},
		{
			name: "a version number", cfg: def,
			text: "Version 2.0.1 is out. Ok",
			want: []string{"Version 2.0.1 is out.", "Ok"},
		},
		{
			name: "no split inside a time", cfg: def,
			text: "The meeting is at 10:30 today. Ok",
			want: []string{"The meeting is at 10:30 today.", "Ok"},
		},
		{
			name: "no split after p.m. before a lowercase word", cfg: def,
			text: "Meet me at 3 p.m. tomorrow. Ok",
			want: []string{"Meet me at 3 p.m. tomorrow.", "Ok"},
		},
		{
			name: "p.m. ends a sentence before a capital", cfg: def,
			text: "Meet me at 3 p.m. Then we eat.",
			want: []string{"Meet me at 3 p.m.", "Then we eat."},
		},
		{
			name: "a.m. and p.m. inside a sentence", cfg: def,
			text: "It opens at 9:45 a.m. and closes at 5:30 p.m. every day. Ok",
			want: []string{"It opens at 9:45 a.m. and closes at 5:30 p.m. every day.", "Ok"},
		},
		{
			name: "no split inside a number with separators", cfg: def,
			text: "We raised 1,000,000 dollars today. Ok",
			want: []string{"We raised 1,000,000 dollars today.", "Ok"},
		},
		{
			name: "European separators", cfg: def,
			text: "We raised 1,000,000 dollars, and 1.000,50 euros. Ok",
			want: []string{"We raised 1,000,000 dollars,", "and 1.000,50 euros.", "Ok"},
		},
		{
			name: "money before a clause", cfg: def,
			text: "It costs $1,234.56, roughly. Ok",
			want: []string{"It costs $1,234.56,", "roughly.", "Ok"},
		},

		// Abbreviations.
		{
			name: "no split after Dr.", cfg: def,
			text: "I saw Dr. Smith today. He was fine.",
			want: []string{"I saw Dr. Smith today.", "He was fine."},
		},
		{
			name: "no split after Mr. and Mrs.", cfg: def,
			text: "Mr. and Mrs. Smith arrived. They sat.",
			want: []string{"Mr. and Mrs. Smith arrived.", "They sat."},
		},
		{
			name: "no split after e.g.", cfg: def,
			text: "Use a tool e.g. this one. Then stop.",
			want: []string{"Use a tool e.g. this one.", "Then stop."},
		},
		{
			name: "e.g. and i.e. after a first clause", cfg: def,
			text: "Bring fruit, e.g. apples, i.e. the red ones. Ok",
			want: []string{"Bring fruit,", "e.g. apples, i.e. the red ones.", "Ok"},
		},
		{
			name: "no split after U.S.", cfg: def,
			text: "The U.S. economy grew. Then it shrank.",
			want: []string{"The U.S. economy grew.", "Then it shrank."},
		},
		{
			name: "no split after U.S. before a lowercase word", cfg: def,
			text: "She lives in the U.S. now. Ok",
			want: []string{"She lives in the U.S. now.", "Ok"},
		},
		{
			name: "no split after Ph.D.", cfg: def,
			text: "He has a Ph.D. in math. Ok",
			want: []string{"He has a Ph.D. in math.", "Ok"},
		},
		{
			name: "etc. inside a sentence", cfg: def,
			text: "We sell apples, pears, etc. and more. Ok",
			want: []string{"We sell apples,", "pears, etc. and more.", "Ok"},
		},
		{
			name: "etc. ends a sentence before a capital", cfg: def,
			text: "I like fruit etc. Then I stop.",
			want: []string{"I like fruit etc.", "Then I stop."},
		},
		{
			name: "No. before a number", cfg: def,
			text: "It is No. 5 on the list. Ok",
			want: []string{"It is No. 5 on the list.", "Ok"},
		},
		{
			name: "no. ending a sentence", cfg: def,
			text: "The answer is no. But why?",
			want: []string{"The answer is no.", "But why?"},
		},
		{
			name: "no split after an initial", cfg: def,
			text: "Ask J. Smith now. Then go.",
			want: []string{"Ask J. Smith now.", "Then go."},
		},
		{
			name: "the pronoun I is no initial", cfg: def,
			text: "So do I. Then we go.",
			want: []string{"So do I.", "Then we go."},
		},
		{
			name: "an exclamation after a word that is also an abbreviation", cfg: def,
			text: "No! Stop that. Ok",
			want: []string{"No!", "Stop that.", "Ok"},
		},
		{
			name: "a question after a single letter", cfg: def,
			text: "Do you mean plan B? Yes, I do.",
			want: []string{"Do you mean plan B?", "Yes, I do."},
		},
		{
			name: "a colon followed by space is a clause", cfg: def,
			text: "Here is the plan: we go now. Ok",
			want: []string{"Here is the plan:", "we go now.", "Ok"},
		},

		// URLs and e-mail addresses.
		{
			name: "no split inside a URL", cfg: def,
			text: "Visit https://example.com/a.b?c=d for details. Ok",
			want: []string{"Visit https://example.com/a.b?c=d for details.", "Ok"},
		},
		{
			name: "a URL at the end of a sentence", cfg: def,
			text: "Go to https://example.com/a.b?c=d. Then log in.",
			want: []string{"Go to https://example.com/a.b?c=d.", "Then log in."},
		},
		{
			name: "no split inside an e-mail address", cfg: def,
			text: "Mail john.doe@example.com today! Ok",
			want: []string{"Mail john.doe@example.com today!", "Ok"},
		},

		// Chinese and mixed text.
		{
			name: "Chinese sentence punctuation", cfg: def,
			text: "你好，今天天气很好。我们去公园吧！好吗？",
			want: []string{"你好，今天天气很好。", "我们去公园吧！", "好吗？"},
		},
		{
			name: "Chinese comma ends the first chunk", cfg: chunk.Config{FirstMin: 3, Max: 200},
			text: "你好，今天天气很好，对吧。",
			want: []string{"你好，", "今天天气很好，对吧。"},
		},
		{
			name: "Chinese semicolon and full-width marks", cfg: def,
			text: "今天天气很好！你呢？我很好；谢谢。",
			want: []string{"今天天气很好！", "你呢？", "我很好；", "谢谢。"},
		},
		{
			name: "Chinese runs of marks and ellipsis", cfg: def,
			text: "真的吗？！太好了……我们走吧。",
			want: []string{"真的吗？！", "太好了……", "我们走吧。"},
		},
		{
			name: "Chinese closing quote stays with its sentence", cfg: def,
			text: "他说：“你好。”然后走了。",
			want: []string{"他说：“你好。”", "然后走了。"},
		},
		{
			name: "a decimal in Chinese", cfg: def,
			text: "价格是3.14元，对吗？",
			want: []string{"价格是3.14元，对吗？"},
		},
		{
			name: "spaces next to CJK are dropped", cfg: def,
			text: "你好 世界。 Hello world.",
			want: []string{"你好世界。", "Hello world."},
		},
		{
			name: "mixed Chinese and English", cfg: def,
			text: "我用Go写代码。It works!",
			want: []string{"我用Go写代码。", "It works!"},
		},
		{
			name: "mixed text with a first clause", cfg: def,
			text: "这是iPhone 15，很好用。",
			want: []string{"这是iPhone 15，", "很好用。"},
		},
		{
			name: "ASCII marks in Chinese", cfg: def,
			text: "真的吗?我不知道.",
			want: []string{"真的吗?", "我不知道."},
		},

		// Lists, headings and other markdown.
		{
			name: "numbered list items are chunks of their own", cfg: def,
			text: "Steps:\n1. Open the app.\n2. Tap **Start**.\n3. Wait",
			want: []string{"Steps:", "Open the app.", "Tap Start.", "Wait"},
		},
		{
			name: "bullet list items are chunks of their own", cfg: def,
			text: "- apples\n- pears\n* plums\n+ figs",
			want: []string{"apples", "pears", "plums", "figs"},
		},
		{
			name: "nested lists", cfg: def,
			text: "1. First\n   - sub item\n2) Second",
			want: []string{"First", "sub item", "Second"},
		},
		{
			name: "task lists", cfg: def,
			text: "- [ ] todo\n- [x] done",
			want: []string{"todo", "done"},
		},
		{
			name: "headings, bold and italic", cfg: def,
			text: "# Title\n\nSome **bold** and *italic* text.",
			want: []string{"Title", "Some bold and italic text."},
		},
		{
			name: "inline code keeps its text", cfg: def,
			text: "Run `make build` first. Ok",
			want: []string{"Run make build first.", "Ok"},
		},
		{
			name: "a link is its text", cfg: def,
			text: "See [the docs](https://example.com/docs) for more. Ok",
			want: []string{"See the docs for more.", "Ok"},
		},
		{
			name: "an image is its alt text", cfg: def,
			text: "![a cat](cat.png) is cute. Ok",
			want: []string{"a cat is cute.", "Ok"},
		},
		{
			name: "block quotes", cfg: def,
			text: "> To be or not to be.\n> That is it.",
			want: []string{"To be or not to be.", "That is it."},
		},
		{
			name: "tables lose their pipes and separator rows", cfg: def,
			text: "| Name | Age |\n|------|-----|\n| Ann | 30 |",
			want: []string{"Name Age", "Ann 30"},
		},
		{
			name: "rules and blank lines", cfg: def,
			text: "Above\n\n---\n\nBelow",
			want: []string{"Above", "Below"},
		},
		{
			name: "setext underlines", cfg: def,
			text: "Title\n=====\nText",
			want: []string{"Title", "Text"},
		},
		{
			name: "strike-through, underscores in words, bold", cfg: def,
			text: "This is ~~wrong~~ right, my_var is __bold__. Ok",
			want: []string{"This is wrong right,", "my_var is bold.", "Ok"},
		},
		{
			name: "asterisks between blanks or digits are spoken", cfg: def,
			text: "2 * 3 = 6 and 2*3 too. Ok",
			want: []string{"2 * 3 = 6 and 2*3 too.", "Ok"},
		},
		{
			name: "escaped markup is spoken", cfg: def,
			text: `Use \*literal\* stars. Ok`,
			want: []string{"Use *literal* stars.", "Ok"},
		},

		// Code blocks.
		{
			name: "code fences are dropped", cfg: def,
			text: "Here:\n```go\nfmt.Println(\"hi. there\")\n```\nDone.",
			want: []string{"Here:", "Done."},
		},
		{
			name: "an unterminated tilde fence runs to the end", cfg: def,
			text: "Code:\n~~~\nx = 1. y = 2.\n",
			want: []string{"Code:"},
		},
		{
			name: "an indented fence in a list", cfg: def,
			text: "1. Run:\n   ```bash\n   make\n   ```\n2. Done",
			want: []string{"Run:", "Done"},
		},
		{
			name: "a shorter fence does not close a longer one", cfg: def,
			text: "````\n```\nstill code\n````\nAfter",
			want: []string{"After"},
		},
		{
			name: "triple backticks inside a line are a code span", cfg: def,
			text: "Text ```x``` here. Ok",
			want: []string{"Text x here.", "Ok"},
		},

		// Emoji and symbols.
		{
			name: "emoji are not spoken", cfg: def,
			text: "Great job! 🎉 See you soon 👋",
			want: []string{"Great job!", "See you soon"},
		},
		{
			name: "ZWJ sequences, skin tones and flags", cfg: def,
			text: "Family 👨‍👩‍👧 here 👍🏽 and 🇺🇸 flag. Ok",
			want: []string{"Family here and flag.", "Ok"},
		},
		{
			name: "keycaps and variation selectors", cfg: def,
			text: "Press 1️⃣ then ❤️ it. Ok",
			want: []string{"Press then it.", "Ok"},
		},
		{
			name: "emoji bullets", cfg: def,
			text: "✅ Done\n❌ Failed\n• Skipped",
			want: []string{"Done", "Failed", "Skipped"},
		},
		{
			name: "symbols and arrows", cfg: def,
			text: "Go → next ★ step. Ok",
			want: []string{"Go next step.", "Ok"},
		},
		{
			name: "emoji in Chinese", cfg: def,
			text: "太棒了🎉！我们走吧😀。",
			want: []string{"太棒了！", "我们走吧。"},
		},

		// Whitespace.
		{
			name: "whitespace runs and blank lines collapse", cfg: def,
			text: "Hello    world.\n\n\n\tNext   line",
			want: []string{"Hello world.", "Next line"},
		},
		{
			name: "CRLF line ends", cfg: def,
			text: "One.\r\nTwo.\r\n",
			want: []string{"One.", "Two."},
		},
		{
			name: "no-break and zero-width spaces", cfg: def,
			text: "a\u00a0b\u200bc. Ok",
			want: []string{"a bc.", "Ok"},
		},

		// Max.
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

		// Pieces split at awkward places.
		{
			name: "a decimal split after its point", cfg: def,
			text: "Pi is 3.14 today. Ok", pieces: []string{"Pi is 3.", "14 today. Ok"},
			want: []string{"Pi is 3.14 today.", "Ok"},
		},
		{
			name: "an abbreviation split before its period", cfg: def,
			text: "I saw Dr. Smith today. He left.", pieces: []string{"I saw Dr", ". Smith today. He", " left."},
			want: []string{"I saw Dr. Smith today.", "He left."},
		},
		{
			name: "a fence split inside its backticks", cfg: noFirst,
			text: "Code:\n```go\nx. y. z\n```\nDone.", pieces: []string{"Code:\n``", "`go\nx. y. z\n``", "`\nDone."},
			want: []string{"Code:", "Done."},
		},
		{
			name: "a CJK mark split inside its bytes", cfg: def,
			text: "你好，今天天气很好。我们", pieces: []string{"你好，今天天气很好", "\xe3\x80", "\x82我们"},
			want: []string{"你好，今天天气很好。", "我们"},
		},
		{
			name: "an emoji split inside its bytes", cfg: def,
			text: "Great 😀 ok. Next", pieces: []string{"Great \xf0\x9f", "\x98\x80 ok", ". Next"},
			want: []string{"Great ok.", "Next"},
		},
		{
			name: "emphasis split inside its markers", cfg: def,
			text: "**bold** and **more**. Ok", pieces: []string{"**bo", "ld** and *", "*more**", ". Ok"},
			want: []string{"bold and more.", "Ok"},
		},
		{
			name: "a link split inside its destination", cfg: def,
			text: "A [link](https://x.y/z) here. Ok", pieces: []string{"A [li", "nk](http", "s://x.y/z) here.", " Ok"},
			want: []string{"A link here.", "Ok"},
		},
	}
}

func TestChunker(t *testing.T) {
	cases := chunkCases()
	require.GreaterOrEqual(t, len(cases), 60)
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			require.Equal(t, tc.want, whole(tc.cfg, tc.text), "pushed whole")
			assert.Equal(t, chunk.Speakable(tc.text), chunk.Join(tc.want), "the chunks are the speakable text")
			if tc.pieces != nil {
				require.Equal(t, tc.text, strings.Join(tc.pieces, ""))
				assert.Equal(t, tc.want, streamed(tc.cfg, tc.pieces), "pieces %q", tc.pieces)
			}
			assert.Equal(t, tc.want, streamed(tc.cfg, runesEach(tc.text)), "rune by rune")
			assert.Equal(t, tc.want, streamed(tc.cfg, bytesEach(tc.text)), "byte by byte")
			assert.Equal(t, tc.want, streamed(tc.cfg, wordPieces(tc.text)), "word pieces %q", wordPieces(tc.text))
			for seed := range uint64(10) {
				rng := rand.New(rand.NewPCG(seed, 1))
				pieces := runePieces(rng, tc.text)
				assert.Equal(t, tc.want, streamed(tc.cfg, pieces), "random pieces %q", pieces)
				pieces = bytePieces(rng, tc.text, 6)
				assert.Equal(t, tc.want, streamed(tc.cfg, pieces), "random byte pieces %q", pieces)
			}
		})
	}
}

// TestChunkerStreamingMatchesWhole checks on a long mixed reply, with
// several limits, that how the text is split into pieces never changes the
// chunks.
func TestChunkerStreamingMatchesWhole(t *testing.T) {
	text := strings.Repeat("Sure, here it is: at 10:30 Dr. Smith paid $1,000.50 for e.g. apples! "+
		"Was it J. Doe? No, it was the U.S. team, which then went on and on without stopping for breath or punctuation of any kind whatsoever. "+
		"你好，世界。好的！", 5)
	for _, cfg := range []chunk.Config{chunk.DefaultConfig(), {FirstMin: 1, Max: 7}, {FirstMin: 30, Max: 40}, {FirstMin: 5, Max: 0}} {
		want := whole(cfg, text)
		require.NotEmpty(t, want)
		// Nothing is lost or invented: the chunks are the text with the
		// whitespace between them removed.
		assert.Equal(t, strings.Join(strings.Fields(text), ""), strings.Join(strings.Fields(strings.Join(want, "")), ""))
		for _, c := range want {
			assert.Equal(t, strings.TrimSpace(c), c, "chunks are trimmed")
			assert.NotEmpty(t, c)
			if cfg.Max > 0 && utf8.RuneCountInString(c) > cfg.Max {
				// Changed: a chunk runs past Max only when its first Max
				// characters offer no place to split.
				assert.True(t, unbreakable(c, cfg.Max), "%+v: chunk %q", cfg, c)
			}
		}
		sameChunks(t, want, streamed(cfg, runesEach(text)), "%+v: rune by rune", cfg)
		sameChunks(t, want, streamed(cfg, wordPieces(text)), "%+v: word pieces", cfg)
		for seed := range uint64(30) {
			sameChunks(t, want, streamed(cfg, runePieces(rand.New(rand.NewPCG(seed, 2)), text)), "%+v: seed %d", cfg, seed)
		}
	}
}

// sameChunks reports only the first difference, so a failure on a long
// text stays readable.
func sameChunks(t *testing.T, want, got []string, msg string, args ...any) {
	t.Helper()
	for i := range min(len(want), len(got)) {
		if !assert.Equal(t, want[i], got[i], "%s: chunk %d (previous %q)", fmt.Sprintf(msg, args...), i, want[max(0, i-1)]) {
			return
		}
	}
	assert.Equal(t, len(want), len(got), "%s: chunk count", fmt.Sprintf(msg, args...))
}

// TestChunkerCharacterSplitAcrossPieces: a token stream may cut a
// multi-byte character in two; the chunker must wait for the rest rather
// than cut (or slice) inside it.
func TestChunkerCharacterSplitAcrossPieces(t *testing.T) {
	text := "你好，今天天气很好。我们去公园吧！好吗？" + strings.Repeat("天气很好", 8) + " café naïve"
	for _, cfg := range []chunk.Config{chunk.DefaultConfig(), {FirstMin: 1, Max: 4}, {FirstMin: 3, Max: 7}} {
		want := whole(cfg, text)
		for _, c := range want {
			require.True(t, utf8.ValidString(c), "%+v: chunk %q", cfg, c)
		}
		for seed := range uint64(30) {
			rng := rand.New(rand.NewPCG(seed, 3))
			var pieces []string
			for rest := text; rest != ""; {
				n := min(len(rest), 1+rng.IntN(5)) // bytes, not runes
				pieces = append(pieces, rest[:n])
				rest = rest[n:]
			}
			var got []string
			require.NotPanics(t, func() { got = streamed(cfg, pieces) }, "%+v: seed %d", cfg, seed)
			sameChunks(t, want, got, "%+v: seed %d", cfg, seed)
		}
	}

	// Changed: bytes that are not UTF-8 are not speakable; they used to be
	// kept as single characters.
	t.Run("invalid bytes are dropped", func(t *testing.T) {
		cfg := chunk.Config{FirstMin: 1000, Max: 3}
		var got []string
		require.NotPanics(t, func() { got = whole(cfg, "ab\xffcd\xfe 天气\xe5很好") })
		assert.Equal(t, []string{"abcd", "天气很", "好"}, got)
	})
}

func TestChunkerPushReturnsChunksAsSoonAsKnown(t *testing.T) {
	c := chunk.New(chunk.DefaultConfig())
	assert.Empty(t, c.Push("Hello there"))
	assert.Empty(t, c.Push(","), "a clause needs the following space")
	assert.Equal(t, []string{"Hello there,"}, c.Push(" how"))
	assert.Empty(t, c.Push(" are you."), "a period at the end may still be a decimal point")
	assert.Equal(t, []string{"how are you."}, c.Push(" I"))
	assert.Empty(t, c.Push(""))
	assert.Equal(t, []string{"I"}, c.Flush())
	assert.Empty(t, c.Flush(), "Flush empties the chunker")
	assert.Empty(t, c.Push(" "))
	assert.Empty(t, c.Flush())
}

// unbreakable reports whether the first max characters of chunk c offer
// no place for a Max split: no clause mark, no space but after an
// abbreviation or initial or between a number and a.m./p.m., and no seam
// between a CJK character and its neighbour.
func unbreakable(c string, max int) bool {
	runes := []rune(c)
	for i := 0; i < max && i < len(runes); i++ {
		r, next := runes[i], rune(-1)
		if i+1 < len(runes) {
			next = runes[i+1]
		}
		switch {
		case r == ' ':
			before, after := string(runes[:i]), strings.ToLower(string(runes[i+1:]))
			ampm := strings.HasPrefix(after, "am") || strings.HasPrefix(after, "pm") ||
				strings.HasPrefix(after, "a.m") || strings.HasPrefix(after, "p.m")
			if !strings.HasSuffix(before, ".") && !(unicode.IsDigit(runes[i-1]) && ampm) {
				return false
			}
		case (r == ',' || r == ':') && (next == ' ' || next >= 0 && wide(next)):
			return false
		case strings.ContainsRune("，、：", r) && (next < 0 || !strings.ContainsRune(`"')]}`, next) && !unicode.In(next, unicode.Pe, unicode.Pf)):
			return false
		case next >= 0 && next != ' ' && (wide(r) || wide(next)) && !isASCIIDigit(r) && !isASCIIDigit(next) &&
			!unicode.In(r, unicode.Ps, unicode.Pi) && !unicode.In(next, unicode.Pe, unicode.Pf, unicode.Po):
			return false
		}
	}
	return true
}

func isASCIIDigit(r rune) bool { return '0' <= r && r <= '9' }

// wide: the CJK characters that are written without spaces.
func wide(r rune) bool {
	return unicode.In(r, unicode.Han, unicode.Hiragana, unicode.Katakana, unicode.Bopomofo) ||
		0x3000 <= r && r <= 0x303f || 0xff00 <= r && r <= 0xffef
}

func TestSpeakable(t *testing.T) {
	tests := []struct{ name, text, want string }{
		{"plain text", "Hello, world.", "Hello, world."},
		{"emphasis", "**Bold** and __also__ *it* _it_ ***both***", "Bold and also it it both"},
		{"headings", "# H1\n## H2\n###### H6\n####### seven", "H1 H2 H6 ####### seven"},
		{"hash signs that are no headings", "#hashtag and C# and #1", "#hashtag and C# and #1"},
		{"block quotes", "> quote\n>> nested\n> - item", "quote nested item"},
		{"list markers", "- a\n  - b\n1. c\n10) d\n* e\n+ f", "a b c d e f"},
		{"numbers at the start of a line", "2024 was good\n1.5 is a number\n3.14", "2024 was good 1.5 is a number 3.14"},
		{"links", "[text](http://x.com/(a)b) and [ref] and [a](b \"title\")", "text and ref and a"},
		{"images", "Look: ![alt text](i.png)", "Look: alt text"},
		{"an exclamation before a link", "Hi! [x](y)", "Hi! x"},
		{"code spans", "`a*b*c` and `` x`y ``", "a*b*c and xy"},
		{"a code block", "```\ncode\n```", ""},
		{"an unterminated code block", "text\n```python\nprint(1)\n", "text"},
		{"tables", "| a | b |\n|:-:|--|\n| 1 | 2 |", "a b 1 2"},
		{"rules", "***\n---\n___\n* * *\n===", ""},
		{"underscores", "snake_case and __init__ and a _ b", "snake_case and init and a _ b"},
		{"asterisks", "2 * 3, 2*3, x*y", "2 * 3, 2*3, xy"},
		{"tildes", "~approx and ~~gone~~ and ~5", "~approx and gone and ~5"},
		{"escapes", `\*not bold\* and \\ and C:\Users`, `*not bold* and \ and C:\Users`},
		{"hard line breaks", "one\\\ntwo \\", `one two \`},
		{"emoji", "I ❤️ Go 🚀🚀 👩🏽‍💻 🇯🇵 1️⃣ #️⃣ *️⃣ ©®™ ok", "I Go ok"},
		{"symbols", "a → b ⇒ c ★ d ✓ e • f", "a b c d e f"},
		{"symbols that are spoken", "25°C, 3 × 4 = 12, 50% off, €5", "25°C, 3 × 4 = 12, 50% off, €5"},
		{"spaces next to CJK", "你好 世界 hello 世界 world", "你好世界hello世界world"},
		{"Hangul keeps its spaces", "한국어 문장 입니다", "한국어 문장 입니다"},
		{"whitespace", "a\tb\r\nc\u3000d\u00a0e", "a b c d e"},
		{"blank lines", "  lead and trail  \n\n\n  next  ", "lead and trail next"},
		{"invisible characters", "ctrl\x00\x07chars\u200b\ufeff here", "ctrlchars here"},
		{"invalid UTF-8", "bad \xff\xfe bytes \xe4\xbd", "bad bytes"},
		{"line breaks", "Line one\nLine two", "Line one Line two"},
		{"line breaks in Chinese", "中文\n换行", "中文换行"},
		{"a line break before Chinese", "end\n中文", "end中文"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			assert.Equal(t, tc.want, chunk.Speakable(tc.text))
		})
	}
}

func TestJoin(t *testing.T) {
	assert.Equal(t, "", chunk.Join(nil))
	assert.Equal(t, "Hello, world.", chunk.Join([]string{"Hello,", "world."}))
	assert.Equal(t, "你好，世界", chunk.Join([]string{"你好，", "世界"}))
	assert.Equal(t, "Go很好", chunk.Join([]string{"Go", "很好"}))
	assert.Equal(t, "好。Next", chunk.Join([]string{"好。", "Next"}))
}

func TestChunkerReset(t *testing.T) {
	c := chunk.New(chunk.DefaultConfig())
	assert.Equal(t, []string{"Hello there"}, c.Push("Hello there this is"))
	assert.Equal(t, []string{"this is cut off"}, c.Push(" cut off\n```go\nfmt."))
	c.Reset()
	// Nothing pending survives, the code block included, and the first
	// chunk is short again.
	assert.Equal(t, []string{"A fresh"}, c.Push("A fresh start, again. "))
	assert.Equal(t, []string{"start, again."}, c.Flush())

	// Flush resets too: the first chunk ends after a few words again.
	assert.Equal(t, []string{"Another reply"}, c.Push("Another reply is ok"))
	assert.Equal(t, []string{"is ok"}, c.Flush())
}

// TestChunkerLongRuns streams long runs of one character in small pieces:
// the chunks are the same as pushed whole, and since every lookahead is
// bounded this takes linear time (it took minutes when each Push rescanned
// the run).
func TestChunkerLongRuns(t *testing.T) {
	cfg := chunk.DefaultConfig()
	for _, unit := range []string{"-", "*", "_", "`", "~", "#", "1", "> ", " ", "。", "!", "a", "天", "Dr. "} {
		for _, text := range []string{
			"Start. " + strings.Repeat(unit, 30000) + " end.",
			"Start.\n" + strings.Repeat(unit, 30000) + "\nend.",
		} {
			want := whole(cfg, text)
			assert.Equal(t, chunk.Speakable(text), chunk.Join(want), "%q", unit)
			var pieces []string
			for i := 0; i < len(text); i += 5 {
				pieces = append(pieces, text[i:min(len(text), i+5)])
			}
			sameChunks(t, want, streamed(cfg, pieces), "%q", unit)
		}
	}
}

// vocabulary holds the fragments that random replies are made of: the
// tricky ones for chunking and markdown.
var vocabulary = []string{
	"Hello", "world", "the", "a", "and", "I", "we", "Smith", "Then", "ok", "Go", "iPhone", "한국어",
	"3.14", "3.", "14", "1,000,000", "1.000,50", "$12.50", "10:30", "3 p.m.", "9 am", "a.m.",
	"Dr.", "Mr.", "e.g.", "i.e.", "U.S.", "etc.", "Ph.D.", "No.", "J.",
	"https://example.com/a.b?c=d", "john.doe@example.com", "www.x.io",
	".", ",", "!", "?", ";", ":", "...", "?!", "\"", "(", ")", "'",
	"**", "*", "__", "_", "~~", "~", "`", "``", "```", "\n```go\nx := 1. y\n```\n", "\n~~~\ncode\n",
	"# ", "## ", "\n- ", "\n* ", "\n1. ", "\n2) ", "\n> ", "\n| a | b |\n|---|---|\n", "|", "---",
	"[", "](", "[link](https://x.y/z)", "![img](a.png)", "\\*", "\\", "- [ ] ",
	"😀", "👨‍👩‍👧", "❤️", "1️⃣", "🇺🇸", "👍🏽", "→", "★", "©", "\u200b", "\u00a0", "\ufe0f", "\u200d",
	"你好", "世界", "天气很好", "我们", "，", "。", "！", "？", "；", "、", "：", "…", "……", "“", "”", "「", "」", "３",
	"\n", "\n\n", "  ", "\t", "\r\n", "\u3000", "\xff", "\xe4\xbd",
	"supercalifragilistic", "abcdefghijklmnopqrstuvwxyz0123456789",
}

// randomReply strings random fragments together.
func randomReply(rng *rand.Rand) string {
	var b strings.Builder
	for range 1 + rng.IntN(60) {
		b.WriteString(vocabulary[rng.IntN(len(vocabulary))])
		b.WriteString([]string{"", " ", " ", " ", "\n"}[rng.IntN(5)])
	}
	return b.String()
}

// TestChunkerProperties checks on random replies that (1) the chunks do
// not depend on how the reply is split into pieces and (2) they are the
// reply's speakable text, cut at seams that Join restores.
func TestChunkerProperties(t *testing.T) {
	firstMins := []int{0, 1, 5, 12, 40}
	maxes := []int{0, 1, 2, 3, 5, 8, 13, 30, 200}
	for seed := range uint64(600) {
		rng := rand.New(rand.NewPCG(seed, 7))
		text := randomReply(rng)
		cfg := chunk.Config{FirstMin: firstMins[rng.IntN(len(firstMins))], FirstChars: []int{0, 1, 4}[rng.IntN(3)], Max: maxes[rng.IntN(len(maxes))]}
		want := whole(cfg, text)
		fail := func(msg string, args ...any) {
			t.Helper()
			require.FailNow(t, fmt.Sprintf(msg, args...), "seed %d, %+v, text %q", seed, cfg, text)
		}

		speakable := chunk.Speakable(text)
		if got := chunk.Join(want); got != speakable {
			fail("joined chunks\n%q\nare not the speakable text\n%q", got, speakable)
		}
		for _, c := range want {
			switch {
			case c == "" || strings.TrimSpace(c) != c || !utf8.ValidString(c):
				fail("chunk %q is empty, untrimmed or not UTF-8", c)
			case strings.Contains(c, "\n") || strings.Contains(c, "  "):
				fail("chunk %q has a line break or a double space", c)
			case cfg.Max > 0 && utf8.RuneCountInString(c) > cfg.Max && !unbreakable(c, cfg.Max):
				fail("chunk %q is longer than Max but could be split", c)
			}
		}

		for name, pieces := range map[string][]string{
			"bytes":       bytesEach(text),
			"runes":       runesEach(text),
			"words":       wordPieces(text),
			"byte pieces": bytePieces(rng, text, 8),
			"rune pieces": runePieces(rng, text),
		} {
			if got := streamed(cfg, pieces); !assert.ObjectsAreEqual(want, got) {
				fail("%s %q:\ngot  %q\nwant %q", name, pieces, got, want)
			}
		}
	}
}

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
