//go:build !unix

package onnx

import (
	"errors"
	"os"
)

func mapFile(path string) ([]byte, func(), error) {
	data, err := os.ReadFile(path)
	if err == nil && len(data) == 0 {
		err = errors.New("the file is empty; the file is corrupt or not a model")
	}
	return data, func() {}, err
}
