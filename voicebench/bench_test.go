package voicebench_test

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/voiceassistant/voice/audio"
	"github.com/voiceassistant/voice/voicebench"
	"github.com/voiceassistant/voice/voicebench/voicebenchtest"
	"github.com/voiceassistant/voice/wiring"
)

// BenchmarkHarnessPerSample is the harness's own cost per sample: reading
// a Parquet row with its audio, dispatching it to a worker, and writing
// the result line, with an LLM double that answers at once (text mode, so
// no pipeline runs).
func BenchmarkHarnessPerSample(b *testing.B) {
	data := b.TempDir()
	wav, err := voicebenchtest.WAV(make([]float32, audio.ProcessingRate), audio.Mono16k)
	require.NoError(b, err)
	rows := make([]voicebenchtest.QARow, b.N)
	for i := range rows {
		rows[i] = voicebenchtest.QARow{Audio: &voicebenchtest.Audio{Bytes: wav}, ID: fmt.Sprint(i), Prompt: "what is the capital of france", Reference: "paris"}
	}
	require.NoError(b, voicebenchtest.WriteParquet(filepath.Join(data, "sd-qa", "usa-00000-of-00001.parquet"), rows))
	script := filepath.Join(b.TempDir(), "script.json")
	raw, err := json.Marshal(map[string]any{"replies": []string{"Paris."}})
	require.NoError(b, err)
	require.NoError(b, os.WriteFile(script, raw, 0o644))
	stages := wiring.DefaultStages()
	stages.LLM, stages.Script = wiring.LLMScripted, script
	b.ResetTimer()
	sum, err := voicebench.Run(context.Background(), voicebench.Config{Data: data, Subset: "sd-qa", Out: b.TempDir(), Workers: 1,
		Modality: voicebench.ModalityText, Stages: stages})
	require.NoError(b, err)
	require.Equal(b, b.N, sum.Answered)
}
