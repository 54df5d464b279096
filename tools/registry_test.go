package tools_test

import (
	"context"
	"encoding/json"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/voiceassistant/voice/llm"
	"github.com/voiceassistant/voice/tools"
)

// named is a tool that only has a name.
type named string

func (n named) Spec() llm.ToolSpec { return llm.ToolSpec{Name: string(n), Description: "d"} }
func (named) Call(context.Context, json.RawMessage) (string, error) {
	return "", nil
}

// Changes racing each other (the host declaring while others go in) tell
// the listener in their order: what it was told last is what the
// registry holds.
func TestRegistryTellsTheChangesInOrder(t *testing.T) {
	for round := range 50 {
		var reg tools.Registry
		var mu sync.Mutex
		var last []llm.ToolSpec
		reg.OnChange(func(specs []llm.ToolSpec) {
			time.Sleep(time.Duration(len(specs)%3) * 100 * time.Microsecond) // a slow model's set_config
			mu.Lock()
			last = specs
			mu.Unlock()
		})
		var wg sync.WaitGroup
		for i := range 8 {
			wg.Go(func() { reg.Add(named(fmt.Sprintf("tool_%d", i))) })
		}
		wg.Wait()
		mu.Lock()
		require.Len(t, last, 8, "round %d", round)
		assert.Equal(t, reg.Specs(), last, "round %d", round)
		mu.Unlock()
	}
}

// A call to a tool the registry lacks is ErrUnknown, naming it.
func TestRegistryUnknownTool(t *testing.T) {
	var reg tools.Registry
	reg.Add(named("get_time"))
	_, err := reg.Call(context.Background(), "launch_rocket", nil)
	require.ErrorIs(t, err, tools.ErrUnknown)
	assert.Contains(t, err.Error(), `"launch_rocket"`)
}
