//go:build leakcheck

package main

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestCheckLeaks(t *testing.T) {
	release := make(chan struct{})
	stopped := make(chan struct{})
	go func() {
		defer close(stopped)
		<-release
	}()
	t.Setenv(envLeakCheck, "")
	assert.NoError(t, checkLeaks(), "off unless asked for")
	t.Setenv(envLeakCheck, "1")
	err := checkLeaks()
	require.Error(t, err, "a goroutine still blocked")
	assert.Contains(t, err.Error(), "TestCheckLeaks")
	close(release)
	<-stopped
	assert.NoError(t, checkLeaks())
}
