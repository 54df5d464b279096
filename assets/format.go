package assets

// A file the manifest gives no sha256 for is trusted as first downloaded:
// before its checksum is recorded, it must at least be a file of its
// kind, not an error page, a truncated body or two versions spliced.

import (
	"errors"
	"fmt"
	"os"
	"path"

	"google.golang.org/protobuf/encoding/protowire"

	"github.com/voiceassistant/voice/internal/onnxproto"
)

// modelIRVersion is ModelProto.ir_version in onnx.proto, which every
// ONNX file sets.
const modelIRVersion protowire.Number = 1

// checkFormat checks that the file at p, downloaded as f of m, reads as
// what its name says it is: an ONNX model, or for an MNN LLM export a
// config (JSON) that names the package's files. Other files have no
// format to check.
func checkFormat(m Model, f File, p string) error {
	switch {
	case path.Ext(f.Path) == ".onnx":
		return checkONNX(p)
	case m.Format == FormatMNNLLM && path.Ext(f.Path) == ".json":
		cfg, err := readJSON(p)
		if err != nil || f.Path != mnnConfig {
			return err
		}
		llmConfig, err := mnnLLMConfig(cfg)
		if err == nil {
			_, err = mnnFiles(cfg, llmConfig)
		}
		return err
	}
	return nil
}

// checkONNX checks that the file at p parses as an ONNX ModelProto: its
// fields, and those of its graph, walk as protobuf, and it has an IR
// version and a graph.
func checkONNX(p string) error {
	b, err := os.ReadFile(p)
	if err != nil {
		return err
	}
	var ir, graph bool
	err = onnxproto.EachField(b, func(num protowire.Number, typ protowire.Type, val, _ []byte) error {
		switch {
		case num == modelIRVersion && typ == protowire.VarintType:
			ir = true
		case num == onnxproto.ModelGraph && typ == protowire.BytesType:
			graph = true
			return onnxproto.EachField(val, func(protowire.Number, protowire.Type, []byte, []byte) error { return nil })
		}
		return nil
	})
	if err == nil && (!ir || !graph) {
		err = errors.New("no IR version or no graph")
	}
	if err != nil {
		return fmt.Errorf("not an ONNX model: %w", err)
	}
	return nil
}
