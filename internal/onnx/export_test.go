package onnx

import (
	"os"
	"path/filepath"
)

// SetMinPrepacked lowers the prepacked data a copy must hold, so that the
// tiny test models get one; it returns the setting to restore.
func SetMinPrepacked(n int64) (restore func()) {
	was := minPrepacked
	minPrepacked = n
	return func() { minPrepacked = was }
}

// KeepSavedLayout has copies keep the layout ONNX Runtime saved them in,
// their blobs where it wrote them; it returns the setting to restore.
func KeepSavedLayout() (restore func()) {
	layOut = func(string) (int64, error) { return minPrepacked, nil }
	return func() { layOut = relayout }
}

// PrepackedOffsets are where the copy in dir has its prepacked blobs.
func PrepackedOffsets(dir string) ([]int64, error) {
	model, err := os.ReadFile(filepath.Join(dir, mappedModel))
	if err != nil {
		return nil, err
	}
	var offsets []int64
	_, err = eachExternal(model, func(ref *externalRef) error {
		for _, r := range ref.regions() {
			if r.prepacked {
				offsets = append(offsets, r.offset)
			}
		}
		return nil
	})
	return offsets, err
}

// SetFreeBytes has copies see f's free space, for a full disk.
func SetFreeBytes(f func(string) (uint64, error)) (restore func()) {
	old := freeBytes
	freeBytes = f
	return func() { freeBytes = old }
}
