package moss

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/stretchr/testify/require"

	"github.com/voiceassistant/voice/tts/spm"
)

// textGolden is testdata/text_golden.json, written by
// scripts/models/moss_text_golden.py from upstream's own functions.
type textGolden struct {
	Upstream  string `json:"upstream"`
	Tokenizer string `json:"tokenizer"`
	Cases     []struct {
		Name       string    `json:"name"`
		Text       string    `json:"text"`
		Normalized string    `json:"normalized"`
		Prepared   *string   `json:"prepared"`
		Sentences  []string  `json:"sentences"`
		MaxTokens  int       `json:"max_tokens"`
		Chunks     []string  `json:"chunks"`
		Pauses     []float64 `json:"pauses"`
	} `json:"cases"`
	BudgetSplits []struct {
		Text      string   `json:"text"`
		MaxTokens int      `json:"max_tokens"`
		Pieces    []string `json:"pieces"`
	} `json:"budget_splits"`
}

// TestTextGolden checks the port against upstream's own functions (see
// scripts/models/moss_text_golden.py): normalize_tts_text,
// _prepare_text_for_sentence_chunking, _split_text_by_punctuation,
// split_voice_clone_text, split_text_by_token_budget and
// estimate_voice_clone_inter_chunk_pause_seconds, on hand-picked Chinese,
// English and mixed texts, upstream's own normalizer cases and seeded
// random ones, tokens counted with the tiny model's tokenizer.
func TestTextGolden(t *testing.T) {
	data, err := os.ReadFile("testdata/text_golden.json")
	require.NoError(t, err)
	var g textGolden
	require.NoError(t, json.Unmarshal(data, &g))
	tok, err := spm.Load(filepath.Join("..", "..", g.Tokenizer))
	require.NoError(t, err)
	count := func(s string) int { return len(tok.Encode(s)) }
	for _, c := range g.Cases {
		t.Run(c.Name, func(t *testing.T) {
			require.Equal(t, c.Normalized, cleanText(c.Text), "normalize_tts_text(%q)", c.Text)
			if c.Prepared != nil {
				prepared := prepareForSplit(c.Normalized)
				want := *c.Prepared
				// The eight spaces upstream puts before non-CJK text of
				// fewer than five words (onnx_tts_runtime.py:203), which
				// prepareForSplit leaves out.
				if !hasCJK(prepared) && len(strings.FieldsFunc(prepared, isSpace)) < 5 {
					want = strings.TrimPrefix(want, "        ")
				}
				require.Equal(t, want, prepared, "_prepare_text_for_sentence_chunking")
				require.Equal(t, c.Sentences, splitAfter(prepared, sentenceEnd), "sentences")
			}
			got := splitText(c.Normalized, c.MaxTokens, count)
			require.Equal(t, len(c.Chunks), len(got), "chunks\n got %q\nwant %q", got, c.Chunks)
			for i := range got {
				require.Equal(t, c.Chunks[i], got[i], "chunk %d", i)
			}
			for i, pause := range c.Pauses {
				require.InDelta(t, pause, chunkGap(got[i]).Seconds(), 1e-9, "pause after chunk %d", i)
			}
		})
	}
	for _, b := range g.BudgetSplits {
		require.Equal(t, b.Pieces, splitByBudget(b.Text, b.MaxTokens, count), "split_text_by_token_budget(%q, %d)", b.Text, b.MaxTokens)
	}
}

// Upstream's robust normalizer, which synthesize runs over every request
// (OpenMOSS/MOSS-TTS-Nano onnx_tts_runtime.py:619, through
// text_normalization_pipeline.py:276), case by case; the line numbers
// below are OpenMOSS/MOSS-TTS-Nano tts_robust_normalizer_single_script.py's.
func TestCleanText(t *testing.T) {
	for _, tc := range []struct{ name, in, want string }{
		// :278 ends the text with "。", English included, unless it ends
		// with punctuation, looking past closing quotes and brackets (:285).
		{"en end", "Sure, I", "Sure, I。"},
		{"zh end", "好的，我", "好的，我。"},
		{"en end inside quotes", `He said "hi"`, `He said "hi"。`},
		{"zh ended inside quotes", "他说“你好。”", "他说“你好。”"},
		// :151 joins lines, ending each.
		{"en lines", "first line\nsecond line", "first line。second line。"},
		{"zh lines", "第一行\n\n第二行", "第一行。第二行。"},
		// :142-145 drop Markdown line markers.
		{"en markdown", "# Heading\n- item one", "Heading。item one。"},
		{"zh markdown", "1. 安装依赖\n2) 运行测试", "安装依赖。运行测试。"},
		// :120 drops control and format characters.
		{"control", "a\u200bb\u0007c\ufeff", "abc。"},
		// :195 reads arrows as a comma.
		{"en arrows", "A -> B => C", "A，B，C。"},
		{"zh arrows", "配置中心→推理编排", "配置中心，推理编排。"},
		// :234-236 quote what brackets enclose.
		{"en brackets", "[S1] hello {whisper}", `"S1" hello "whisper"。`},
		{"zh brackets", "【公告】今天维护", `"公告"今天维护。`},
		// :250 reads a dash run as a full stop.
		{"en dashes", "wait -- what", "wait。what。"},
		{"zh dashes", "重磅——现在开始", "重磅。现在开始。"},
		// :240 unwraps a title that stands alone, not one in a sentence.
		{"zh standalone title", "重磅。《新品发布》——现在开始！", "重磅。新品发布。现在开始！"},
		{"zh embedded title", "我喜欢《哈姆雷特》这本书。", "我喜欢《哈姆雷特》这本书。"},
		// :257 reads an ellipsis as a full stop, unless it ends a word,
		// which _FILELIKE_RE (:78) protects.
		{"en ellipsis", "That is it ... right", "That is it。right。"},
		{"en ellipsis after a word", "wait...", "wait..."},
		{"zh ellipsis", "今天下雨了……", "今天下雨了。"},
		// :260-274 collapse repeated punctuation.
		{"en repeated", "Really?!?!", "Really？！"},
		{"zh repeated", "太离谱了！！！", "太离谱了！"},
		// :205-229 space: single in Latin text, none inside Han text or
		// between it and digits, one between it and Latin words, none
		// before punctuation.
		{"en spaces", "This   is   a   test.", "This is a test."},
		{"zh spaces", "这 是 一 段", "这是一段。"},
		{"zh digits", "第 3 名", "第3名。"},
		{"zh latin", "这是Anthropic的npm包", "这是 Anthropic 的 npm 包。"},
		{"en punctuation", "Hello , world !", "Hello, world!"},
		{"zh punctuation", "你好 ， 世界 。", "你好，世界。"},
		// :187 reads an underscore as a space, outside protected spans.
		{"en underscore", "snake_case name", "snake case name。"},
		// :159-178 protect e-mail addresses, mentions, file names, URLs.
		{"en protected", "mail ops+tts@example.ai or @Fried_rice", "mail ops+tts@example.ai or @Fried_rice。"},
		{"zh mention", "关注@foo_bar", "关注 @foo_bar。"},
		{"zh file name", "处理app.js.map文件", "处理 app.js.map 文件。"},
		{"zh url", "详见 https://x.com/a_b", "详见 https://x.com/a_b。"},
		// A hashtag running into a URL takes in the URL's placeholder,
		// which :181 then never restores; "_" counts as punctuation.
		{"zh hashtag before url", "#话题https://x.com/a", "#话题___PROT0___"},
		{"nothing left", "\u200b", ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			require.Equal(t, tc.want, cleanText(tc.in))
		})
	}
}

// OpenMOSS/MOSS-TTS-Nano onnx_tts_runtime.py:188.
func TestPrepareForSplit(t *testing.T) {
	for _, tc := range []struct{ name, in, want string }{
		// :199-202: capitalized, "." after a letter or digit. No
		// eight-space prefix for fewer than five words (:203): see
		// prepareForSplit.
		{"en", "hello world", "Hello world."},
		{"en punctuated", "okay. let me check。", "Okay. let me check。"},
		// :195-198: "。" unless a sentence ends, and no capital.
		{"zh", "好的，我", "好的，我。"},
		{"zh ended", "好的！", "好的！"},
		{"zh with latin", "用 iPhone 打电话", "用 iPhone 打电话。"},
		// :176: Hangul counts as CJK here.
		{"ko", "안녕하세요 world", "안녕하세요 world。"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			require.Equal(t, tc.want, prepareForSplit(tc.in))
		})
	}
}

// OpenMOSS/MOSS-TTS-Nano onnx_tts_runtime.py:208.
func TestSplitAfter(t *testing.T) {
	for _, tc := range []struct {
		name, in, punct string
		want            []string
	}{
		{"en sentences", "Hello world. How are you? Fine!", sentenceEnd, []string{"Hello world.", "How are you?", "Fine!"}},
		// :217-220: closing quotes stay with the sentence they end.
		{"en closers", `He said "stop." Then he left.`, sentenceEnd, []string{`He said "stop."`, "Then he left."}},
		{"en clauses", "first, second: third", clauseEnd, []string{"first,", "second:", "third"}},
		{"zh sentences", "你好。世界！你好吗？", sentenceEnd, []string{"你好。", "世界！", "你好吗？"}},
		{"zh closers", "他说：“不要走。”然后离开了。", sentenceEnd, []string{"他说：“不要走。”", "然后离开了。"}},
		{"zh clauses", "今天下午，城市北部；明天、后天", clauseEnd, []string{"今天下午，", "城市北部；", "明天、", "后天"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			require.Equal(t, tc.want, splitAfter(tc.in, tc.punct))
		})
	}
}

// runes counts a rune as a token, so that budgets read as lengths.
func runes(s string) int { return utf8.RuneCountInString(s) }

// OpenMOSS/MOSS-TTS-Nano onnx_tts_runtime.py:345: the longest prefix within
// budget (:355-368), cut back to the last space or punctuation among its
// last 24 runes (:372-378).
func TestSplitByBudget(t *testing.T) {
	for _, tc := range []struct {
		name, in string
		budget   int
		want     []string
	}{
		{"en at spaces", "the quick brown fox jumps over the lazy dog", 12, []string{"the quick", "brown fox", "jumps over", "the lazy dog"}},
		{"en long word", "a supercalifragilistic word", 10, []string{"a", "supercalif", "ragilistic", "word"}},
		{"en boundary too far back", "a " + strings.Repeat("b", 30), 30, []string{"a " + strings.Repeat("b", 28), "bb"}},
		{"zh at punctuation", "请打开客厅的灯，然后播放一首音乐", 10, []string{"请打开客厅的灯，", "然后播放一首音乐"}},
		{"zh without punctuation", "请打开客厅的灯然后播放音乐", 5, []string{"请打开客厅", "的灯然后播", "放音乐"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			require.Equal(t, tc.want, splitByBudget(tc.in, tc.budget, runes))
		})
	}
}

// OpenMOSS/MOSS-TTS-Nano onnx_tts_runtime.py:387: sentences (:393), clauses
// of a long sentence (:403), neighbours joined up to the budget (:418-434),
// and a text that stays one chunk returned as given (:435).
func TestSplitText(t *testing.T) {
	for _, tc := range []struct {
		name, in string
		budget   int
		want     []string
	}{
		{"en fragment", "Sure, I。", MaxChunkTokens, []string{"Sure, I。"}},
		{"en one chunk unprepared", "okay. let me check。", MaxChunkTokens, []string{"okay. let me check。"}},
		{"en joined with a space", "hi. yes. go on, please.", 10, []string{"Hi. yes.", "go on,", "please."}},
		{"zh fragment", "好的，我。", MaxChunkTokens, []string{"好的，我。"}},
		{"zh one chunk unprepared", "好的。我看一下", MaxChunkTokens, []string{"好的。我看一下"}},
		{"zh joined without a space", "好。是。我看一下", 6, []string{"好。是。", "我看一下。"}},
		{"zh clauses", "好的。我看一下，马上回来", 6, []string{"好的。", "我看一下，", "马上回来。"}},
		{"blank", " ", MaxChunkTokens, nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			require.Equal(t, tc.want, splitText(tc.in, tc.budget, runes))
		})
	}
}

// OpenMOSS/MOSS-TTS-Nano onnx_tts_runtime.py:437: the longer pause after a
// chunk of four words or fewer, which a Chinese chunk always is.
func TestChunkGap(t *testing.T) {
	for _, tc := range []struct {
		name, chunk string
		want        time.Duration
	}{
		{"en two words", "Sure, I。", ShortChunkGap},
		{"en four words", "that is quite right.", ShortChunkGap},
		{"en five words", "that is not quite right.", ChunkGap},
		{"zh", "今天下午，城市北部将出现大范围的雷阵雨天气，请大家尽量减少外出。", ShortChunkGap},
		{"zh with latin", "这是 Anthropic 的 npm 包，今天 update 到新版本了。", ChunkGap},
	} {
		t.Run(tc.name, func(t *testing.T) {
			require.Equal(t, tc.want, chunkGap(tc.chunk))
		})
	}
}

// BenchmarkPrepareText is what preparing a request as upstream does costs
// before the model runs: the reply's first words, and a three-sentence
// paragraph, in English and Chinese (tokens counted by the tiny model's
// tokenizer, as Synthesize counts them).
func BenchmarkPrepareText(b *testing.B) {
	tok, err := spm.Load(filepath.Join("testdata", "tiny", TokenizerFile))
	require.NoError(b, err)
	count := func(s string) int { return len(tok.Encode(s)) }
	for _, tc := range []struct{ name, text string }{
		{"en_first", "Sure, I"},
		{"zh_first", "好的，我"},
		{"en_paragraph", "The weather in Berlin is mild today, with a high of fifteen degrees. Rain is likely after six in the evening, so take an umbrella. Tomorrow looks dry and a little warmer."},
		{"zh_paragraph", "今天北京天气晴朗，最高气温十五度。傍晚六点以后可能有小雨，出门记得带伞。明天天气干燥，稍微暖和一些。"},
	} {
		b.Run(tc.name, func(b *testing.B) {
			for b.Loop() {
				splitText(cleanText(tc.text), MaxChunkTokens, count)
			}
		})
	}
}
