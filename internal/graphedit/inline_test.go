package graphedit

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"
	"google.golang.org/protobuf/encoding/protowire"
)

// Inline reports a data file shorter than the graph says, or a location
// outside the model's directory, rather than reading garbage.
func TestInlineBadExternalData(t *testing.T) {
	dir := t.TempDir()
	require.NoError(t, os.WriteFile(filepath.Join(dir, "weights.data"), make([]byte, 4), 0o644))
	_, err := Inline(graphWith(withRef(nil, "weights.data", 0, 8)), dir)
	require.ErrorContains(t, err, "truncated")

	_, err = Inline(graphWith(withRef(nil, "weights.data", 0, 4)), filepath.Join(dir, "missing"))
	require.ErrorContains(t, err, "weights.data")

	_, err = Inline(graphWith(withRef(nil, "../secret.data", 0, 4)), dir)
	require.ErrorContains(t, err, "outside the model's directory")
}

// graphWith is a model whose graph has the one initializer t.
func graphWith(t []byte) []byte {
	g := protowire.AppendBytes(protowire.AppendTag(nil, graphInit, protowire.BytesType), t)
	return protowire.AppendBytes(protowire.AppendTag(nil, modelGraph, protowire.BytesType), g)
}
