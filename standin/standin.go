// Package standin provides backends that stand in for the models: an
// energy VAD, a scripted recognizer, scripted turn detectors (ScriptedTurn,
// TimedTurn), a scripted LLM and a tone synthesizer. The README's demo and
// the desktop app's run the real orchestrator on them, as do the tests and
// benchmarks that need no models; no shipped default uses them.
package standin

import (
	"cmp"
	"context"
	"encoding/json"
	"fmt"
	"math"
	"regexp"
	"slices"
	"sort"
	"strings"
	"sync"
	"sync/atomic"
	"time"
	"unicode"
	"unicode/utf8"

	"github.com/voiceassistant/voice/audio"
	"github.com/voiceassistant/voice/internal/clock"
	"github.com/voiceassistant/voice/llm"
	"github.com/voiceassistant/voice/pipeline"
	"github.com/voiceassistant/voice/pipeline/listen"
	"github.com/voiceassistant/voice/tts/normalize"
	"github.com/voiceassistant/voice/vad"
)

// EnergyVAD is a VAD stand-in that calls any frame louder than Threshold
// speech. Like Silero's iterator it confirms a start after MinSpeech and
// an end after MinSilence, and reports the positions where they happened.
type EnergyVAD struct {
	Threshold  float64 // RMS, linear
	MinSpeech  time.Duration
	MinSilence time.Duration

	speaking bool
	runStart int64 // first position of the current loud (or quiet) run
	inRun    bool
}

// NewEnergyVAD returns a VAD stand-in with thresholds suited to test signals
// at about -20 dBFS.
func NewEnergyVAD() *EnergyVAD {
	return &EnergyVAD{Threshold: 0.02, MinSpeech: 100 * time.Millisecond, MinSilence: 200 * time.Millisecond}
}

func (v *EnergyVAD) Process(f audio.Frame) (vad.Result, error) {
	var sum float64
	for _, s := range f.Samples {
		sum += float64(s) * float64(s)
	}
	loud := math.Sqrt(sum/float64(max(1, len(f.Samples)))) >= v.Threshold
	res := vad.Result{Voiced: loud, Pausing: v.speaking && !loud}
	if loud {
		res.Prob = 1
	}
	if loud == v.speaking {
		v.inRun = false
		return res, nil
	}
	if !v.inRun {
		v.inRun, v.runStart = true, f.Pos
	}
	need := v.MinSilence
	if loud {
		need = v.MinSpeech
	}
	if audio.Mono16k.Duration(f.End()-v.runStart) < need {
		return res, nil
	}
	v.speaking, v.inRun, res.Pausing = loud, false, false
	kind := vad.SpeechEnd
	if loud {
		kind = vad.SpeechStart
	}
	res.Events = []vad.Event{{Kind: kind, Pos: v.runStart}}
	return res, nil
}

func (v *EnergyVAD) Reset() {
	*v = EnergyVAD{Threshold: v.Threshold, MinSpeech: v.MinSpeech, MinSilence: v.MinSilence}
}

// Utterance is what the scripted recognizer hears between two audio times.
type Utterance struct {
	Start, End time.Duration
	Text       string
	// TurnComplete is what TimedTurn says in the pause after it.
	TurnComplete float64
	// Words, if set, are Text's words with their own times; otherwise the
	// words share [Start, End) evenly.
	Words []Word
}

// Word is one word of an utterance and the audio that carries it.
type Word struct {
	Text       string
	Start, End time.Duration
}

// timedWords are u's words with their spans. Chinese is heard a character
// at a time, as X-ASR emits it (each character a word).
func (u Utterance) timedWords() []Word {
	if len(u.Words) > 0 {
		return u.Words
	}
	fields := heardWords(u.Text)
	out := make([]Word, len(fields))
	step := (u.End - u.Start) / time.Duration(max(len(fields), 1))
	for i, w := range fields {
		out[i] = Word{Text: w, Start: u.Start + time.Duration(i)*step, End: u.Start + time.Duration(i+1)*step}
	}
	if len(out) > 0 {
		out[len(out)-1].End = u.End
	}
	return out
}

// ScriptedASR is a recognizer stand-in. A word of the script is recognized
// once every frame that carries it (its span) has been fed since the last
// Reset, as a real recognizer needs the whole word: a reset in the middle
// of speech, or a turn started without the frames before the VAD's speech
// start (the pre-roll), loses words here too.
type ScriptedASR struct {
	Script []Utterance
	// FinalStop ends every final transcript, as X-ASR's full stop does;
	// partials never have it.
	FinalStop string
	// Quiet records what each FinalizeAfter was told.
	Quiet []time.Duration
	// PartialLag holds a word out of the partial transcripts until this
	// much audio after it has been fed, as X-ASR's encoder holds the last
	// words until later audio pushes them through; a final has every
	// word fed.
	PartialLag time.Duration
	// Heard is the end of the latest audio fed.
	Heard time.Duration

	words []Word // the script's words in time order, built on first use
	fed   []span // audio fed since Reset, merged, in order
}

type span struct{ from, to time.Duration }

func (a *ScriptedASR) Accept(f audio.Frame) (string, error) {
	a.feed(span{f.Start(), f.Stop()})
	a.Heard = f.Stop()
	return a.text(a.PartialLag), nil
}

func (a *ScriptedASR) Finalize() (string, error) {
	if text := a.text(0); text != "" {
		return text + a.FinalStop, nil
	}
	return "", nil
}

// FinalizeAfter is Finalize, recording quiet (pipeline.QuietFinalizer).
func (a *ScriptedASR) FinalizeAfter(_ context.Context, quiet time.Duration) (string, error) {
	a.Quiet = append(a.Quiet, quiet)
	return a.Finalize()
}

func (a *ScriptedASR) Reset() { a.fed = a.fed[:0] }

// feed adds s to the fed spans, merging it with those it touches.
func (a *ScriptedASR) feed(s span) {
	if s.to <= s.from {
		return
	}
	i := sort.Search(len(a.fed), func(i int) bool { return a.fed[i].to >= s.from })
	j := i
	for j < len(a.fed) && a.fed[j].from <= s.to {
		s.from, s.to = min(s.from, a.fed[j].from), max(s.to, a.fed[j].to)
		j++
	}
	a.fed = slices.Replace(a.fed, i, j, s)
}

// text is the fed words followed by lag more audio, in order.
func (a *ScriptedASR) text(lag time.Duration) string {
	if a.words == nil {
		for _, u := range a.Script {
			a.words = append(a.words, u.timedWords()...)
		}
		slices.SortStableFunc(a.words, func(x, y Word) int { return cmp.Compare(x.Start, y.Start) })
	}
	var out []string
	for _, s := range a.fed {
		i := sort.Search(len(a.words), func(i int) bool { return a.words[i].Start >= s.from })
		for ; i < len(a.words) && a.words[i].Start < s.to; i++ {
			if w := a.words[i]; w.End+lag <= s.to {
				out = append(out, w.Text)
			}
		}
	}
	return joinHeard(out)
}

// ForkingASR is a ScriptedASR that forks (pipeline.Forker), as X-ASR
// does: a fork's final transcript has the words fed before the fork, and
// takes Delay on Clock to make, or fails with Fail. Forked counts the
// forks finalized, Stopped those whose context was done first.
type ForkingASR struct {
	*ScriptedASR
	Clock   clock.Clock
	Delay   time.Duration
	Fail    error
	Forked  atomic.Int32
	Stopped atomic.Int32
	// ForkQuiet is what the last fork was told had come after the speech.
	ForkQuiet time.Duration
}

func (a *ForkingASR) Fork() (pipeline.Finalizer, error) {
	c := *a.ScriptedASR
	c.fed, c.Quiet = slices.Clone(a.fed), nil
	return &scriptedFork{asr: &c, from: a}, nil
}

type scriptedFork struct {
	asr  *ScriptedASR
	from *ForkingASR
}

// FinalizeAfter is the copy's Finalize, recording quiet in ForkQuiet.
func (f *scriptedFork) FinalizeAfter(ctx context.Context, quiet time.Duration) (string, error) {
	f.from.ForkQuiet = quiet
	if f.from.Delay > 0 {
		if err := f.from.Clock.Sleep(ctx, f.from.Delay); err != nil {
			f.from.Stopped.Add(1)
			return "", err
		}
	}
	f.from.Forked.Add(1)
	if f.from.Fail != nil {
		return "", f.from.Fail
	}
	return f.asr.Finalize()
}

func (f *scriptedFork) Close() error { return nil }

// ScriptedLLM is a generator stand-in: it streams the next of Replies word
// by word, the first word after FirstToken and the rest at TokensPerSecond,
// on the session clock. Past the end of Replies it repeats the last one.
// A call for the same user turn as the call before it, heard further (the
// last user message goes on from where that call's ended, on the same
// line), gets the same reply: a speculative reply the pipeline dropped
// because the user went on takes no reply from the script (RollsBack).
//
// A reply may call tools as Qwen3 writes the calls
// (<tool_call>{"name": ..., "arguments": {...}}</tool_call>, cut into
// tokens as any text). A call whose conversation ends with the tools'
// results (llm.Tool messages) is the next round of the same reply and
// takes the next of Replies, in which {tool_response} stands for the
// latest result and {tool_response.NAME} for a field of it (a JSON
// object's).
type ScriptedLLM struct {
	Clock           clock.Clock
	Replies         []string
	FirstToken      time.Duration
	TokensPerSecond float64

	mu    sync.Mutex
	turns int    // user turns answered so far
	said  string // the last user message of the latest call
	convs [][]llm.Message
}

func (l *ScriptedLLM) Generate(ctx context.Context, conv []llm.Message, emit func(string) error) (llm.Stats, error) {
	l.mu.Lock()
	l.convs = append(l.convs, conv)
	said := lastUser(conv)
	rest, sameTurn := strings.CutPrefix(said, l.said)
	result, toolRound := toolResult(conv)
	if l.turns == 0 || toolRound || !sameTurn || strings.HasPrefix(rest, "\n") {
		l.turns++
	}
	l.said = said
	reply := l.Replies[min(l.turns, len(l.Replies))-1]
	l.mu.Unlock()
	if toolRound {
		reply = withToolResult(reply, result)
	}

	// Words stand in for tokens.
	stats := llm.Stats{}
	for _, m := range conv {
		stats.PromptTokens += len(strings.Fields(m.Content))
	}
	for i, word := range replyTokens(reply) {
		wait := l.FirstToken
		if i > 0 {
			if l.TokensPerSecond > 0 { // otherwise all at once
				wait = time.Duration(float64(time.Second) / l.TokensPerSecond)
			} else {
				wait = 0
			}
		}
		if err := l.Clock.Sleep(ctx, wait); err != nil {
			return stats, err
		}
		if err := ctx.Err(); err != nil {
			return stats, err
		}
		if err := emit(word); err != nil {
			return stats, err
		}
		stats.GeneratedTokens++
	}
	return stats, nil
}

// replyTokens cuts a reply as an LLM streams it: English a word at a
// time with the space before it (none before the first), Chinese one or
// two characters a token by turns, as a Chinese LLM's vocabulary holds
// both, and each Chinese punctuation mark a token of its own.
func replyTokens(reply string) []string {
	var out []string
	lead, two := "", true
	for _, field := range strings.Fields(reply) {
		rs := []rune(field)
		for i := 0; i < len(rs); {
			n := 1
			switch {
			case cjk(rs[i]):
				if two && i+1 < len(rs) && cjk(rs[i+1]) {
					n = 2
				}
				two = !two
			case cjkPunct(rs[i]):
			default:
				for i+n < len(rs) && !cjk(rs[i+n]) && !cjkPunct(rs[i+n]) {
					n++
				}
			}
			out = append(out, lead+string(rs[i:i+n]))
			lead, i = "", i+n
		}
		lead = " "
	}
	return out
}

// heardWords cuts a transcript into the words a recognizer emits one by
// one: at spaces, and Chinese a character at a time, as X-ASR does.
func heardWords(text string) []string {
	var out []string
	for _, field := range strings.Fields(text) {
		start := 0
		for i, r := range field {
			if cjk(r) {
				if start < i {
					out = append(out, field[start:i])
				}
				out = append(out, string(r))
				start = i + utf8.RuneLen(r)
			}
		}
		if start < len(field) {
			out = append(out, field[start:])
		}
	}
	return out
}

// joinHeard joins heard words back into a transcript: no space next to a
// Chinese character.
func joinHeard(words []string) string {
	text := ""
	for _, w := range words {
		text = listen.JoinWords(text, w)
	}
	return text
}

func cjk(r rune) bool { return unicode.In(r, unicode.Han, unicode.Hiragana, unicode.Katakana) }

// cjkPunct: the full-width marks Chinese is written with (，。！？、：；…).
func cjkPunct(r rune) bool { return unicode.IsPunct(r) && r >= 0x2000 }

// toolField is a tool result in a scripted reply: {tool_response}, the
// whole result, or {tool_response.time}, a field of a result that is a
// JSON object.
var toolField = regexp.MustCompile(`\{tool_response(?:\.(\w+))?\}`)

func withToolResult(reply, result string) string {
	return toolField.ReplaceAllStringFunc(reply, func(m string) string {
		field := toolField.FindStringSubmatch(m)[1]
		if field == "" {
			return result
		}
		var fields map[string]any
		if json.Unmarshal([]byte(result), &fields) != nil {
			return m
		}
		return fmt.Sprint(fields[field])
	})
}

// toolResult is the latest tool result, if conv ends with the results of
// a round of tool calls.
func toolResult(conv []llm.Message) (string, bool) {
	if n := len(conv); n > 0 && conv[n-1].Role == llm.Tool {
		return conv[n-1].Content, true
	}
	return "", false
}

func lastUser(conv []llm.Message) string {
	for i := len(conv) - 1; i >= 0; i-- {
		if conv[i].Role == llm.User {
			return conv[i].Content
		}
	}
	return ""
}

// RollsBack is true: see the type's documentation.
func (l *ScriptedLLM) RollsBack() bool { return true }

// Conversations returns what each Generate call was given.
func (l *ScriptedLLM) Conversations() [][]llm.Message {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.convs
}

// ToneTTS is a synthesizer stand-in: each character becomes PerChar of a
// sine tone, emitted in FrameLen pieces like an incremental synthesizer.
type ToneTTS struct {
	Out      audio.Format
	PerChar  time.Duration
	FrameLen time.Duration
	Freq     float64
	Amp      float64
}

// NewToneTTS returns a tone synthesizer at 16 kHz mono speaking ~15
// characters a second, in 80 ms frames like MOSS-TTS-Nano's codec.
func NewToneTTS() *ToneTTS {
	return &ToneTTS{Out: audio.Mono16k, PerChar: 66 * time.Millisecond, FrameLen: 80 * time.Millisecond, Freq: 440, Amp: 0.3}
}

func (t *ToneTTS) Format() audio.Format { return t.Out }

func (t *ToneTTS) Synthesize(ctx context.Context, text string, _ normalize.Language, emit func([]float32) error) error {
	total := int(t.Out.Samples(time.Duration(len([]rune(text))) * t.PerChar))
	step := max(1, int(t.Out.Samples(t.FrameLen)))
	// A rotating phasor instead of math.Sin per sample: the stand-in should
	// cost next to nothing, so benchmarks measure the pipeline.
	w := 2 * math.Pi * t.Freq / float64(t.Out.Rate)
	rotRe, rotIm := math.Cos(w), math.Sin(w)
	re, im := 1.0, 0.0
	for at := 0; at < total; at += step {
		if err := ctx.Err(); err != nil {
			return err
		}
		n := min(step, total-at)
		buf := make([]float32, n*t.Out.Channels)
		for i := range n {
			s := float32(t.Amp * im)
			re, im = re*rotRe-im*rotIm, re*rotIm+im*rotRe
			for c := range t.Out.Channels {
				buf[i*t.Out.Channels+c] = s
			}
		}
		if err := emit(buf); err != nil {
			return err
		}
	}
	return nil
}

// ScriptedTurn is a turn-detector stand-in answering each Predict with the
// next of Probs (repeating the last), and recording how much audio it got.
type ScriptedTurn struct {
	Probs []float64

	mu    sync.Mutex
	calls int
	Lens  []int
}

func (d *ScriptedTurn) Predict(_ context.Context, pcm []float32) (float64, error) {
	d.mu.Lock()
	defer d.mu.Unlock()
	p := d.Probs[min(d.calls, len(d.Probs)-1)]
	d.calls++
	d.Lens = append(d.Lens, len(pcm))
	return p, nil
}

// TimedTurn is a turn-detector stand-in that answers from a script: asked
// at audio time t (its Clock's), it says the TurnComplete of the latest
// utterance that ended by t, so a replay goes through the turn model's
// path without the model. Before any utterance has ended it says 0, and
// so it does in a pause inside an utterance (between its words), as a
// semantic detector hears a sentence that is not finished.
type TimedTurn struct {
	Clock  clock.Clock
	Script []Utterance
}

func (d *TimedTurn) Predict(context.Context, []float32) (float64, error) {
	now := d.Clock.Now()
	var latest *Utterance
	for i, u := range d.Script {
		if u.Start <= now && now < u.End {
			return 0, nil
		}
		if u.End <= now && (latest == nil || u.End > latest.End) {
			latest = &d.Script[i]
		}
	}
	if latest == nil {
		return 0, nil
	}
	return latest.TurnComplete, nil
}
