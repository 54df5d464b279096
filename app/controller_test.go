package app

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.uber.org/goleak"

	"github.com/voiceassistant/voice/assets"
	"github.com/voiceassistant/voice/audio"
	"github.com/voiceassistant/voice/internal/clock"
	"github.com/voiceassistant/voice/internal/onnx"
	"github.com/voiceassistant/voice/internal/testenv"
	"github.com/voiceassistant/voice/llm/mnn"
	"github.com/voiceassistant/voice/pipeline"
	"github.com/voiceassistant/voice/wiring"
)

// syncModel is the UI thread of these tests: updates run under a lock.
// It also keeps what only passes through the model: the loudest level
// shown and every download fraction.
// syncModel is the UI thread's stand-in: as fyne.Do does, it runs updates
// later than they are sent, in order (here when the test looks).
type syncModel struct {
	mu        sync.Mutex
	pending   []func(*Model)
	m         Model
	maxLevel  float64
	fractions []float64
}

func (s *syncModel) update(f func(*Model)) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.pending = append(s.pending, f)
}

// applyLocked runs the updates sent so far.
func (s *syncModel) applyLocked() {
	for _, f := range s.pending {
		f(&s.m)
		s.maxLevel = max(s.maxLevel, s.m.Level)
		if s.m.Download != nil {
			s.fractions = append(s.fractions, s.m.Download.Fraction)
		}
	}
	s.pending = nil
}

func (s *syncModel) progressed() bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.applyLocked()
	return len(s.fractions) > 0
}

func (s *syncModel) get() Model {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.applyLocked()
	return s.m
}

// demoStages are the stage doubles over the demo recording, as in the
// end-to-end tests: energy VAD, scripted ASR and LLM, tone TTS.
func demoStages() wiring.Stages {
	s := wiring.DefaultStages()
	s.VAD, s.ASR, s.Turn, s.LLM, s.TTS = wiring.VADEnergy, wiring.ASRScripted, wiring.TurnNone, wiring.LLMScripted, wiring.TTSTone
	s.Script = "../test/testdata/demo.json"
	return s
}

func demoInput(t testing.TB) []float32 {
	t.Helper()
	in, err := audio.ReadWAVMono16k(context.Background(), "../test/testdata/demo.wav")
	require.NoError(t, err)
	return in
}

const demoTranscript = "You: what is the weather like today\n" +
	"Assistant: It is sunny and warm today, with a light [interrupted]\n" +
	"You: and tomorrow\n" +
	"Assistant: Tomorrow it will rain, so take an umbrella.\n"

func TestControllerReplay(t *testing.T) {
	defer goleak.VerifyNone(t)
	var sm syncModel
	c := NewController(sm.update)
	src := Replay{Input: demoInput(t)}
	c.Start(src, demoStages())
	c.Wait()
	m := sm.get()
	assert.Equal(t, demoTranscript, m.Transcript())
	assert.Equal(t, Idle, m.Status)
	assert.Empty(t, m.Err)
	require.Len(t, m.Turns, 2)
	assert.True(t, m.Turns[0].Interrupted)
	// Speculated: the first words were ready by the commit, so voice to
	// voice is the endpointing wait and a period of playback queueing.
	assert.Equal(t, []Stage{{"endpointing", 700}, {"ASR final", 0}, {"first token", 0}, {"first audio", 0}, {"playback", 10}}, m.LastTurn())
	assert.Equal(t, "Last turn: 710 ms = endpointing 700 + ASR final 0 + first token 0 + first audio 0 + playback 10 (speculated: its first words were ready by the end of the turn)", m.LastTurnText())
	assert.False(t, c.Running())
	assert.Greater(t, sm.maxLevel, 0.5, "the meter shows the speech")
	assert.Zero(t, m.Level, "and drops when the session ends")
}

func TestControllerMutedHearsNothing(t *testing.T) {
	defer goleak.VerifyNone(t)
	var sm syncModel
	c := NewController(sm.update)
	src := Replay{Input: demoInput(t)}
	c.Gate.SetMuted(true)
	c.Start(src, demoStages())
	c.Wait()
	m := sm.get()
	// The scripted recognizer goes by time, so only the VAD can tell: with
	// the microphone muted it hears no speech and no turn starts.
	assert.Empty(t, m.Transcript())
	assert.Zero(t, sm.maxLevel)
}

// signalSource tells when a session's pipeline has emitted its first
// event, that is, when it is really running.
type signalSource struct {
	Source
	running chan struct{}
}

func (s signalSource) Run(ctx context.Context, sess Session) error {
	onEvent := sess.OnEvent
	var once sync.Once
	sess.OnEvent = func(e pipeline.Event) {
		once.Do(func() { s.running <- struct{}{} })
		onEvent(e)
	}
	return s.Source.Run(ctx, sess)
}

func TestControllerStartStopNoLeak(t *testing.T) {
	defer goleak.VerifyNone(t)
	var sm syncModel
	c := NewController(sm.update)
	src := signalSource{Replay{Input: demoInput(t), Pace: 1}, make(chan struct{}, 1)}
	for i := range 100 {
		c.Start(src, demoStages())
		if i%10 != 9 {
			// Most of the time stop a running pipeline; otherwise stop
			// at once, before the session may have begun.
			select {
			case <-src.running:
			case <-time.After(30 * time.Second):
				require.FailNow(t, "session did not start", "session %d", i)
			}
		}
		c.Stop()
		c.Wait()
		select {
		case <-src.running: // a session stopped at once may still have begun
		default:
		}
	}
	assert.False(t, c.Running())
	assert.Equal(t, Idle, sm.get().Status)
}

func TestControllerStartWhileRunningIsIgnored(t *testing.T) {
	defer goleak.VerifyNone(t)
	var sm syncModel
	c := NewController(sm.update)
	src := Replay{Input: demoInput(t), Pace: 1}
	c.Start(src, demoStages())
	c.Start(src, demoStages())
	assert.True(t, c.Running())
	c.Stop()
	c.Wait()
	assert.False(t, c.Running())
}

func TestControllerMissingModels(t *testing.T) {
	defer goleak.VerifyNone(t)
	t.Setenv(assets.EnvCache, t.TempDir())
	s := demoStages()
	s.TTS = wiring.TTSMoss
	s.ModelDir = t.TempDir()
	var sm syncModel
	c := NewController(sm.update)
	src := Replay{Input: demoInput(t)}
	c.Start(src, s)
	c.Wait()
	m := sm.get()
	assert.Equal(t, "Can't start: a model is missing (see Models).", m.Err)
	assert.True(t, m.StartBlocked)
	miss := missingModels(m.Models)
	assert.Equal(t, []string{"MOSS-TTS-Nano-100M-ONNX", "MOSS-Audio-Tokenizer-Nano-ONNX"}, miss.Models)
	assert.Positive(t, miss.Bytes)
	assert.Equal(t, "Download MOSS-TTS-Nano (683.9 MiB)", miss.downloadLabel(false), "one model, as the line says")
	assert.Equal(t, Idle, m.Status)
}

func TestControllerDownloadThenStart(t *testing.T) {
	defer goleak.VerifyNone(t)
	data := make([]byte, 300_000)
	for i := range data {
		data[i] = byte(i * 7)
	}
	sum := sha256.Sum256(data)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		http.ServeContent(w, r, "model.bin", time.Time{}, bytes.NewReader(data))
	}))
	defer srv.Close()
	mod := assets.Model{Name: "test-model", Files: []assets.File{{
		Path: "model.bin", Size: int64(len(data)), SHA256: hex.EncodeToString(sum[:]), Sources: []string{srv.URL + "/model.bin"},
	}}}

	var sm syncModel
	c := NewController(sm.update)
	src := Replay{Input: demoInput(t)}
	c.Puller = assets.Puller{Dir: t.TempDir()}
	c.Download(src, demoStages(), []assets.Model{mod}, true)
	c.Wait()
	got, err := os.ReadFile(filepath.Join(c.Puller.Dir, "test-model", "model.bin"))
	require.NoError(t, err)
	assert.Equal(t, data, got)
	m := sm.get()
	require.NotEmpty(t, sm.fractions)
	assert.Equal(t, 1.0, sm.fractions[len(sm.fractions)-1])
	assert.IsNonDecreasing(t, sm.fractions)
	assert.Nil(t, m.Download)
	assert.Equal(t, demoTranscript, m.Transcript(), "the session starts once the models are in")
}

func TestControllerDownloadFails(t *testing.T) {
	defer goleak.VerifyNone(t)
	srv := httptest.NewServer(http.NotFoundHandler())
	defer srv.Close()
	mod := assets.Model{Name: "gone", Files: []assets.File{{Path: "x.onnx", Sources: []string{srv.URL + "/x.onnx"}}}}
	var sm syncModel
	c := NewController(sm.update)
	src := Replay{Input: demoInput(t)}
	c.Puller = assets.Puller{Dir: t.TempDir(), Retries: -1}
	c.Download(src, demoStages(), []assets.Model{mod}, true)
	c.Wait()
	m := sm.get()
	assert.Contains(t, m.DownloadErr, "could not download gone", "the panel says why")
	assert.NotContains(t, m.DownloadErr, "\n", "in one line")
	assert.Nil(t, m.Download)
	assert.Empty(t, m.Transcript(), "no session without the models")
}

func TestControllerDownloadStopped(t *testing.T) {
	defer goleak.VerifyNone(t)
	release := make(chan struct{})
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Length", "1000")
		w.WriteHeader(http.StatusOK)
		w.Write(make([]byte, 10))
		w.(http.Flusher).Flush()
		select {
		case <-release:
		case <-r.Context().Done():
		}
	}))
	defer srv.Close()
	defer close(release)
	mod := assets.Model{Name: "slow", Files: []assets.File{{Path: "x.onnx", Size: 1000, Sources: []string{srv.URL + "/x.onnx"}}}}
	var sm syncModel
	c := NewController(sm.update)
	c.Puller = assets.Puller{Dir: t.TempDir(), Retries: -1}
	c.Download(Replay{Input: demoInput(t)}, demoStages(), []assets.Model{mod}, true)
	require.Eventually(t, sm.progressed, 10*time.Second, time.Millisecond, "the download got going")
	c.Stop()
	c.Wait()
	m := sm.get()
	assert.Nil(t, m.Download)
	assert.Empty(t, m.Err, "stopping is no error")
	assert.Empty(t, m.DownloadErr, "stopping is no error")
	assert.Empty(t, m.Transcript())
}

// The models panel offers only the stages that lack their model: a
// present Silero model is not offered, a missing TTS set is, and a test
// double needs none.
func TestModelRowsOfferOnlyMissing(t *testing.T) {
	testenv.Model(t, "silero_vad_v5.onnx")
	t.Setenv(assets.EnvCache, t.TempDir())
	s := demoStages()
	s.VAD, s.TTS = wiring.VADSilero, wiring.TTSMoss
	rows, err := ModelRows(s)
	require.NoError(t, err)
	assert.Equal(t, []string{
		"Model runtime (ONNX Runtime): installed",
		"Speech detection (Silero VAD v5): installed",
		"Speech recognition (X-ASR): not used, stand-in: scripted",
		"Turn detection (Smart Turn v3.2): not used, off",
		"Language model (MNN-Pocket-0.3B): not used, stand-in: scripted",
		"Speech synthesis (MOSS-TTS-Nano): missing, 683.9 MiB",
	}, rowLines(rows))
	miss := missingModels(rows)
	assert.Equal(t, []string{"MOSS-TTS-Nano"}, miss.Rows)
	assert.Equal(t, []string{"MOSS-TTS-Nano-100M-ONNX", "MOSS-Audio-Tokenizer-Nano-ONNX"}, miss.Models)
}

// A model whose files' sizes are known only once downloaded is offered at
// the manifest's estimate, marked as one, and so is the total.
func TestModelRowsEstimateTheSize(t *testing.T) {
	testenv.Model(t, "silero_vad_v5.onnx")
	t.Setenv(assets.EnvCache, t.TempDir())
	s := demoStages()
	s.VAD, s.ASR, s.TTS = wiring.VADSilero, wiring.ASRXASR, wiring.TTSMoss
	rows, err := ModelRows(s)
	require.NoError(t, err)
	assert.Contains(t, rowLines(rows), "Speech recognition (X-ASR): missing, ~559 MiB")
	// Two rows, three downloads: the button and the line agree on two.
	assert.Equal(t, "Download the 2 missing models (~1.2 GiB)", missingModels(rows).downloadLabel(false))
	assert.Equal(t, "Can't start: 2 models are missing (see Models).", cannotStart(wiring.ErrUnavailable, rows))
}

// The LLM's model is offered too, in a build with MNN; without the engine
// the panel says so instead, since a model would not help.
func TestModelRowsOfferTheLLM(t *testing.T) {
	t.Setenv(assets.EnvCache, t.TempDir())
	s := demoStages()
	s.LLM = wiring.LLMMNN
	rows, err := ModelRows(s)
	require.NoError(t, err)
	names := missingModels(rows).Models
	_, closeStages, err := wiring.Build(s, clock.NewVirtual())
	require.NoError(t, closeStages())
	require.ErrorIs(t, err, wiring.ErrUnavailable)
	if mnn.Built {
		assert.Equal(t, []string{"mnn-pocket-0.3b-int4"}, names)
		assert.Equal(t, "Can't start: a model is missing (see Models).", cannotStart(err, rows))
	} else {
		assert.Empty(t, names)
		assert.Contains(t, rowLines(rows), "Language model (MNN-Pocket-0.3B): not in this build")
		assert.Equal(t, "Can't start: LLM: this build has no MNN engine (scripts/setup builds it in)", cannotStart(err, rows))
	}
}

func rowLines(rows []ModelRow) []string {
	var out []string
	for _, r := range rows {
		out = append(out, r.Line())
	}
	return out
}

// Without the ONNX Runtime library the panel offers this platform's
// library (and no other platform's).
func TestModelRowsOfferTheLibrary(t *testing.T) {
	t.Setenv(onnx.EnvLibrary, filepath.Join(t.TempDir(), "nowhere.so"))
	s := demoStages()
	s.VAD = wiring.VADSilero
	rows, err := ModelRows(s)
	require.NoError(t, err)
	miss := missingModels(rows)
	assert.Equal(t, onnx.RuntimeModel(), miss.Models[0])
	assert.Positive(t, miss.Bytes)
	assert.Equal(t, "Model runtime (ONNX Runtime): missing, "+assets.FormatSize(rows[0].Bytes), rows[0].Line())
}

// In push mode a turn is open only while the talk button is down: speech
// before the press is not answered, speech between press and release is,
// in English and in Chinese. The presses land at their audio times.
func TestControllerPushToTalk(t *testing.T) {
	for _, tc := range []struct {
		name, script string
		presses      []timedOp
		want         string
	}{
		{"en: the second question", "../test/testdata/demo.json",
			[]timedOp{{4 * time.Second, pipeline.OpTalkStart}, {7500 * time.Millisecond, pipeline.OpTalkStop}},
			"You: and tomorrow\nAssistant: It is sunny and warm today, with a light breeze in the afternoon.\n"},
		{"en: never pressed", "../test/testdata/demo.json", nil, ""},
		{"zh: the first question", "testdata/demo-zh.json",
			[]timedOp{{300 * time.Millisecond, pipeline.OpTalkStart}, {3 * time.Second, pipeline.OpTalkStop}},
			"You: 今天天气怎么样\nAssistant: 今天晴天，很暖和，下午有微风。\n"},
		{"zh: the second question", "testdata/demo-zh.json",
			[]timedOp{{4 * time.Second, pipeline.OpTalkStart}, {7500 * time.Millisecond, pipeline.OpTalkStop}},
			"You: 明天呢\nAssistant: 今天晴天，很暖和，下午有微风。\n"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			defer goleak.VerifyNone(t)
			var sm syncModel
			c := NewController(sm.update)
			s := demoStages()
			s.Script, s.Activation = tc.script, pipeline.ActivatePush
			c.Start(pressingSource{Replay{Input: demoInput(t)}, c, tc.presses}, s)
			c.Wait()
			m := sm.get()
			assert.Empty(t, m.Err)
			assert.Equal(t, tc.want, m.Transcript())
		})
	}
}

// timedOp is a press of the talk button at an audio time.
type timedOp struct {
	at time.Duration
	op pipeline.Op
}

// pressingSource presses the talk button through the controller at the
// presses' audio times: the capture chain waits, at the frame of each,
// until the session has acted on it, so it lands at that time.
type pressingSource struct {
	Source
	c       *Controller
	presses []timedOp
}

func (p pressingSource) Run(ctx context.Context, s Session) error {
	capture := s.Capture
	s.Capture = func(inner audio.FrontEnd) audio.FrontEnd {
		return audio.Chain(capture(inner), &presser{c: p.c, presses: p.presses})
	}
	return p.Source.Run(ctx, s)
}

type presser struct {
	c       *Controller
	presses []timedOp
	heard   time.Duration
}

func (p *presser) Far([]float32) error { return nil }

func (p *presser) Near(frame []float32) ([]float32, error) {
	for len(p.presses) > 0 && p.presses[0].at <= p.heard {
		done := make(chan error, 1)
		p.c.Command(pipeline.Command{Op: p.presses[0].op, Done: done})
		select {
		case err := <-done:
			if err != nil {
				return nil, err
			}
		case <-time.After(30 * time.Second):
			return nil, fmt.Errorf("%s at %v: the session did not take it", p.presses[0].op, p.presses[0].at)
		}
		p.presses = p.presses[1:]
	}
	p.heard += audio.Mono16k.Duration(int64(len(frame)))
	return frame, nil
}
