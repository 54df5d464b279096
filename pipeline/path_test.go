package pipeline_test

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// Voice to voice in parts adds up (bug: the log said end_to_end_ms=214
// beside endpointing 204 + first token 120 + first audio 80, since a
// speculated reply's first token and audio come during the endpointing
// wait): the parts on the path sum to the total, speculated or not, and
// a speculated reply's first token is off the path.
func TestVoiceToVoicePathAddsUp(t *testing.T) {
	for _, speculate := range []bool{true, false} {
		o := twoTurns(speculate).run(t)
		require.Len(t, o.result.Metrics, 2)
		for _, m := range o.result.Metrics {
			require.NotNil(t, m.Path)
			sum := 0.0
			for _, part := range m.Path.Parts() {
				assert.GreaterOrEqual(t, part.MS, 0.0, part.Name)
				sum += part.MS
			}
			assert.InDelta(t, m.EndToEndMS, sum, 1e-6, "speculate=%v: %+v", speculate, *m.Path)
			assert.Equal(t, m.EndpointingMS, m.Path.Endpointing)
			if speculate {
				assert.Less(t, m.Path.FirstToken, m.FirstTokenMS, "the first token came during the endpointing wait")
				stages := m.EndpointingMS + m.ASRMS + m.FirstTokenMS + m.FirstAudioMS + m.PlaybackMS
				assert.Greater(t, stages, m.EndToEndMS, "the stages' own times overlap")
			} else {
				assert.Equal(t, m.FirstTokenMS, m.Path.FirstToken)
			}
		}
	}
}
