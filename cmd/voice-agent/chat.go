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
	"time"

	"github.com/spf13/cobra"

	"github.com/voiceassistant/voice/audio"
	"github.com/voiceassistant/voice/internal/clock"
	"github.com/voiceassistant/voice/llm"
	"github.com/voiceassistant/voice/pipeline"
	"github.com/voiceassistant/voice/wiring"
)

// chatCmd is a text conversation with the language model: the same
// generator and history the voice pipeline uses, without audio.
func (a *app) chatCmd() *cobra.Command {
	return a.stageFlags(&cobra.Command{
		Use: "chat [--llm-model-dir DIR]",
		Example: `  voice-agent chat
  voice-agent chat --llm scripted --script test/testdata/demo.json`,
		Short: "Type to the assistant and watch its reply stream (Ctrl-C stops a reply)",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) (err error) {
			gen, closeGen, err := wiring.NewGenerator(a.cfg.Stages, clock.NewStream(audio.ProcessingRate))
			if err != nil {
				return err
			}
			defer func() { err = errors.Join(err, closeGen()) }()

			// Ctrl-C while a reply streams stops the reply, not the program;
			// at the prompt, end of input (Ctrl-D) ends the chat.
			signal.Reset(os.Interrupt)
			interrupts := make(chan os.Signal, 1)
			signal.Notify(interrupts, os.Interrupt)
			defer signal.Stop(interrupts)

			history := wiring.NewHistory(a.cfg.Stages, gen)
			out := cmd.OutOrStdout()
			in := bufio.NewScanner(cmd.InOrStdin())
			stopPrefill := prefillWhileIdle(cmd.Context(), gen, history.Messages())
			defer func() { stopPrefill() }()
			for {
				fmt.Fprint(out, "> ")
				scanned := in.Scan()
				stopPrefill()
				if !scanned {
					fmt.Fprintln(out)
					return in.Err()
				}
				text := strings.TrimSpace(in.Text())
				if text == "" {
					continue
				}
				history.AddUser(text)
				reply, stats, err := a.reply(cmd.Context(), gen, history.Messages(), out, interrupts)
				interrupted := errors.Is(err, context.Canceled)
				if err != nil && !interrupted {
					return err
				}
				history.AddAssistant(reply, interrupted)
				stopPrefill = prefillWhileIdle(cmd.Context(), gen, history.Messages())
				note := ""
				if interrupted {
					note = ", stopped"
				}
				fmt.Fprintf(out, "\n[%d prompt + %d generated tokens, prefill %v, decode %v%s]\n",
					stats.PromptTokens, stats.GeneratedTokens, stats.Prefill.Round(time.Millisecond), stats.Decode.Round(time.Millisecond), note)
			}
		},
	}, wiring.LLMFlags)
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
func (a *app) reply(ctx context.Context, gen pipeline.Generator, conv []llm.Message, out io.Writer, interrupts <-chan os.Signal) (string, llm.Stats, error) {
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
	var reply strings.Builder
	stats, err := gen.Generate(ctx, conv, func(piece string) error {
		reply.WriteString(piece)
		_, err := io.WriteString(out, piece)
		return err
	})
	return reply.String(), stats, err
}
