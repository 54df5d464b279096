package onnx

import (
	"errors"
	"fmt"
	"os"
)

// checkModelFile refuses what cannot be a model file before it is opened:
// opening a FIFO blocks until a writer comes, and mapping a directory or a
// device fails with errors ("no such device") that say nothing about the
// mistake. It returns the file's size.
func checkModelFile(path string) (int64, error) {
	info, err := os.Stat(path)
	if err != nil {
		return 0, err
	}
	switch {
	case info.IsDir():
		return 0, errors.New("is a directory; give the model file (.onnx) itself")
	case !info.Mode().IsRegular():
		return 0, fmt.Errorf("is not a regular file (%v); give the model file (.onnx) itself", info.Mode().Type())
	case info.Size() == 0:
		return 0, errors.New("the file is empty; the file is corrupt or not a model")
	}
	return info.Size(), nil
}
