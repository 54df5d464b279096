package onnx

// SetMinPrepacked lowers the prepacked data a copy must hold, so that the
// tiny test models get one; it returns the setting to restore.
func SetMinPrepacked(n int64) (restore func()) {
	was := minPrepacked
	minPrepacked = n
	return func() { minPrepacked = was }
}
