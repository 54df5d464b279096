package onnx

import "github.com/voiceassistant/voice/internal/filemap"

// mapFile maps the model file at path read-only (filemap): walking a
// model's fields reads little of a large file.
func mapFile(path string) ([]byte, func(), error) {
	if _, err := checkModelFile(path); err != nil {
		return nil, nil, err
	}
	return filemap.Map(path)
}
