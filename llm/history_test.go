package llm_test

import (
	"bytes"
	"fmt"
	"log/slog"
	"strings"
	"sync"
	"testing"
	"unicode/utf8"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/voiceassistant/voice/llm"
)

func user(s string) llm.Message      { return llm.Message{Role: llm.User, Content: s} }
func assistant(s string) llm.Message { return llm.Message{Role: llm.Assistant, Content: s} }
func cut(s string) llm.Message {
	return llm.Message{Role: llm.Assistant, Content: s, Interrupted: true}
}
func system(s string) llm.Message { return llm.Message{Role: llm.System, Content: s} }

// add replays messages into h through its public API.
func add(h *llm.History, msgs ...llm.Message) {
	for _, m := range msgs {
		if m.Role == llm.User {
			h.AddUser(m.Content)
		} else {
			h.AddAssistant(m.Content, m.Interrupted)
		}
	}
}

func TestHistoryMessages(t *testing.T) {
	tests := []struct {
		name   string
		system string
		add    []llm.Message
		want   []llm.Message
	}{
		{"empty", "sys", nil, []llm.Message{system("sys")}},
		{"no system prompt", "", []llm.Message{user("hi")}, []llm.Message{user("hi")}},
		{
			"system prompt first, then the turns in order", "be brief",
			[]llm.Message{user("hi"), assistant("hello"), user("how are you?"), assistant("fine")},
			[]llm.Message{system("be brief"), user("hi"), assistant("hello"), user("how are you?"), assistant("fine")},
		},
		{
			"an empty reply is not remembered, and the unanswered question joins the next", "sys",
			[]llm.Message{user("hi"), assistant(""), cut(""), user("again")},
			[]llm.Message{system("sys"), user("hi\nagain")},
		},
		{
			"the interrupted flag is kept", "sys",
			[]llm.Message{user("tell me a story"), cut("Once upon"), user("stop"), assistant("ok")},
			[]llm.Message{system("sys"), user("tell me a story"), cut("Once upon"), user("stop"), assistant("ok")},
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			h := llm.NewHistory(tc.system, 0)
			add(h, tc.add...)
			assert.Equal(t, tc.want, h.Messages())
		})
	}
}

func TestHistoryMessagesIsACopy(t *testing.T) {
	h := llm.NewHistory("sys", 0)
	h.AddUser("hi")
	got := h.Messages()
	got[1].Content = "changed"
	_ = append(got[:1], user("injected"))
	assert.Equal(t, []llm.Message{system("sys"), user("hi")}, h.Messages())
}

func TestHistoryBudget(t *testing.T) {
	tests := []struct {
		name string
		max  int
		add  []llm.Message
		want []llm.Message // without the system prompt
	}{
		{
			"within three quarters of the budget keeps everything", 28,
			[]llm.Message{user("aaaaa"), assistant("bbbbb"), user("ccccc"), assistant("ddddd")},
			[]llm.Message{user("aaaaa"), assistant("bbbbb"), user("ccccc"), assistant("ddddd")},
		},
		{
			"the system prompt does not count", 10,
			[]llm.Message{user("aaaaa")},
			[]llm.Message{user("aaaaa")},
		},
		{
			"a reply past three quarters of the budget drops the oldest whole exchanges down to half of it", 20,
			[]llm.Message{user("aaaaa"), assistant("bbbbb"), user("ccccc"), assistant("ddddd")},
			[]llm.Message{user("ccccc"), assistant("ddddd")},
		},
		{
			"a user turn past the budget drops the oldest whole exchanges down to half of it", 18,
			[]llm.Message{user("aaaaa"), assistant("bbbbb"), user("ccccccccc")},
			[]llm.Message{user("ccccccccc")},
		},
		{
			"a user turn within the budget trims nothing", 20,
			[]llm.Message{user("aaaaa"), assistant("bbbbb"), user("cccccccccc")},
			[]llm.Message{user("aaaaa"), assistant("bbbbb"), user("cccccccccc")},
		},
		{
			"keeps what fits in half the budget", 18,
			[]llm.Message{user("aa"), assistant("bb"), user("cc"), assistant("dd"), user("ee"), assistant("ff"), user("gg"), assistant("hh"), user("iiii")},
			[]llm.Message{user("ee"), assistant("ff"), user("gg"), assistant("hh"), user("iiii")},
		},
		{
			"drops several exchanges until it fits", 12,
			[]llm.Message{user("aa"), assistant("bb"), user("cc"), assistant("dd"), user("gggggg")},
			[]llm.Message{user("gggggg")},
		},
		{
			"an exchange goes with all of its replies", 10,
			[]llm.Message{user("a"), cut("bbb"), assistant("ccc"), user("ddddd")},
			[]llm.Message{user("ddddd")},
		},
		{
			"a user turn over half the budget is cut to it, alone", 10,
			[]llm.Message{user("aaa"), assistant("bbb"), user(strings.Repeat("x", 50))},
			[]llm.Message{user("xxxxx")},
		},
		{
			"the newest user message stays when its reply overflows", 20,
			[]llm.Message{user("aaaaa"), assistant("bbbbb"), user("cccccccccc"), assistant("ddddddddddddddd")},
			[]llm.Message{user("cccccccccc"), assistant("ddddddddddddddd")},
		},
		{
			"a leading reply without a question is dropped first", 10,
			[]llm.Message{assistant("Hello, how can I help?"), user("rain")},
			[]llm.Message{user("rain")},
		},
		{
			"characters, not bytes", 10,
			[]llm.Message{user("héllo"), assistant("wörld"), user("ok")},
			[]llm.Message{user("ok")},
		},
		{
			"exactly at the budget", 10,
			[]llm.Message{user("héllo"), assistant("wörld")},
			[]llm.Message{user("héllo"), assistant("wörld")},
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			h := llm.NewHistory("a long system prompt that is never trimmed", tc.max)
			add(h, tc.add...)
			got := h.Messages()
			require.NotEmpty(t, got)
			assert.Equal(t, system("a long system prompt that is never trimmed"), got[0])
			assert.Equal(t, tc.want, got[1:])
		})
	}
}

// TestHistoryBudgetInvariants checks, after every message of a long
// conversation, that the history is a suffix of whole exchanges that fits
// the budget (or is the newest exchange alone) and ends with what was
// added, and that it was trimmed only when over the budget (three quarters
// of it after a reply), to half of it.
func TestHistoryBudgetInvariants(t *testing.T) {
	const budget = 120
	h := llm.NewHistory("sys", budget)
	var all []llm.Message
	c := &checker{budget: budget}
	for i := range 60 {
		u := user(strings.Repeat("u", 1+i*7%23))
		before := h.Messages()
		preview := h.WithUser(u.Content)
		require.Equal(t, before, h.Messages(), "WithUser leaves the history as it is")
		h.AddUser(u.Content)
		require.Equal(t, preview, h.Messages(), "WithUser is the conversation after AddUser")
		if n := len(all); n > 0 && all[n-1].Role == llm.User {
			all[n-1].Content += "\n" + u.Content // unanswered: joined
		} else {
			all = append(all, u)
		}
		c.check(t, h, all)
		for j := range i % 3 {
			a := assistant(strings.Repeat("a", 1+(i+j)*11%47))
			add := h.AddAssistant
			if c.busy = i%4 == 1; c.busy {
				add = h.AddAssistantBusy
			}
			add(a.Content, j == 0 && i%2 == 0)
			a.Interrupted = j == 0 && i%2 == 0
			all = append(all, a)
			c.check(t, h, all)
		}
	}
	require.Greater(t, c.trims, 5, "the conversation was hardly trimmed")
}

// checker follows a history as messages are added: start is where the
// history began in everything added, at the last check; trims counts the
// checks at which it moved; busy says the last reply was added with
// AddAssistantBusy, which trims only past the whole budget.
type checker struct {
	budget, start, trims int
	busy                 bool
}

func (c *checker) check(t *testing.T, h *llm.History, all []llm.Message) {
	t.Helper()
	got := h.Messages()[1:]
	require.NotEmpty(t, got)
	// A suffix of everything added.
	require.Equal(t, all[len(all)-len(got):], got)
	// Starting at a user message: whole exchanges only.
	require.Equal(t, llm.User, got[0].Role, "history starts mid-exchange: %v", got)
	// It contains the newest user message.
	lastUser := -1
	for i, m := range all {
		if m.Role == llm.User {
			lastUser = i
		}
	}
	start := len(all) - len(got)
	require.GreaterOrEqual(t, lastUser, start, "the newest user message was dropped")
	chars := func(msgs []llm.Message) int {
		n := 0
		for _, m := range msgs {
			n += utf8.RuneCountInString(m.Content)
		}
		return n
	}
	total := chars(got)
	newestAlone := true
	for _, m := range got[1:] {
		if m.Role == llm.User {
			newestAlone = false
		}
	}
	// Within budget unless only the newest exchange is left, and within
	// three quarters of it after a reply: a quarter is left for the next
	// user turn, so that it is not trimmed while the user waits.
	if !newestAlone {
		require.LessOrEqual(t, total, c.budget)
		if all[len(all)-1].Role == llm.Assistant && !c.busy {
			require.LessOrEqual(t, total, c.budget*3/4, "a reply left the history past three quarters of its budget")
		}
	}
	require.GreaterOrEqual(t, start, c.start, "the history grew at the front")
	if start > c.start {
		c.trims++
		// Trimmed only when what it held and the new message were over
		// the budget, or three quarters of it after a reply...
		over := c.budget
		if all[len(all)-1].Role == llm.Assistant && !c.busy {
			over = c.budget * 3 / 4
		}
		require.Greater(t, chars(all[c.start:]), over, "trimmed within the budget")
		// ... to half of it, and no further: the previous exchange, put
		// back, would not fit in half.
		if !newestAlone {
			require.LessOrEqual(t, total, c.budget/2)
		}
		prev := start - 1
		for prev > 0 && all[prev].Role != llm.User {
			prev--
		}
		require.Greater(t, total+chars(all[prev:start]), c.budget/2, "trimmed more than half the budget")
	}
	c.start = start
}

// A committed turn the user went on from is taken back from the end of
// the conversation, whether it was a message of its own or the end of one
// it joined; anything else is left alone.
func TestHistoryTakeBackUser(t *testing.T) {
	h := llm.NewHistory("sys", 0)
	h.AddUser("hi")
	h.AddAssistant("Hello.", false)
	h.AddUser("can you tell me")
	require.True(t, h.TakeBackUser("can you tell me"))
	h.AddUser("can you tell me about the weather")
	assert.Equal(t, []llm.Message{{Role: llm.System, Content: "sys"}, {Role: llm.User, Content: "hi"}, {Role: llm.Assistant, Content: "Hello."},
		{Role: llm.User, Content: "can you tell me about the weather"}}, h.Messages())

	// Joined to a question never answered, only its own part goes.
	h.AddUser("and tomorrow")
	require.True(t, h.TakeBackUser("and tomorrow"))
	assert.Equal(t, "can you tell me about the weather", h.Messages()[3].Content)

	assert.False(t, h.TakeBackUser("something else"))
	h.AddAssistant("Sunny.", false)
	assert.False(t, h.TakeBackUser("can you tell me about the weather"), "answered: not the end of the conversation")
	assert.Len(t, h.Messages(), 5)
}

func TestHistoryClear(t *testing.T) {
	h := llm.NewHistory("sys", 100)
	add(h, user("hi"), assistant("hello"))
	h.Clear()
	assert.Equal(t, []llm.Message{system("sys")}, h.Messages())
	h.AddUser("again")
	assert.Equal(t, []llm.Message{system("sys"), user("again")}, h.Messages())

	empty := llm.NewHistory("", 0)
	empty.AddUser("x")
	empty.Clear()
	assert.Empty(t, empty.Messages())
}

func TestHistoryConcurrent(t *testing.T) {
	const budget = 200
	h := llm.NewHistory("sys", budget)
	var wg sync.WaitGroup
	for w := range 4 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range 200 {
				h.AddUser(fmt.Sprintf("user %d/%d", w, i))
				h.AddAssistant(fmt.Sprintf("reply %d/%d", w, i), i%5 == 0)
				h.AddAssistant("", true)
			}
		}()
	}
	wg.Add(2)
	go func() {
		defer wg.Done()
		for range 500 {
			msgs := h.Messages()
			assert.Equal(t, system("sys"), msgs[0])
		}
	}()
	go func() {
		defer wg.Done()
		for range 50 {
			h.Clear()
		}
	}()
	wg.Wait()

	msgs := h.Messages()
	require.Equal(t, system("sys"), msgs[0])
	total := 0
	for _, m := range msgs[1:] {
		assert.NotEmpty(t, m.Content)
		total += utf8.RuneCountInString(m.Content)
	}
	assert.LessOrEqual(t, total, budget)
}

// A history bounded in tokens too is trimmed by whichever bound it passes
// first: the same exchange is far more tokens in Chinese than in English
// for a tokenizer without Chinese words (as the MNN-Pocket stand-in's,
// three tokens a character), and the KV cache holds tokens.
func TestHistoryTokenBudget(t *testing.T) {
	// A tokenizer double: a Chinese character three tokens, an English
	// word one.
	tokens := func(s string) int {
		n := len(strings.Fields(s))
		for _, r := range s {
			if r >= 0x4e00 && r <= 0x9fff {
				n += 3
			}
		}
		return n
	}
	tests := []struct {
		name string
		add  []llm.Message
		want []llm.Message
	}{
		{
			"zh: a reply past three quarters of the tokens trims the oldest exchange",
			[]llm.Message{user("明天北京会下雨吗"), assistant("明天北京有小雨"), user("谢谢"), assistant("不客气")},
			[]llm.Message{user("谢谢"), assistant("不客气")},
		},
		{
			"en: the same exchanges are within both bounds",
			[]llm.Message{user("will it rain tomorrow"), assistant("light rain tomorrow"), user("thanks"), assistant("you are welcome")},
			[]llm.Message{user("will it rain tomorrow"), assistant("light rain tomorrow"), user("thanks"), assistant("you are welcome")},
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			h := llm.NewHistory("sys", 100)
			h.BoundTokens(tokens, 60)
			add(h, tc.add...)
			assert.Equal(t, tc.want, h.Messages()[1:])
		})
	}
}

// One user turn is bounded to half of each budget, cut at a sentence end
// or a word break where one is in the second half of what fits, never
// inside a character (bug: a 60 KB chat line was a 36,462-token prompt
// against a 2048-token budget: the newest message was always kept whole).
func TestHistoryCutsALongUserTurn(t *testing.T) {
	// Tokens as bytes: a Chinese character is three, so a bound in tokens
	// falls inside characters unless the cut keeps them whole.
	byBytes := func(s string) int { return len(s) }
	for _, tc := range []struct {
		name      string
		chars     int
		tokens    func(string) int
		maxTokens int
		text      string
		kept      string
	}{
		{"en: at a sentence end", 100, nil, 0,
			"The weather is fine today. We could walk to the park after lunch. Then we go home and rest.",
			"The weather is fine today."},
		{"en: at a word break where no sentence ends", 40, nil, 0,
			"please read this very long sentence without any end at all",
			"please read this"},
		{"en: a decimal point is no sentence end", 30, nil, 0,
			"the value is 3.14159 and then some more words follow",
			"the value is"},
		{"en: within the bound, whole", 100, nil, 0, "What is the time?", "What is the time?"},
		{"zh: at a sentence end", 40, nil, 0,
			"我们下午去公园散步好吗。然后回家休息，晚上一起看电影好不好",
			"我们下午去公园散步好吗。"},
		{"zh: at a clause mark", 24, nil, 0,
			"我们下午去公园散步吧，然后回家休息然后一起看电影好不好",
			"我们下午去公园散步吧，"},
		{"zh: no break, cut at a character", 10, nil, 0,
			"一二三四五六七八九十一二三四五", "一二三四五"},
		{"zh: a token bound inside a character keeps it whole", 0, byBytes, 16,
			"一二三四五六七八九十", "一二"},
		{"en: the token bound, at a word break", 0, func(s string) int { return len(strings.Fields(s)) }, 10,
			"one two three four five six seven eight nine ten", "one two three four five"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			h := llm.NewHistory("sys", tc.chars)
			if tc.tokens != nil {
				h.BoundTokens(tc.tokens, tc.maxTokens)
			}
			assert.Equal(t, []llm.Message{user(tc.kept)}, h.WithUser(tc.text)[1:], "a speculated reply answers what the turn will be")
			kept := h.AddUser(tc.text)
			assert.Equal(t, tc.kept, kept)
			assert.True(t, utf8.ValidString(kept))
			assert.True(t, strings.HasPrefix(tc.text, kept))
			assert.Equal(t, []llm.Message{user(tc.kept)}, h.Messages()[1:])
		})
	}
}

// A cut turn is said once, as a log line with what was kept of how much;
// a whole one is not.
func TestHistoryLogsACutTurnOnce(t *testing.T) {
	var logged bytes.Buffer
	defer slog.SetDefault(slog.Default())
	slog.SetDefault(slog.New(slog.NewTextHandler(&logged, nil)))
	h := llm.NewHistory("sys", 20)
	h.WithUser(strings.Repeat("词", 30))
	h.AddUser(strings.Repeat("词", 30))
	h.AddAssistant("ok", false)
	h.AddUser("short")
	assert.Equal(t, 1, strings.Count(logged.String(), "\n"), logged.String())
	assert.Contains(t, logged.String(), `level=WARN msg="a user turn longer than the history holds was cut to fit it" kept_chars=10 chars=30 history_chars=20 history_tokens=0`)
}

// A turn that follows one never answered joins it while both fit in the
// bound of one message; past it, the new turn takes the old one's place:
// the user asked again or moved on, and the bound holds.
func TestHistoryJoinsUnansweredTurnsWithinTheBound(t *testing.T) {
	h := llm.NewHistory("sys", 60)
	h.AddUser("what about")
	h.AddUser("the weather")
	assert.Equal(t, []llm.Message{user("what about\nthe weather")}, h.Messages()[1:])
	h.AddUser("and how about tomorrow then")
	assert.Equal(t, []llm.Message{user("and how about tomorrow then")}, h.Messages()[1:])
	assert.True(t, h.TakeBackUser("and how about tomorrow then"))
	assert.Equal(t, []llm.Message{system("sys")}, h.Messages())
}

// A reply the user speaks after trims the history only past its whole
// budget; one the assistant is idle after, from three quarters.
func TestBusyReplyTrimsOnlyPastTheBudget(t *testing.T) {
	tests := []struct {
		name                     string
		first, second, reply     string
		busyDropped, idleDropped int
	}{
		// 40 of 100 characters, then a reply to 80: past three quarters.
		{"en, past three quarters", strings.Repeat("q", 20), strings.Repeat("w", 20), strings.Repeat("a", 20), 0, 2},
		{"zh, past three quarters", strings.Repeat("问", 20), strings.Repeat("题", 20), strings.Repeat("答", 20), 0, 2},
		// ... and to 110: past the whole, busy or not.
		{"en, past the whole", strings.Repeat("q", 20), strings.Repeat("w", 20), strings.Repeat("a", 50), 2, 2},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			for _, busy := range []bool{true, false} {
				h := llm.NewHistory("sys", 100)
				h.AddUser(tc.first)
				h.AddAssistant(strings.Repeat("r", 20), false)
				h.AddUser(tc.second)
				add, want := h.AddAssistant, tc.idleDropped
				if busy {
					add, want = h.AddAssistantBusy, tc.busyDropped
				}
				assert.Equal(t, want, add(tc.reply, true), "busy %v", busy)
			}
		})
	}
}
