// Command voice-agent is the headless voice assistant: live on the
// microphone and speaker (run, live.go), over recorded audio (replay), one
// stage at a time (vad, turn, asr in stagecmds.go; chat; tts), measured
// (bench), its models (models), its settings (config) and, unless built
// with -tags novoicebench, the VoiceBench harness (voicebench).
package main

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"os/signal"
	"runtime/debug"
	"strings"
	"syscall"
	"time"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/voiceassistant/voice/assets"
	"github.com/voiceassistant/voice/audio/device"
	"github.com/voiceassistant/voice/internal/derived"
	_ "github.com/voiceassistant/voice/internal/gogc"
	_ "github.com/voiceassistant/voice/internal/malloc" // before anything allocates
	"github.com/voiceassistant/voice/wiring"
)

// stageFlags gives cmd the flags of the stages in groups, bound to the
// config: each command offers the knobs of what it runs.
func (a *app) stageFlags(cmd *cobra.Command, groups wiring.FlagGroup) *cobra.Command {
	a.cfg.Stages.AddFlags(cmd.Flags(), groups)
	return cmd
}

// optionalCommands are the commands a build may leave out (by build tag):
// the benchmark harness is not for the glasses.
var optionalCommands []func(*app) *cobra.Command

// newApp is the app with every setting at its default, before the config
// file and the flags.
func newApp() *app {
	return &app{cfg: Config{
		Stages:    wiring.DefaultStages(),
		Device:    device.DefaultConfig(),
		LogLevel:  "info",
		LogFormat: "text",
	}}
}

type app struct {
	configPath string
	// json is cfg.JSON once the config is loaded.
	json bool
	// modelsCache overrides where pulled models live.
	modelsCache string
	cfg         Config
	log         *slog.Logger
}

func main() {
	a := newApp()
	root := a.root()
	ctx, stop, end := interruptible(context.Background())
	derived.StopWaitingOn(ctx.Done())
	stopWatch := abandonDerivation(ctx, derivationGrace, func(code int) {
		fmt.Fprintln(os.Stderr, "voice-agent: interrupted while a model's derived weights were being made or loaded; nothing of them is kept unfinished: the next start makes them again")
		os.Exit(code)
	})
	// A reader of stdout that goes away (`replay --json | head -1`, a
	// companion process that exits) ends the run as SIGTERM would, with
	// what was played kept, instead of killing it mid-write: SIGPIPE is
	// ignored, and a write that finds the pipe closed ends the run.
	signal.Ignore(syscall.SIGPIPE)
	root.SetOut(closedPipeEnds(func() { end(syscall.SIGPIPE) }))
	err := root.ExecuteContext(ctx)
	stop()
	stopWatch()
	if err == nil {
		err = checkLeaks()
	}
	if err != nil {
		// Joined errors (several missing models) get a line each; the
		// detail behind them (where each model was looked for) only when
		// asked for.
		for _, line := range strings.Split(err.Error(), "\n") {
			fmt.Fprintf(os.Stderr, "voice-agent: %s\n", line)
		}
		if errors.Is(err, device.ErrOpen) {
			fmt.Fprintln(os.Stderr, "voice-agent: `voice-agent devices` lists what can be opened; --capture and --playback pick a device, --backend alsa|pulseaudio the backend")
		}
		if details := wiring.Details(err); len(details) > 0 {
			if a.cfg.LogLevel == "debug" {
				for _, d := range details {
					fmt.Fprintf(os.Stderr, "voice-agent: %s\n", d)
				}
			} else {
				fmt.Fprintln(os.Stderr, "voice-agent: --log-level debug says where each was looked for and how to get it by hand")
			}
		}
		// A live session ends on a signal and returns nil; a command with an
		// end of its own (a replay, a bench, a pull) returns the context's
		// error (or, its stdout closed, the write's), and what it printed is
		// not the whole answer: say so, and exit as a shell expects of a
		// program stopped by that signal.
		if ended, ok := errors.AsType[endedBy](err); ok {
			os.Exit(ended.exitCode())
		}
		var sig interrupted
		if errors.As(context.Cause(ctx), &sig) {
			fmt.Fprintf(os.Stderr, "voice-agent: interrupted (%v): the results above are incomplete\n", sig.Signal)
			os.Exit(sig.exitCode())
		}
		os.Exit(1)
	}
}

// interrupted is the cause of a context cancelled by a signal.
type interrupted struct{ os.Signal }

func (s interrupted) Error() string { return s.String() + " received" }

func (s interrupted) Is(target error) bool { return target == context.Canceled }

// endedBy is the error of a command that a signal ended where nothing it
// printed was left half done (chat at its prompt): the process exits as
// one that signal ended, without calling its results incomplete.
type endedBy struct{ interrupted }

// exitCode is 128 plus the signal's number, as a shell reports a process
// the signal ended.
func (s interrupted) exitCode() int {
	if n, ok := s.Signal.(syscall.Signal); ok {
		return 128 + int(n)
	}
	return 130
}

// derivationGrace is how long an interrupted process may go on making a
// model's derived weights before it is ended: a derivation that is about
// done finishes, one that is not (15 s for the full-size X-ASR) does not
// hold Ctrl-C.
const derivationGrace = time.Second

// abandonDerivation calls exit, with the signal's exit code, when a
// signal ends ctx and the process still holds a derived folder grace
// later (derived.Holding): it is in an engine's code that no context
// reaches. Nothing is lost by it: derived files are made under temporary
// names and sealed once whole. A process that holds none ends its own way.
// stop ends the watch (before the leak check at exit).
func abandonDerivation(ctx context.Context, grace time.Duration, exit func(code int)) (stop func()) {
	quit, done := make(chan struct{}), make(chan struct{})
	go func() {
		defer close(done)
		select {
		case <-ctx.Done():
		case <-quit:
			return
		}
		var sig interrupted
		if !errors.As(context.Cause(ctx), &sig) {
			return
		}
		select {
		case <-time.After(grace):
		case <-quit:
			return
		}
		if derived.Holding() {
			exit(sig.exitCode())
		}
	}()
	return func() {
		close(quit)
		<-done
	}
}

// interruptible is a context cancelled, with interrupted as its cause, by
// the first SIGINT, SIGTERM or SIGHUP (a closed terminal), or by end. Only
// the first signal is caught: a second Ctrl-C kills the process the
// default way, for a user who will not wait for a clean stop.
func interruptible(parent context.Context) (ctx context.Context, stop context.CancelFunc, end func(os.Signal)) {
	ctx, cancel := context.WithCancelCause(parent)
	ch := make(chan os.Signal, 1)
	signal.Notify(ch, os.Interrupt, syscall.SIGTERM, syscall.SIGHUP)
	go func() {
		select {
		case s := <-ch:
			signal.Stop(ch)
			cancel(interrupted{s})
		case <-ctx.Done():
		}
	}()
	return ctx, func() {
			signal.Stop(ch)
			cancel(nil)
		}, func(s os.Signal) {
			cancel(interrupted{s})
		}
}

// closedPipeEnds is stdout, which calls itself when a write finds the
// reader gone. It writes to os.Stdout as it is at each write: the LLM's
// binding moves the process's stdout to another descriptor (MNN prints to
// descriptor 1).
type closedPipeEnds func()

func (end closedPipeEnds) Write(p []byte) (int, error) {
	n, err := os.Stdout.Write(p)
	if errors.Is(err, syscall.EPIPE) {
		end()
	}
	return n, err
}

func (a *app) root() *cobra.Command {
	var version bool
	root := &cobra.Command{
		Use:           "voice-agent",
		Short:         "On-device streaming voice assistant",
		SilenceUsage:  true,
		SilenceErrors: true,
		Args:          unknownCommand,
		PersistentPreRunE: func(cmd *cobra.Command, _ []string) error {
			return a.setup(cmd)
		},
		RunE: func(cmd *cobra.Command, _ []string) error {
			if !version {
				return cmd.Help()
			}
			readBuildVersion(a.cfg.Stages.ONNXRuntime).print(cmd.OutOrStdout())
			return nil
		},
	}
	// No backquotes in a usage: pflag reads a quoted word as the name of
	// the flag's argument, and a bool flag takes none.
	root.Flags().BoolVar(&version, "version", false, "print the version, commit, build tags and engines, as the version command does")
	a.cfg.Stages.AddONNXRuntimeFlag(root.Flags())
	pf := root.PersistentFlags()
	pf.StringVar(&a.configPath, "config", "", "config file (YAML; default $XDG_CONFIG_HOME/voice-agent/config.yaml if present)")
	pf.StringVar(&a.cfg.LogLevel, "log-level", a.cfg.LogLevel, "debug, info, warn or error")
	pf.StringVar(&a.cfg.LogFormat, "log-format", a.cfg.LogFormat, "log format on stderr: text or json")
	pf.BoolVar(&a.cfg.JSON, "json", a.cfg.JSON, "print events as JSON lines on stdout")
	pf.StringVar(&a.modelsCache, "models-cache", "", "model cache directory (default $VOICE_MODELS, else $XDG_DATA_HOME/voice-agent/models)")
	root.AddCommand(a.versionCmd(), a.runCmd(), a.replayCmd(), a.configCmd(), a.devicesCmd(), a.vadCmd(), a.turnCmd(), a.asrCmd(), a.chatCmd(), a.benchCmd(), a.ttsCmd(), a.modelsCmd(), a.ctlCmd())
	for _, c := range optionalCommands {
		root.AddCommand(c(a))
	}
	root.SetFlagErrorFunc(func(c *cobra.Command, err error) error {
		if near := nearestFlag(c, err); near != "" {
			err = fmt.Errorf("%w\nDid you mean this? --%s", err, near)
		}
		return fmt.Errorf("%w\n`%s --help` lists its flags", err, c.CommandPath())
	})
	refuseUnknownCommands(root)
	sayHowToType(root)
	return root
}

// refuseUnknownCommands makes cmd and every command under it that has
// subcommands refuse a word that names none of them. Cobra checks that
// only at a root without Args; a group with no action of its own it
// answers with its help and success, so `models lst` looked as if it had
// worked.
func refuseUnknownCommands(cmd *cobra.Command) {
	if !cmd.HasSubCommands() {
		return
	}
	// Cobra's default, which SuggestionsFor does not apply on its own.
	cmd.SuggestionsMinimumDistance = 2
	if !cmd.Runnable() {
		cmd.Args = unknownCommand
		cmd.RunE = func(c *cobra.Command, _ []string) error { return c.Help() }
	}
	for _, c := range cmd.Commands() {
		refuseUnknownCommands(c)
	}
}

// unknownCommand is the Args of a command whose only arguments are its
// subcommands: a word left over was meant as one of them, and the near
// ones are named, as cobra names them for a root. On one line, unlike
// cobra's: main prefixes each line of an error.
func unknownCommand(c *cobra.Command, args []string) error {
	if len(args) == 0 {
		return nil
	}
	err := fmt.Errorf("unknown command %q for %q", args[0], c.CommandPath())
	if near := c.SuggestionsFor(args[0]); len(near) > 0 {
		return fmt.Errorf("%w\nDid you mean this? %s", err, strings.Join(near, ", "))
	}
	return err
}

// nearestFlag is the flag of c that the unknown --name of err was likely
// meant as, by the measure the config file's unknown keys get, else "".
// A single-letter shorthand is too short to guess from.
func nearestFlag(c *cobra.Command, err error) string {
	unknown, ok := errors.AsType[*pflag.NotExistError](err)
	if !ok || unknown.GetSpecifiedShortnames() != "" {
		return ""
	}
	var names []string
	c.Flags().VisitAll(func(f *pflag.Flag) {
		if !f.Hidden {
			names = append(names, f.Name)
		}
	})
	return nearest(unknown.GetSpecifiedName(), names)
}

// sayHowToType makes a command typed with the wrong arguments say how to
// type it, for cmd and every command under it.
func sayHowToType(cmd *cobra.Command) {
	if check := cmd.Args; check != nil {
		cmd.Args = func(c *cobra.Command, args []string) error {
			err := check(c, args)
			switch {
			case err == nil:
				return nil
			case c.HasSubCommands():
				return fmt.Errorf("%w\n`%s --help` lists the commands", err, c.CommandPath())
			}
			return fmt.Errorf("%w\nusage: %s", err, c.UseLine())
		}
	}
	for _, c := range cmd.Commands() {
		sayHowToType(c)
	}
}

// setup makes the logger, loads the config file and points the model
// cache.
func (a *app) setup(cmd *cobra.Command) error {
	path, err := a.loadConfig(cmd)
	if err != nil {
		return err
	}
	if err := a.cfg.validate(); err != nil {
		return err
	}
	if a.log, err = newLogger(os.Stderr, a.cfg.LogLevel, a.cfg.LogFormat); err != nil {
		return err
	}
	// The packages that log on their own (the memory estimate, a model
	// loaded without its optimized copy) log as the agent does.
	slog.SetDefault(a.log)
	if path != "" {
		a.log.Debug("config loaded", "path", path)
	}
	a.json = a.cfg.JSON
	// Under a memory budget the Go side is held to its share: past it the
	// collector runs harder rather than the heap growing into the
	// engines' room. GOMEMLIMIT in the environment wins.
	if budget := a.cfg.Stages.MemoryBudget; budget > 0 && os.Getenv("GOMEMLIMIT") == "" {
		debug.SetMemoryLimit(wiring.GoMemoryLimit(budget))
	}
	// The cache is found through the environment everywhere
	// (assets.CacheDir): the flag wins, then $VOICE_MODELS, then the file.
	if a.modelsCache != "" {
		a.cfg.ModelsCache = a.modelsCache
	}
	cache := a.modelsCache
	if cache == "" && os.Getenv(assets.EnvCache) == "" {
		cache = a.cfg.ModelsCache
	}
	if cache != "" {
		return os.Setenv(assets.EnvCache, cache)
	}
	return nil
}
