package chunk_test

// TestChunker's cases about plain text: the first chunk, sentences,
// numbers, abbreviations, addresses and Chinese.

import (
	"slices"

	"github.com/voiceassistant/voice/tts/chunk"
)

// The cases' configs. Most cases are about where a chunk may end at all,
// so their first chunk is not cut short by a word or character count
// (defCfg); FirstWords and FirstChars have cases of their own.
var (
	defCfg = func() chunk.Config {
		c := chunk.DefaultConfig()
		c.FirstWords, c.FirstChars = 0, 0
		return c
	}()
	wordsCfg   = chunk.Config{FirstMin: 12, FirstWords: 3, Max: 200}
	charsCfg   = chunk.DefaultConfig()
	noFirstCfg = chunk.Config{FirstMin: 1000, Max: 200}
)

type chunkCase struct {
	name string
	cfg  chunk.Config
	text string
	want []string
	// pieces, if set, is one more way to stream text, split at an awkward
	// place.
	pieces []string
}

// chunkCases are TestChunker's cases, by topic.
func chunkCases() []chunkCase {
	return slices.Concat(
		firstChunkCases(), basicCases(), numberCases(), abbreviationCases(), addressCases(), chineseCases(),
		markdownCases(), codeCases(), emojiCases(), whitespaceCases(), maxCases(), awkwardPieceCases(),
	)
}

// firstChunkCases are about where the first chunk ends: FirstMin,
// FirstWords and FirstChars.
func firstChunkCases() []chunkCase {
	return []chunkCase{
		{
			name: "the first chunk ends after FirstWords words, the second at a clause", cfg: wordsCfg,
			text: "It is sunny and warm today, with a breeze. Later rain, maybe.",
			want: []string{"It is sunny", "and warm today,", "with a breeze.", "Later rain, maybe."},
		},
		{
			name: "a sentence shorter than FirstWords ends the first chunk", cfg: wordsCfg,
			text: "Yes. It is sunny and warm.",
			want: []string{"Yes.", "It is sunny and warm."},
		},
		{
			name: "a clause before FirstWords words ends the first chunk once FirstMin long", cfg: wordsCfg,
			text: "Unfortunately, it will rain all day.",
			want: []string{"Unfortunately,", "it will rain all day."},
		},
		{
			name: "FirstWords does not cut after a title", cfg: wordsCfg,
			text: "I saw Dr. Smith today. He left.",
			want: []string{"I saw Dr. Smith", "today.", "He left."},
		},
		{
			name: "FirstWords leaves text without spaces alone", cfg: wordsCfg,
			text: "今天天气很好，我们去公园吧。好的",
			want: []string{"今天天气很好，我们去公园吧。", "好的"},
		},
		{
			name: "a Chinese first chunk ends after a particle once half FirstChars long", cfg: charsCfg,
			text: "今天的天气很好，适合出去散步。明天会下雨。",
			want: []string{"今天的", "天气很好，适合出去散步。", "明天会下雨。"},
		},
		{
			name: "a Chinese first chunk ends at a particle; the second at a clause once FirstMin long", cfg: charsCfg,
			text: "北京明天是晴天，最高气温十五度，最低三度。",
			want: []string{"北京明天是", "晴天，最高气温十五度，最低三度。"},
		},
		{
			name: "a Chinese first chunk ends before a preposition", cfg: charsCfg,
			text: "我们明天在公园见面吧。",
			want: []string{"我们明天", "在公园见面吧。"},
		},
		{
			name: "a Chinese first chunk without a natural break ends at FirstChars, inside a word if it must", cfg: charsCfg,
			text: "北京天气预报显示明天晴朗。",
			want: []string{"北京天气预", "报显示明天晴朗。"},
		},
		{
			name: "a Chinese first chunk ends where the predicate starts", cfg: charsCfg,
			text: "明天会下一整天的雨。天气很冷。",
			want: []string{"明天会", "下一整天的雨。", "天气很冷。"},
		},
		{
			name: "a Chinese first chunk keeps a number with the characters beside it", cfg: charsCfg,
			text: "会议在2026年11月30日开始。第2个是两个。",
			want: []string{"会议在2026年11月30日", "开始。", "第2个是两个。"},
		},
		{
			name: "an English first chunk keeps a number with its unit", cfg: charsCfg,
			text: "It is 5 km away. It costs $12.50.",
			want: []string{"It is", "5 km away.", "It costs $12.50."},
		},
		{
			name: "a short Chinese sentence is one chunk", cfg: charsCfg,
			text: "好的。我来查一下。",
			want: []string{"好的。", "我来查一下。"},
		},
		{
			name: "FirstChars leaves a first English word to FirstWords", cfg: charsCfg,
			text: "Sure, here is my answer.",
			want: []string{"Sure, here", "is my answer."},
		},
		{
			name: "FirstChars leaves text with spaces to FirstWords", cfg: charsCfg,
			text: "It is sunny today, so go out.",
			want: []string{"It is", "sunny today,", "so go out."},
		},
	}
}

// basicCases are the basics: sentences and clauses.
func basicCases() []chunkCase {
	return []chunkCase{
		{name: "empty", cfg: defCfg, text: "", want: nil},
		{name: "only spaces", cfg: defCfg, text: "  \n ", want: nil},
		{name: "no boundary is flushed", cfg: defCfg, text: "hello there", want: []string{"hello there"}},
		{
			name: "first chunk at a clause once FirstMin is reached", cfg: defCfg,
			text: "Hello there, how are you today? I am fine.",
			want: []string{"Hello there,", "how are you today?", "I am fine."},
		},
		{
			name: "a short opener waits for the sentence", cfg: defCfg,
			text: "Hi, there. Next one",
			want: []string{"Hi, there.", "Next one"},
		},
		{
			name: "only the first chunk ends at a clause", cfg: chunk.Config{FirstMin: 5, Max: 200},
			text: "Well, I think so, yes. Done.",
			want: []string{"Well,", "I think so, yes.", "Done."},
		},
		{
			name: "sentences end at . ! ? followed by space", cfg: defCfg,
			text: "Wow! Really? Yes. Fine",
			want: []string{"Wow!", "Really?", "Yes.", "Fine"},
		},
		{name: "a sentence end at the very end waits for Flush", cfg: defCfg, text: "It is done.", want: []string{"It is done."}},
		{
			name: "runs of marks stay together", cfg: defCfg,
			text: "Really?! Yes... I think so. Ok",
			want: []string{"Really?!", "Yes...", "I think so.", "Ok"},
		},
		{
			name: "a closing quote stays with its sentence", cfg: defCfg,
			text: `He said "Stop." Then he left.`,
			want: []string{`He said "Stop."`, "Then he left."},
		},
		{
			name: "a semicolon ends a sentence", cfg: defCfg,
			text: "Wait; there is more. Ok",
			want: []string{"Wait;", "there is more.", "Ok"},
		},
		{
			name: "an ellipsis character ends a sentence", cfg: defCfg,
			text: "Well… I am not sure. Ok",
			want: []string{"Well…", "I am not sure.", "Ok"},
		},
	}
}

// numberCases are decimals, numbers and times, whose dots and colons end
// nothing.
func numberCases() []chunkCase {
	return []chunkCase{
		{
			name: "no split inside decimals", cfg: defCfg,
			text: "Pi is about 3.14 today. Ok",
			want: []string{"Pi is about 3.14 today.", "Ok"},
		},
		{
			name: "a decimal at the end of a sentence", cfg: defCfg,
			text: "Pi is 3.14. Next",
			want: []string{"Pi is 3.14.", "Next"},
		},
		{
			name: "a version number", cfg: defCfg,
			text: "Version 2.0.1 is out. Ok",
			want: []string{"Version 2.0.1 is out.", "Ok"},
		},
		{
			name: "no split inside a time", cfg: defCfg,
			text: "The meeting is at 10:30 today. Ok",
			want: []string{"The meeting is at 10:30 today.", "Ok"},
		},
		{
			name: "no split after p.m. before a lowercase word", cfg: defCfg,
			text: "Meet me at 3 p.m. tomorrow. Ok",
			want: []string{"Meet me at 3 p.m. tomorrow.", "Ok"},
		},
		{
			name: "p.m. ends a sentence before a capital", cfg: defCfg,
			text: "Meet me at 3 p.m. Then we eat.",
			want: []string{"Meet me at 3 p.m.", "Then we eat."},
		},
		{
			name: "a.m. and p.m. inside a sentence", cfg: defCfg,
			text: "It opens at 9:45 a.m. and closes at 5:30 p.m. every day. Ok",
			want: []string{"It opens at 9:45 a.m. and closes at 5:30 p.m. every day.", "Ok"},
		},
		{
			name: "no split inside a number with separators", cfg: defCfg,
			text: "We raised 1,000,000 dollars today. Ok",
			want: []string{"We raised 1,000,000 dollars today.", "Ok"},
		},
		{
			name: "European separators", cfg: defCfg,
			text: "We raised 1,000,000 dollars, and 1.000,50 euros. Ok",
			want: []string{"We raised 1,000,000 dollars,", "and 1.000,50 euros.", "Ok"},
		},
		{
			name: "money before a clause", cfg: defCfg,
			text: "It costs $1,234.56, roughly. Ok",
			want: []string{"It costs $1,234.56,", "roughly.", "Ok"},
		},
	}
}

// abbreviationCases are abbreviations, whose dots end no sentence.
func abbreviationCases() []chunkCase {
	return []chunkCase{
		{
			name: "no split after Dr.", cfg: defCfg,
			text: "I saw Dr. Smith today. He was fine.",
			want: []string{"I saw Dr. Smith today.", "He was fine."},
		},
		{
			name: "no split after Mr. and Mrs.", cfg: defCfg,
			text: "Mr. and Mrs. Smith arrived. They sat.",
			want: []string{"Mr. and Mrs. Smith arrived.", "They sat."},
		},
		{
			name: "no split after e.g.", cfg: defCfg,
			text: "Use a tool e.g. this one. Then stop.",
			want: []string{"Use a tool e.g. this one.", "Then stop."},
		},
		{
			name: "e.g. and i.e. after a first clause", cfg: defCfg,
			text: "Bring fruit, e.g. apples, i.e. the red ones. Ok",
			want: []string{"Bring fruit,", "e.g. apples, i.e. the red ones.", "Ok"},
		},
		{
			name: "no split after U.S.", cfg: defCfg,
			text: "The U.S. economy grew. Then it shrank.",
			want: []string{"The U.S. economy grew.", "Then it shrank."},
		},
		{
			name: "no split after U.S. before a lowercase word", cfg: defCfg,
			text: "She lives in the U.S. now. Ok",
			want: []string{"She lives in the U.S. now.", "Ok"},
		},
		{
			name: "no split after Ph.D.", cfg: defCfg,
			text: "He has a Ph.D. in math. Ok",
			want: []string{"He has a Ph.D. in math.", "Ok"},
		},
		{
			name: "etc. inside a sentence", cfg: defCfg,
			text: "We sell apples, pears, etc. and more. Ok",
			want: []string{"We sell apples,", "pears, etc. and more.", "Ok"},
		},
		{
			name: "etc. ends a sentence before a capital", cfg: defCfg,
			text: "I like fruit etc. Then I stop.",
			want: []string{"I like fruit etc.", "Then I stop."},
		},
		{
			name: "No. before a number", cfg: defCfg,
			text: "It is No. 5 on the list. Ok",
			want: []string{"It is No. 5 on the list.", "Ok"},
		},
		{
			name: "no. ending a sentence", cfg: defCfg,
			text: "The answer is no. But why?",
			want: []string{"The answer is no.", "But why?"},
		},
		{
			name: "no split after an initial", cfg: defCfg,
			text: "Ask J. Smith now. Then go.",
			want: []string{"Ask J. Smith now.", "Then go."},
		},
		{
			name: "the pronoun I is no initial", cfg: defCfg,
			text: "So do I. Then we go.",
			want: []string{"So do I.", "Then we go."},
		},
		{
			name: "an exclamation after a word that is also an abbreviation", cfg: defCfg,
			text: "No! Stop that. Ok",
			want: []string{"No!", "Stop that.", "Ok"},
		},
		{
			name: "a question after a single letter", cfg: defCfg,
			text: "Do you mean plan B? Yes, I do.",
			want: []string{"Do you mean plan B?", "Yes, I do."},
		},
		{
			name: "a colon followed by space is a clause", cfg: defCfg,
			text: "Here is the plan: we go now. Ok",
			want: []string{"Here is the plan:", "we go now.", "Ok"},
		},
	}
}

// addressCases are URLs and e-mail addresses.
func addressCases() []chunkCase {
	return []chunkCase{
		{
			name: "no split inside a URL", cfg: defCfg,
			text: "Visit https://example.com/a.b?c=d for details. Ok",
			want: []string{"Visit https://example.com/a.b?c=d for details.", "Ok"},
		},
		{
			name: "a URL at the end of a sentence", cfg: defCfg,
			text: "Go to https://example.com/a.b?c=d. Then log in.",
			want: []string{"Go to https://example.com/a.b?c=d.", "Then log in."},
		},
		{
			name: "no split inside an e-mail address", cfg: defCfg,
			text: "Mail john.doe@example.com today! Ok",
			want: []string{"Mail john.doe@example.com today!", "Ok"},
		},
	}
}

// chineseCases are Chinese and mixed text.
func chineseCases() []chunkCase {
	return []chunkCase{
		{
			name: "Chinese sentence punctuation", cfg: defCfg,
			text: "你好，今天天气很好。我们去公园吧！好吗？",
			want: []string{"你好，今天天气很好。", "我们去公园吧！", "好吗？"},
		},
		{
			name: "Chinese comma ends the first chunk", cfg: chunk.Config{FirstMin: 3, Max: 200},
			text: "你好，今天天气很好，对吧。",
			want: []string{"你好，", "今天天气很好，对吧。"},
		},
		{
			name: "Chinese semicolon and full-width marks", cfg: defCfg,
			text: "今天天气很好！你呢？我很好；谢谢。",
			want: []string{"今天天气很好！", "你呢？", "我很好；", "谢谢。"},
		},
		{
			name: "Chinese runs of marks and ellipsis", cfg: defCfg,
			text: "真的吗？！太好了……我们走吧。",
			want: []string{"真的吗？！", "太好了……", "我们走吧。"},
		},
		{
			name: "Chinese closing quote stays with its sentence", cfg: defCfg,
			text: "他说：“你好。”然后走了。",
			want: []string{"他说：“你好。”", "然后走了。"},
		},
		{
			name: "a decimal in Chinese", cfg: defCfg,
			text: "价格是3.14元，对吗？",
			want: []string{"价格是3.14元，对吗？"},
		},
		{
			name: "spaces next to CJK are dropped", cfg: defCfg,
			text: "你好 世界。 Hello world.",
			want: []string{"你好世界。", "Hello world."},
		},
		{
			name: "mixed Chinese and English", cfg: defCfg,
			text: "我用Go写代码。It works!",
			want: []string{"我用Go写代码。", "It works!"},
		},
		{
			name: "mixed text with a first clause", cfg: defCfg,
			text: "这是iPhone 15，很好用。",
			want: []string{"这是iPhone 15，", "很好用。"},
		},
		{
			name: "ASCII marks in Chinese", cfg: defCfg,
			text: "真的吗?我不知道.",
			want: []string{"真的吗?", "我不知道."},
		},
	}
}
