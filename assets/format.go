package assets

// A file the manifest gives no sha256 for is trusted as first downloaded:
// before its checksum is recorded, it must at least be a file of its
// kind, not an error page, a truncated body or two versions spliced.

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"path"

	"google.golang.org/protobuf/encoding/protowire"

	"github.com/voiceassistant/voice/internal/filemap"
	"github.com/voiceassistant/voice/internal/onnxproto"
)

// modelIRVersion is ModelProto.ir_version in onnx.proto, which every
// ONNX file sets.
const modelIRVersion protowire.Number = 1

// checkFormat checks that the file at p, downloaded as f of m into the
// model's folder dir, reads as what its name says it is: an ONNX model, or
// for an MNN LLM export a config (JSON) that names the package's files, a
// graph (a flatbuffer whose tables can be followed), a tokenizer (MNN's
// text format), and weights that are not a web page and hold all the
// graph beside them reads. MNN checks none of its files: a page a mirror
// sent for llm.mnn.weight, or the file cut short, crashed the engine at
// the first prefill, at every start.
func checkFormat(m Model, f File, dir, p string) error {
	switch {
	case path.Ext(f.Path) == ".onnx":
		return checkONNX(p)
	case m.Format == FormatMNNLLM && path.Ext(f.Path) == ".mnn":
		return checkMNNGraph(p)
	case m.Format == FormatMNNLLM && path.Base(f.Path) == "tokenizer.txt":
		return checkMNNTokenizer(p)
	case m.Format == FormatMNNLLM && path.Ext(f.Path) != ".json":
		if err := checkNotAPage(p); err != nil {
			return err
		}
		return checkMNNWeights(dir, f, p)
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
	b, unmap, err := filemap.Map(p)
	if err != nil {
		return err
	}
	defer unmap()
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

// mnnTokenizerMagic starts an MNN tokenizer.txt (alibaba/MNN
// transformers/llm/engine/src/tokenizer/tokenizer.hpp, MAGIC_NUMBER; read
// by tokenizer.cpp's Tokenizer::createTokenizer).
const mnnTokenizerMagic = "430"

// checkMNNTokenizer checks that the file at p starts with MNN's tokenizer
// magic number.
func checkMNNTokenizer(p string) error {
	b, err := head(p, 64)
	if err != nil {
		return err
	}
	first, _, _ := bytes.Cut(b, []byte("\n"))
	if fields := bytes.Fields(first); len(fields) == 0 || string(fields[0]) != mnnTokenizerMagic {
		return fmt.Errorf("not an MNN tokenizer (it does not start with its magic number %s)", mnnTokenizerMagic)
	}
	return nil
}

// checkNotAPage checks that the file at p, binary weights, is not the
// HTML page or JSON error a server sent in its place.
func checkNotAPage(p string) error {
	b, err := head(p, 512)
	if err != nil {
		return err
	}
	start := bytes.ToLower(bytes.TrimLeft(b, " \t\r\n\ufeff"))
	for _, page := range []string{"<!doctype", "<html", "<?xml", "{\"error", "{\"message"} {
		if bytes.HasPrefix(start, []byte(page)) {
			return fmt.Errorf("not weights but a page a server sent (it starts %q)", bytes.TrimSpace(b[:min(len(b), 40)]))
		}
	}
	if len(b) == 0 {
		return errors.New("empty")
	}
	return nil
}

// head is the first n bytes of the file at p (all of a shorter one).
func head(p string, n int) ([]byte, error) {
	f, err := os.Open(p)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	b := make([]byte, n)
	k, err := io.ReadFull(f, b)
	if err != nil && !errors.Is(err, io.ErrUnexpectedEOF) && !errors.Is(err, io.EOF) {
		return nil, err
	}
	return b[:k], nil
}

func fileSize(p string) (int64, error) {
	info, err := os.Stat(p)
	if err != nil {
		return 0, err
	}
	return info.Size(), nil
}
