package onnx

import (
	"os"
	"testing"

	"github.com/stretchr/testify/require"
)

// Any bytes give a declaration or an error, never a panic.
func FuzzDeclaration(f *testing.F) {
	model, err := os.ReadFile("../../turn/smartturn/testdata/smart_turn_tiny.onnx")
	require.NoError(f, err)
	f.Add(model)
	f.Add([]byte{0x3a, 0x02, 0x5a, 0x00})
	f.Fuzz(func(t *testing.T, data []byte) {
		_, _, _ = declaration(data)
	})
}
