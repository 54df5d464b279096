//go:build !mnn

package mnn

import (
	"testing"

	"github.com/stretchr/testify/assert"
)

func TestWithoutMNNOpenSaysHowToGetIt(t *testing.T) {
	_, err := Open(Config{Dir: t.TempDir()})
	assert.ErrorIs(t, err, ErrNotBuilt)
	assert.Contains(t, err.Error(), "scripts/setup")
}
