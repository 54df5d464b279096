package testenv

import (
	"bytes"
	"compress/gzip"
	"encoding/binary"
	"io"
	"os"
	"testing"
)

// Gunzip reads a gzip-compressed test fixture.
func Gunzip(tb testing.TB, path string) []byte {
	tb.Helper()
	raw, err := os.ReadFile(path)
	if err != nil {
		tb.Fatal(err)
	}
	zr, err := gzip.NewReader(bytes.NewReader(raw))
	if err != nil {
		tb.Fatalf("%s: %v", path, err)
	}
	data, err := io.ReadAll(zr)
	if err != nil {
		tb.Fatalf("%s: %v", path, err)
	}
	return data
}

// Float32Gz reads a gzip-compressed fixture of little-endian float32s, the
// format the golden-value scripts in scripts/models write.
func Float32Gz(tb testing.TB, path string) []float32 {
	tb.Helper()
	data := Gunzip(tb, path)
	if len(data)%4 != 0 {
		tb.Fatalf("%s: %d bytes is not a whole number of float32s", path, len(data))
	}
	out := make([]float32, len(data)/4)
	if err := binary.Read(bytes.NewReader(data), binary.LittleEndian, out); err != nil {
		tb.Fatal(err)
	}
	return out
}
