package app

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"time"

	"github.com/voiceassistant/voice/assets"
	"github.com/voiceassistant/voice/audio"
	"github.com/voiceassistant/voice/pipeline"
	"github.com/voiceassistant/voice/wiring"
)

// Source is where a session's audio comes from and goes to: the sound card
// (Live) or a recording (Replay).
type Source interface {
	// Run makes the session clock, builds the stages with it, puts the
	// capture chain in place and runs the pipeline until ctx ends or the
	// source does; it releases the stages before it returns.
	Run(ctx context.Context, s Session) error
}

// Session is what a Source needs from the controller for one run.
type Session struct {
	Stages wiring.Stages
	// Capture makes the capture chain around the source's front-end (nil
	// for none): the microphone switch, then the level meter.
	Capture func(inner audio.FrontEnd) audio.FrontEnd
	// OnEvent gets every pipeline event, in order.
	OnEvent func(pipeline.Event)
	// Warn shows a notice that does not stop the session.
	Warn func(string)
	// StopKey gets the user's presses of the stop key, for
	// pipeline.Config.Interrupt (whose clock the Source knows: on a
	// virtual clock each press must be sent with a hold on it).
	StopKey <-chan struct{}
	// Commands gets the user's presses of the talk (or wake) button, for
	// pipeline.Config.Commands, sent as StopKey's are.
	Commands <-chan pipeline.Command
}

// Controller runs sessions and downloads off the UI thread and reports to
// the Model through update, which must run its function where the model
// lives (the UI thread: fyne.Do). One session or download runs at a time;
// a new one starts once the previous one has wound down, so the UI never
// waits for the pipeline.
type Controller struct {
	update func(func(*Model))
	// Gate is the microphone switch (mute).
	Gate audio.Gate
	// Puller downloads missing models (Progress is set by the controller).
	Puller assets.Puller

	// stopKey holds one press of the stop key until the session takes
	// it.
	stopKey chan struct{}
	// commands hold the talk button's presses until the session takes
	// them: room for a few, so a release is not lost behind its press.
	commands chan pipeline.Command

	mu     sync.Mutex
	cancel context.CancelFunc // of the running job, nil when none
	done   chan struct{}      // closed when the last job started has ended
}

// NewController returns a controller reporting through update.
func NewController(update func(func(*Model))) *Controller {
	return &Controller{update: update, stopKey: make(chan struct{}, 1), commands: make(chan pipeline.Command, 8)}
}

// Command sends the running session a command of the host's (the talk
// button's start and stop, the wake button); with no session it does
// nothing, and it never waits: the UI thread sends it.
func (c *Controller) Command(cmd pipeline.Command) {
	if !c.Running() {
		return
	}
	select {
	case c.commands <- cmd:
	default: // the session is not taking them; it ends or is stuck
	}
}

// StopReply stops the reply the running session is speaking (the Esc
// key); with no reply under way it does nothing.
func (c *Controller) StopReply() {
	if !c.Running() {
		return
	}
	select {
	case c.stopKey <- struct{}{}:
	default: // a press is already on its way
	}
}

// Running is whether a session or download is under way.
func (c *Controller) Running() bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.cancel != nil
}

// Start begins a session on src with the given stages unless a session or
// download is running.
func (c *Controller) Start(src Source, s wiring.Stages) {
	c.launch(func(ctx context.Context) func(*Model) { return c.session(ctx, src, s) })
}

// Download fetches models into the cache with progress and looks at the
// stages' models again; then, if start is set, it starts a session as
// Start does. A failed download says why in the models panel.
func (c *Controller) Download(src Source, s wiring.Stages, models []assets.Model, start bool) {
	// Read here, on the UI thread, which sets it (the mirror may change
	// in the settings while a session runs).
	puller := c.Puller
	c.launch(func(ctx context.Context) func(*Model) {
		err := c.pull(ctx, puller, models)
		// Decided now: the update runs later, when the job has ended and
		// its context is done either way.
		stopped := ctx.Err() != nil
		rows, rowsErr := ModelRows(s)
		done := func(m *Model) {
			m.Download, m.Models = nil, rows
			switch {
			case stopped:
				// Stopped by the user: the offer stands, no error.
			case err != nil:
				m.DownloadErr = downloadFailure(err, puller.Mirror)
			case rowsErr != nil:
				m.Err = shortError(rowsErr)
			}
		}
		if err != nil || stopped || !start {
			return done
		}
		c.update(done)
		return c.session(ctx, src, s)
	})
}

// Stop asks the running job to end and returns at once; Wait waits.
func (c *Controller) Stop() {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.cancel != nil {
		c.cancel()
		c.cancel = nil
	}
}

// Wait returns when every job started so far has ended.
func (c *Controller) Wait() {
	c.mu.Lock()
	done := c.done
	c.mu.Unlock()
	if done != nil {
		<-done
	}
}

// launch runs job after the previous one has ended, unless one is running.
// The job returns its last model update, which is applied once the
// controller no longer counts the job as running, so a view refreshed by
// it offers to start again.
func (c *Controller) launch(job func(context.Context) func(*Model)) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.cancel != nil {
		return
	}
	ctx, cancel := context.WithCancel(context.Background())
	prev, done := c.done, make(chan struct{})
	c.cancel, c.done = cancel, done
	go func() {
		defer close(done)
		defer cancel()
		if prev != nil {
			<-prev
		}
		var final func(*Model)
		if ctx.Err() == nil {
			final = job(ctx)
		}
		c.mu.Lock()
		if c.done == done {
			c.cancel = nil
		}
		c.mu.Unlock()
		if final != nil {
			c.update(final)
		}
	}()
}

// session runs one conversation and returns the update that reports how
// it ended.
func (c *Controller) session(ctx context.Context, src Source, s wiring.Stages) func(*Model) {
	c.update(func(m *Model) { m.Started() })
	err := c.run(ctx, src, s)
	if !unavailable(err) {
		return func(m *Model) { m.Stopped(err) }
	}
	// What is missing goes to the models panel, which offers it.
	rows, rowsErr := ModelRows(s)
	return func(m *Model) {
		m.Stopped(err)
		m.Err, m.StartBlocked = cannotStart(err, rows), true
		if rowsErr == nil {
			m.Models = rows
		}
	}
}

func (c *Controller) run(ctx context.Context, src Source, s wiring.Stages) error {
	return src.Run(ctx, Session{
		Stages: s,
		Capture: func(inner audio.FrontEnd) audio.FrontEnd {
			// The device's front-end, then the microphone switch, then the
			// meter, which so shows what the assistant hears.
			return audio.Chain(inner, &c.Gate, &meter{onLevel: func(l float64) {
				c.update(func(m *Model) { m.Level = l })
			}})
		},
		OnEvent:  func(e pipeline.Event) { c.update(func(m *Model) { m.Apply(e) }) },
		Warn:     func(msg string) { c.update(func(m *Model) { m.Notice = msg }) },
		StopKey:  c.stopKey,
		Commands: c.commands,
	})
}

// pull downloads models one after the other, reporting overall progress.
func (c *Controller) pull(ctx context.Context, p assets.Puller, models []assets.Model) error {
	var total int64
	for _, mod := range models {
		for _, f := range mod.Files {
			total += f.Size
		}
	}
	done := map[string]int64{}
	var sum int64
	p.Progress = func(pr assets.Progress) {
		key := pr.Model + "/" + pr.File
		sum += pr.Done - done[key]
		done[key] = pr.Done
		d := DownloadProgress{Label: fmt.Sprintf("%s: %s of %s", key, assets.FormatSize(pr.Done), assets.FormatSize(pr.Total))}
		switch {
		case total > 0:
			d.Fraction = min(1, float64(sum)/float64(total))
		case pr.Total > 0:
			d.Fraction = float64(pr.Done) / float64(pr.Total)
		}
		c.update(func(m *Model) { m.Download, m.DownloadErr = &d, "" })
	}
	// A failing source is retried for a while: say so, so the panel does
	// not look stuck.
	p.Retrying = func(model, file string, attempt int, err error, wait time.Duration) {
		label := fmt.Sprintf("%s/%s: %s; trying again in %v", model, file, shortError(err), wait.Round(time.Second))
		c.update(func(m *Model) {
			if m.Download != nil {
				m.Download.Label = label
			}
		})
	}
	// Every model is tried: one that cannot be had does not keep the
	// others from the user. One whose sources cannot be connected to
	// stops the download: the network (or the mirror) is out of reach,
	// and the others' sources are no nearer.
	var failed []string
	var first error
	for _, mod := range models {
		if err := p.Pull(ctx, mod); err != nil {
			var unreachable *assets.UnreachableError
			if ctx.Err() != nil || errors.As(err, &unreachable) {
				return err
			}
			failed = append(failed, mod.Name)
			first = cmp.Or(first, err)
		}
	}
	if first != nil {
		return fmt.Errorf("could not download %s: %w", strings.Join(failed, ", "), first)
	}
	return nil
}
