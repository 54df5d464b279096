package main

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/signal"
	"strings"
	"sync"
	"time"
	"unicode/utf8"

	"github.com/spf13/cobra"

	"github.com/voiceassistant/voice/internal/clock"
	"github.com/voiceassistant/voice/llm"
	"github.com/voiceassistant/voice/pipeline"
	"github.com/voiceassistant/voice/pipeline/reply"
	"github.com/voiceassistant/voice/tools"
	"github.com/voiceassistant/voice/wiring"
)

// chatCmd is a text conversation with the language model: the same
// generator and history the voice pipeline uses, without audio.
func (a *app) chatCmd() *cobra.Command {
	return a.stageFlags(&cobra.Command{
		Use: "chat [--llm-model-dir DIR]",
		Example: `  voice-agent chat
  voice-agent chat --llm scripted --script test/testdata/demo.json`,
		Short: "Type to the assistant and watch its reply stream (Ctrl-C stops a reply; at the prompt, Ctrl-C or Ctrl-D ends the chat)",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) (err error) {
			clk := clock.NewWall()
			gen, closeGen, err := wiring.NewGenerator(a.cfg.Stages, clk)
			if err != nil {
				return err
			}
			defer func() { err = errors.Join(err, closeGen()) }()
			history := wiring.NewHistory(a.cfg.Stages, gen)
			out := &syncWriter{w: cmd.OutOrStdout()}
			var toolbox *tools.Registry
			if a.cfg.Stages.Tools.Enabled {
				ts, err := wiring.NewToolset(a.cfg.Stages.Tools, clk, history, gen, nil)
				if err != nil {
					return err
				}
				defer func() { err = errors.Join(err, ts.Close()) }()
				toolbox = ts.Registry
				go func() {
					// A timer goes off while the chat waits at its prompt.
					for text := range ts.Timers.Fired() {
						fmt.Fprintf(out, "\n[timer] %s\n", text)
					}
				}()
			}

			// Ctrl-C is the chat's own (main's first-signal stop would end
			// the program mid-reply); SIGTERM and SIGHUP stay main's.
			signal.Reset(os.Interrupt)
			interrupts := make(chan os.Signal, 1)
			signal.Notify(interrupts, os.Interrupt)
			defer signal.Stop(interrupts)

			lines, stopReading := readLines(cmd.InOrStdin())
			defer stopReading()
			c := chat{a: a, gen: gen, tools: toolbox, history: history, out: out, lines: lines, interrupts: interrupts}
			return c.run(cmd.Context())
		},
	}, wiring.LLMFlags|wiring.ToolFlags)
}

// chat is one conversation typed at a prompt.
type chat struct {
	a          *app
	gen        pipeline.Generator
	tools      pipeline.Toolbox // nil: no tools (--tools)
	history    *llm.History
	out        io.Writer
	lines      <-chan typedLine
	interrupts chan os.Signal
}

// run prompts for a line, answers it, and again, until the input ends
// (exit 0) or a signal ends the chat. The prompt waits on the input and
// the signals together, so SIGTERM or SIGHUP there ends the chat at once,
// as Ctrl-C does: at the prompt no reply is running for Ctrl-C to stop,
// and a Ctrl-C kept for later stopped the next reply before its first
// word. Both exit as a shell expects of a program that signal ended.
// During a reply Ctrl-C stops the reply only; SIGTERM or SIGHUP stop it
// and end the chat, the reply said to be incomplete.
func (c *chat) run(ctx context.Context) error {
	stopPrefill := prefillWhileIdle(ctx, c.gen, c.history.Messages())
	defer func() { stopPrefill() }()
	for {
		fmt.Fprint(c.out, "> ")
		var line typedLine
		select {
		case line = <-c.lines:
		case <-ctx.Done():
			fmt.Fprintln(c.out)
			return endedAtPrompt(ctx)
		case sig := <-c.interrupts:
			fmt.Fprintln(c.out)
			return fmt.Errorf("chat ended at its prompt: %w", endedBy{interrupted{sig}})
		}
		stopPrefill()
		if line.err != nil {
			fmt.Fprintln(c.out)
			if line.err == io.EOF {
				return nil
			}
			return fmt.Errorf("chat: reading the input: %w", line.err)
		}
		text := strings.TrimSpace(line.text)
		if text == "" {
			continue
		}
		if err := c.answer(ctx, text, line.cut); err != nil {
			return err
		}
		// A second Ctrl-C during the reply was meant for it too, not
		// for the prompt that follows.
		select {
		case <-c.interrupts:
		default:
		}
		stopPrefill = prefillWhileIdle(ctx, c.gen, c.history.Messages())
	}
}

// answer adds the user's text to the history, cut to what it holds (said
// in the chat), and streams the reply with its figures.
func (c *chat) answer(ctx context.Context, text string, cut bool) error {
	kept := c.history.AddUser(text)
	if cut || kept != text {
		fmt.Fprintf(c.out, "[your message was cut to its first %d characters: one turn holds at most half the history (stages.history_chars, stages.history_tokens)]\n",
			utf8.RuneCountInString(kept))
	}
	reply, rounds, stats, err := c.a.reply(ctx, c.gen, c.tools, c.history.Messages(), c.out, c.interrupts)
	interrupted := errors.Is(err, context.Canceled)
	if err != nil && !interrupted {
		return err
	}
	c.history.AddToolRounds(rounds)
	c.history.AddAssistant(reply, interrupted)
	note := ""
	if interrupted {
		note = ", stopped"
	}
	fmt.Fprintf(c.out, "\n[%d prompt + %d generated tokens, prefill %v, decode %v%s]\n",
		stats.PromptTokens, stats.GeneratedTokens, stats.Prefill.Round(time.Millisecond), stats.Decode.Round(time.Millisecond), note)
	if ctx.Err() != nil {
		return fmt.Errorf("chat: the reply was stopped: %w", context.Cause(ctx))
	}
	return nil
}

// endedAtPrompt is the chat's end at its prompt as ctx ended: by a signal
// (endedBy), or as the context says.
func endedAtPrompt(ctx context.Context) error {
	var sig interrupted
	if errors.As(context.Cause(ctx), &sig) {
		return fmt.Errorf("chat ended at its prompt: %w", endedBy{sig})
	}
	return ctx.Err()
}

// maxLine bounds what is kept of one typed line: far more than any
// history holds of a turn (History.AddUser cuts it to that), and a bound on
// memory whatever comes down a pipe. The rest of a longer line is read and
// dropped, so the next line is the next line.
const maxLine = 1 << 20

// typedLine is one line of the input, without its newline, or the end of
// the input (err, io.EOF when it simply ended).
type typedLine struct {
	text string
	cut  bool // longer than maxLine
	err  error
}

// readLines reads r a line at a time, of any length, into lines, until r
// ends or stop is called. It reads in a goroutine of its own so that the
// prompt can wait on the input and the signals at once; a read blocked on
// a terminal when the chat ends is left to the process's exit.
func readLines(r io.Reader) (lines <-chan typedLine, stop func()) {
	ch, done := make(chan typedLine), make(chan struct{})
	go func() {
		in := bufio.NewReader(r)
		for {
			text, cut, err := readLine(in, maxLine)
			if text != "" || err == nil {
				select {
				case ch <- typedLine{text: text, cut: cut}:
				case <-done:
					return
				}
			}
			if err != nil {
				select {
				case ch <- typedLine{err: err}:
				case <-done:
				}
				return
			}
		}
	}()
	return ch, func() { close(done) }
}

// readLine reads up to the next newline, keeping at most max bytes of it,
// cut back to a whole character.
func readLine(in *bufio.Reader, max int) (text string, cut bool, err error) {
	var kept []byte
	for {
		chunk, err := in.ReadSlice('\n')
		if room := max - len(kept); len(chunk) > room {
			chunk, cut = chunk[:room], true
		}
		kept = append(kept, chunk...)
		if err != bufio.ErrBufferFull {
			if cut {
				kept = wholeRunes(kept)
			}
			return strings.TrimSuffix(string(kept), "\n"), cut, err
		}
	}
}

// wholeRunes is b without a character cut short at its end.
func wholeRunes(b []byte) []byte {
	for i := len(b) - 1; i >= 0 && i >= len(b)-utf8.UTFMax; i-- {
		if utf8.RuneStart(b[i]) {
			if !utf8.FullRune(b[i:]) {
				return b[:i]
			}
			break
		}
	}
	return b
}

// prefillWhileIdle prefills, while the user types, the start of the
// prompt the next line will have (pipeline.Prefiller); stop cancels it
// and waits for it.
func prefillWhileIdle(ctx context.Context, gen pipeline.Generator, conv []llm.Message) (stop func()) {
	pf, ok := gen.(pipeline.Prefiller)
	if !ok {
		return func() {}
	}
	ctx, cancel := context.WithCancel(ctx)
	done := make(chan struct{})
	go func() {
		defer close(done)
		_, _ = pf.Prefill(ctx, conv) // the next reply prefills what this did not
	}()
	return func() {
		cancel()
		<-done
	}
}

// reply streams one answer to out until it ends or an interrupt arrives.
func (a *app) reply(ctx context.Context, gen pipeline.Generator, tools pipeline.Toolbox, conv []llm.Message, out io.Writer, interrupts <-chan os.Signal) (string, []llm.Message, llm.Stats, error) {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	done := make(chan struct{})
	defer close(done)
	go func() {
		select {
		case <-interrupts:
			cancel()
		case <-done:
		}
	}()
	var said strings.Builder
	say := func(piece string) error {
		said.WriteString(piece)
		_, err := io.WriteString(out, piece)
		return err
	}
	if tools == nil {
		stats, err := gen.Generate(ctx, conv, say)
		return said.String(), nil, stats, err
	}
	// The rounds' words are in the rounds; the reply is the answer's.
	var rounds []llm.Message
	loop := llm.ToolLoop{
		Generate: gen.Generate,
		Say:      say,
		Rounds:   a.cfg.Stages.Tools.Policy().Rounds,
		Run: func(ctx context.Context, calls []llm.ToolCall) ([]llm.Message, bool, error) {
			return runTools(ctx, tools, calls, out)
		},
		Ran: func(round []llm.Message) {
			rounds = append(rounds, round...)
			said.Reset()
		},
	}
	end, stats, err := loop.Converse(ctx, conv)
	if err == nil && end != llm.Answered {
		if end == llm.TooManyRounds {
			fmt.Fprintf(out, "[the model called tools again after %d rounds; stopped]\n", loop.Rounds)
		}
		err = say(reply.Apology(conv))
	}
	return said.String(), rounds, stats, err
}

// runTools runs a round's calls, each shown on a line of its own as it
// is given to the model (the voice reply's tool events).
func runTools(ctx context.Context, tools pipeline.Toolbox, calls []llm.ToolCall, out io.Writer) (results []llm.Message, failed bool, err error) {
	for _, call := range calls {
		text, err := "", call.Err
		if err == nil {
			text, err = tools.Call(ctx, call.Name, call.Arguments)
		}
		if ctx.Err() != nil {
			return results, true, ctx.Err()
		}
		if err != nil {
			failed = true
			fmt.Fprintf(out, "\n[tool %s %s failed: %v]\n", call.Name, call.Arguments, err)
			text = reply.ErrorResult(err)
		} else {
			fmt.Fprintf(out, "\n[tool %s %s → %s]\n", call.Name, call.Arguments, text)
		}
		results = append(results, llm.Message{Role: llm.Tool, Content: text})
	}
	return results, failed, nil
}

// syncWriter is a writer for the chat's replies and its timers, which go
// off whenever they do.
type syncWriter struct {
	mu sync.Mutex
	w  io.Writer
}

func (s *syncWriter) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.w.Write(p)
}
