package onnx_test

import (
	"bytes"
	"log/slog"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	ort "github.com/yalue/onnxruntime_go"

	"github.com/voiceassistant/voice/internal/derived"
	"github.com/voiceassistant/voice/internal/onnx"
	"github.com/voiceassistant/voice/internal/testenv"
)

// tinyModel is a float model whose MatMuls get an optimized copy (with
// onnx.SetMinPrepacked(1)).
var tinyModel = filepath.Join("..", "..", "tts", "moss", "testdata", "tiny-codec", "moss_audio_tokenizer_decode_step.onnx")

// declaredTensors are the inputs and outputs the model at path declares,
// as a caller names them to Open.
func declaredTensors(t *testing.T, path string) (ins, outs []onnx.Tensor) {
	t.Helper()
	declaredIns, declaredOuts, err := onnx.Declaration(path)
	require.NoError(t, err)
	tensors := func(infos []ort.InputOutputInfo) []onnx.Tensor {
		ts := make([]onnx.Tensor, len(infos))
		for i, info := range infos {
			ts[i] = onnx.Tensor{Name: info.Name, Type: info.DataType}
		}
		return ts
	}
	return tensors(declaredIns), tensors(declaredOuts)
}

// openTiny opens tinyModel with opts, its log in the buffer it returns.
func openTiny(t *testing.T, opts onnx.Options) (*onnx.Session, string, error) {
	t.Helper()
	ins, outs := declaredTensors(t, tinyModel)
	var log bytes.Buffer
	defer slog.SetDefault(slog.Default())
	slog.SetDefault(slog.New(slog.NewTextHandler(&log, nil)))
	s, err := onnx.Open(tinyModel, ins, outs, opts, "")
	if err == nil {
		t.Cleanup(func() { s.Destroy() })
	}
	return s, log.String(), err
}

// verdicts are the verdict files of the copies in the test's cache.
func verdicts(t *testing.T) map[string]string {
	t.Helper()
	files, err := filepath.Glob(filepath.Join(os.Getenv("XDG_CACHE_HOME"), "voice-agent", "derived", "onnxruntime", "*", "verdict"))
	require.NoError(t, err)
	out := map[string]string{}
	for _, f := range files {
		data, err := os.ReadFile(f)
		require.NoError(t, err)
		out[f] = string(data)
	}
	return out
}

// The copy is made in a child process, so what happens to the child
// happens to it alone: killed (the OOM killer), the model loads as it is,
// said in one line, and the next load tries again; crashed or stuck, the
// model loads as it is and the copy is refused, said once; an error the
// child reports is as one made here. Made in the test's own process, the
// kill and the abort would end the test binary.
func TestCopyInChild(t *testing.T) {
	testenv.ONNXRuntime(t)
	defer onnx.SetMinPrepacked(1)()
	for _, tc := range []struct {
		fault   string
		said    string
		verdict string // "" where none is kept, and the next load tries again
	}{
		{"kill", "was killed (out of memory?): the next start tries again", ""},
		{"abort", "ONNX Runtime crashed (SIGABRT: abort", "the optimized copy could not be made: ONNX Runtime crashed"},
		{"fail", "a test's error, as a full disk gives", ""},
		{"hang", "could not be made: in 500ms", "the optimized copy could not be made: in 500ms"},
	} {
		t.Run(tc.fault, func(t *testing.T) {
			t.Setenv("XDG_CACHE_HOME", t.TempDir())
			t.Setenv(onnx.EnvChildStarted, filepath.Join(t.TempDir(), "started"))
			if tc.fault == "hang" {
				defer onnx.SetCopyTimeout(500 * time.Millisecond)()
			}
			t.Setenv(onnx.EnvChildFault, tc.fault)
			s, log, err := openTiny(t, onnx.Options{})
			require.NoError(t, err)
			assert.Empty(t, s.Mapped, "a copy mapped")
			assert.Contains(t, log, tc.said)
			kept := verdicts(t)
			if tc.verdict == "" {
				assert.Empty(t, kept)
			} else {
				require.Len(t, kept, 1)
				for _, v := range kept {
					assert.Contains(t, v, tc.verdict)
				}
			}

			t.Setenv(onnx.EnvChildFault, "")
			s, log, err = openTiny(t, onnx.Options{})
			require.NoError(t, err)
			if tc.verdict == "" {
				assert.NotEmpty(t, s.Mapped, "not made at the next load: %s", log)
			} else {
				assert.Empty(t, s.Mapped, "made again after a refusal")
				assert.NotContains(t, log, "could not be made", "the refusal said again")
			}
		})
	}

	t.Run("cannot start", func(t *testing.T) {
		t.Setenv("XDG_CACHE_HOME", t.TempDir())
		defer onnx.MakeCopiesHere()()
		s, _, err := openTiny(t, onnx.Options{})
		require.NoError(t, err)
		assert.NotEmpty(t, s.Mapped, "made here where no child starts")
	})
}

// A stop (Ctrl-C) ends the load: nothing is loaded after it, nothing is
// kept, and the stop is what is said. (A stop while the child works ends
// it: internal/childjob's TestStopWins.)
func TestCopyInChildStops(t *testing.T) {
	testenv.ONNXRuntime(t)
	defer onnx.SetMinPrepacked(1)()
	t.Setenv("XDG_CACHE_HOME", t.TempDir())
	started := filepath.Join(t.TempDir(), "started")
	t.Setenv(onnx.EnvChildStarted, started)
	t.Setenv(onnx.EnvChildFault, "hang")
	stop := make(chan struct{})
	close(stop)
	derived.StopWaitingOn(stop)
	defer derived.StopWaitingOn(nil)
	_, _, err := openTiny(t, onnx.Options{})
	require.ErrorIs(t, err, onnx.ErrStopped)
	assert.Contains(t, err.Error(), tinyModel)
	assert.Empty(t, verdicts(t))
	assert.NoFileExists(t, started, "a child started after the stop")
}

// A stop while the load waits for another process that makes the same
// copy ends the load too: loaded as it is instead, fp32 X-ASR's encoder
// went onto the heap, 3 s past the signal.
func TestStoppedWaitEndsTheLoad(t *testing.T) {
	testenv.ONNXRuntime(t)
	defer onnx.SetMinPrepacked(1)()
	t.Setenv("XDG_CACHE_HOME", t.TempDir())
	_, _, err := openTiny(t, onnx.Options{})
	require.NoError(t, err)
	sources, err := onnx.ModelSources(tinyModel)
	require.NoError(t, err)
	_, release, err := derived.Acquire("onnxruntime", ort.GetVersion(), sources...)
	require.NoError(t, err, "the copy's folder, as another process making it holds it")
	defer release()
	stop := make(chan struct{})
	close(stop)
	derived.StopWaitingOn(stop)
	defer derived.StopWaitingOn(nil)
	s, log, err := openTiny(t, onnx.Options{})
	require.ErrorIs(t, err, derived.ErrStopped)
	assert.Nil(t, s)
	assert.NotContains(t, log, "loading the model as it is")
}

// A copy whose making would take the process over its memory budget is
// not made, and the load is refused, saying what the first start costs
// and the ways out.
func TestCopyOverBudget(t *testing.T) {
	testenv.ONNXRuntime(t)
	defer onnx.SetMinPrepacked(1)()
	t.Setenv("XDG_CACHE_HOME", t.TempDir())
	_, _, err := openTiny(t, onnx.Options{MemoryBudget: 1})
	require.Error(t, err)
	for _, want := range []string{tinyModel, "makes an optimized copy", "over the memory budget of 1 MiB", "--memory-budget 0", "VOICE_ORT_MAPPED_WEIGHTS=0"} {
		assert.Contains(t, err.Error(), want)
	}
	assert.Empty(t, verdicts(t))

	s, log, err := openTiny(t, onnx.Options{MemoryBudget: 1 << 20})
	require.NoError(t, err)
	assert.NotEmpty(t, s.Mapped)
	assert.Contains(t, log, "anonymous_mib_while_made=", "the first load's cost unsaid")
}

// A verdict damaged since it was written (emptied, zeroed, cut short,
// overwritten) is not taken for a refusal, which would keep the copy off
// for good: the copy is made again, said once.
func TestDamagedVerdictRemakesCopy(t *testing.T) {
	testenv.ONNXRuntime(t)
	defer onnx.SetMinPrepacked(1)()
	t.Setenv("XDG_CACHE_HOME", t.TempDir())
	first, _, err := openTiny(t, onnx.Options{})
	require.NoError(t, err)
	require.NotEmpty(t, first.Mapped)
	verdict := filepath.Join(filepath.Dir(first.Mapped), "verdict")
	for name, damage := range map[string]string{"empty": "", "zeroed": "\x00\x00\x00\x00\x00\x00\x00", "cut short": "map", "overwritten": "<html>"} {
		require.NoError(t, os.WriteFile(verdict, []byte(damage), 0o644))
		s, log, err := openTiny(t, onnx.Options{})
		require.NoError(t, err, name)
		assert.Equal(t, first.Mapped, s.Mapped, "%s: the copy is not mapped", name)
		assert.Contains(t, log, "the verdict on the optimized copy is damaged", name)
		kept, err := os.ReadFile(verdict)
		require.NoError(t, err)
		assert.Equal(t, "mapped\n", string(kept), name)

		_, log, err = openTiny(t, onnx.Options{})
		require.NoError(t, err, name)
		assert.NotContains(t, log, "damaged", "%s: said again", name)
	}
}
