package voicebench

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/voiceassistant/voice/wiring"
)

// run.json called the stand-ins test doubles before they were so named:
// such a directory still says which stages were stand-ins, and a run goes
// on into it as the same set-up, rewriting it in today's names.
func TestRunInfoReadsTestDoubles(t *testing.T) {
	dir := t.TempDir()
	old, err := os.ReadFile(filepath.Join("testdata", "run-test-doubles.json"))
	require.NoError(t, err)
	require.NoError(t, os.WriteFile(filepath.Join(dir, RunInfoFile), old, 0o644))

	info, err := ReadRunInfo(dir)
	require.NoError(t, err)
	assert.Equal(t, []string{"llm"}, info.StandIns)
	assert.Equal(t, []StageInfo{{Stage: "llm", Backend: wiring.LLMScripted, Kind: KindStandIn}}, info.Stages)

	stages := wiring.DefaultStages()
	stages.LLM = wiring.LLMScripted
	require.NoError(t, recordRun(dir, "ifeval", newRunInfo(Config{Modality: ModalityText, Stages: stages})))
	now, err := os.ReadFile(filepath.Join(dir, RunInfoFile))
	require.NoError(t, err)
	assert.NotContains(t, string(now), "double")
	info, err = ReadRunInfo(dir)
	require.NoError(t, err)
	assert.Equal(t, []string{"llm"}, info.StandIns)
	assert.Equal(t, []string{"alpacaeval", "ifeval"}, info.Subsets)
}
