//go:build !unix

package onnx

import "os"

func mapFile(path string) ([]byte, func(), error) {
	if _, err := checkModelFile(path); err != nil {
		return nil, nil, err
	}
	data, err := os.ReadFile(path)
	return data, func() {}, err
}
