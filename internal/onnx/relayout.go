package onnx

import (
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"google.golang.org/protobuf/encoding/protowire"

	"github.com/voiceassistant/voice/internal/derived"
	"github.com/voiceassistant/voice/internal/onnxproto"
)

// ONNX Runtime reads the external data of an initializer from its
// TensorProto's external_data entries: location, offset and length for the
// tensor itself, and one entry per kernel that saved a prepacked layout of
// it, "prepacked_N" = "KEY|OFFSET;LENGTH;CHECKSUM[|OFFSET;LENGTH;CHECKSUM...]"
// (microsoft/onnxruntime onnxruntime/core/framework/tensor_external_data_info.cc,
// ExternalDataInfo::Create). A later load maps the data file and hands each
// kernel a pointer to its blob at the file's mapping plus OFFSET, without a
// copy.
//
// The session that saves the copy writes every blob at the next free
// offset: it pads only blobs over 1 MiB, and only when asked to align,
// which the optimized-model path does not ask
// (ExternalDataInfo::WritePrepackedToFileAndAddToProto, in the same file;
// ModelSavingOptions' align_offset defaults to false,
// include/onnxruntime/core/graph/model_saving_options.h). But a kernel's packed layout is made for the
// address it was packed at: MLAS's 4-bit GEMM places the parts of a
// packed weight at addresses rounded up from the buffer's start (the
// quantized data to 32 bytes, the block sums to 64, the scales after
// them; onnxruntime/core/mlas/lib/qnbitgemm.h, PackedQuantBDataStruct,
// MlasAlignAddress). Packing wrote them where those roundings fell for a
// buffer ONNX Runtime allocated 64-byte aligned; from another alignment
// the same roundings fall elsewhere, and the parts are read from the
// wrong places: two
// distinct 4-bit MatMul weights of 384x384 come back with 208 NaN in 1,536
// outputs (TestRelayoutAlignsPrepackedBlobs). So relayout lays every blob
// anew at a page boundary, which also keeps two weights off one page.
//
// Other initializers a kernel reads in place (an embedding a Gather reads,
// the scales of a 4-bit weight) go to 64 bytes, or a page from a page's
// size up: what ONNX Runtime's own allocator gives.
const (
	pageAlign = 4096
	dataAlign = 64
)

// alignment is where a region of length n, a prepacked blob or not, may
// start in the data file.
func alignment(n int64, prepacked bool) int64 {
	if prepacked || n >= pageAlign {
		return pageAlign
	}
	return dataAlign
}

// relayout rewrites the optimized copy in dir (mappedModel and its data
// file mappedWeights) so that every region of the data file starts at its
// alignment, and returns how many bytes of prepacked blobs the copy holds.
func relayout(dir string) (prepacked int64, err error) {
	modelPath, dataPath := filepath.Join(dir, mappedModel), filepath.Join(dir, mappedWeights)
	model, err := os.ReadFile(modelPath)
	if err != nil {
		return 0, err
	}
	data, err := os.Open(dataPath)
	if err != nil {
		if errors.Is(err, os.ErrNotExist) {
			return 0, nil // nothing external: nothing to map
		}
		return 0, err
	}
	defer data.Close()
	info, err := data.Stat()
	if err != nil {
		return 0, err
	}

	// The regions in the order they are first named, each placed once
	// (two entries naming one region keep sharing it).
	placed := map[region]int64{}
	var order []region
	var end int64
	if _, err := eachExternal(model, func(ref *externalRef) error {
		for _, r := range ref.regions() {
			if _, ok := placed[r.region]; ok {
				continue
			}
			if r.offset < 0 || r.length < 0 || r.offset+r.length > info.Size() {
				return fmt.Errorf("%s: %s names bytes %d-%d of a %d-byte file", modelPath, r.what, r.offset, r.offset+r.length, info.Size())
			}
			if r.prepacked {
				prepacked += r.length
			}
			a := alignment(r.length, r.prepacked)
			end = (end + a - 1) / a * a
			placed[r.region] = end
			order = append(order, r.region)
			end += r.length
		}
		return nil
	}); err != nil {
		return 0, err
	}
	rewritten, err := eachExternal(model, func(ref *externalRef) error {
		ref.move(placed)
		return nil
	})
	if err != nil {
		return 0, err
	}

	if err := derived.WriteFile(dataPath, func(w io.Writer) error {
		var at int64
		for _, r := range order {
			if _, err := io.CopyN(w, zeros{}, placed[r]-at); err != nil {
				return err
			}
			if _, err := io.Copy(w, io.NewSectionReader(data, r.offset, r.length)); err != nil {
				return err
			}
			at = placed[r] + r.length
		}
		return nil
	}); err != nil {
		return 0, err
	}
	return prepacked, derived.WriteFile(modelPath, func(w io.Writer) error {
		_, err := w.Write(rewritten)
		return err
	})
}

type zeros struct{}

func (zeros) Read(p []byte) (int, error) {
	clear(p)
	return len(p), nil
}

// region is a span of the data file.
type region struct{ offset, length int64 }

// namedRegion is a region as one entry names it.
type namedRegion struct {
	region
	prepacked bool
	what      string // for errors: the entry that names it
}

// externalRef is one tensor's external_data entries that point into the
// copy's data file.
type externalRef struct {
	tensor  string
	entries []entry
}

type entry struct{ key, value string }

// regions are the spans of the data file the entries name.
func (ref *externalRef) regions() []namedRegion {
	var out []namedRegion
	var data region
	hasData := false
	for _, e := range ref.entries {
		switch {
		case e.key == "offset":
			data.offset, _ = strconv.ParseInt(e.value, 10, 64)
			hasData = true
		case e.key == "length":
			data.length, _ = strconv.ParseInt(e.value, 10, 64)
			hasData = true
		case strings.HasPrefix(e.key, "prepacked"):
			for i, b := range prepackedBlobs(e.value) {
				out = append(out, namedRegion{b, true, fmt.Sprintf("tensor %q's %s blob %d", ref.tensor, e.key, i)})
			}
		}
	}
	if hasData {
		out = append([]namedRegion{{data, false, fmt.Sprintf("tensor %q", ref.tensor)}}, out...)
	}
	return out
}

// move rewrites the entries' offsets where placed puts their regions.
func (ref *externalRef) move(placed map[region]int64) {
	var data region
	for _, e := range ref.entries {
		switch e.key {
		case "offset":
			data.offset, _ = strconv.ParseInt(e.value, 10, 64)
		case "length":
			data.length, _ = strconv.ParseInt(e.value, 10, 64)
		}
	}
	for i, e := range ref.entries {
		switch {
		case e.key == "offset":
			ref.entries[i].value = strconv.FormatInt(placed[data], 10)
		case strings.HasPrefix(e.key, "prepacked"):
			fields := strings.Split(e.value, "|")
			for j, f := range fields[1:] {
				parts := strings.Split(f, ";")
				if b, ok := parseBlob(parts); ok {
					parts[0] = strconv.FormatInt(placed[b], 10)
					fields[j+1] = strings.Join(parts, ";")
				}
			}
			ref.entries[i].value = strings.Join(fields, "|")
		}
	}
}

// prepackedBlobs parses a prepacked entry's value as ONNX Runtime does:
// the kernel's key, then blobs of three fields; others are ignored there
// and here.
func prepackedBlobs(value string) []region {
	fields := strings.Split(value, "|")
	var out []region
	for _, f := range fields[1:] {
		if b, ok := parseBlob(strings.Split(f, ";")); ok {
			out = append(out, b)
		}
	}
	return out
}

func parseBlob(parts []string) (region, bool) {
	if len(parts) != 3 {
		return region{}, false
	}
	off, err1 := strconv.ParseInt(parts[0], 10, 64)
	n, err2 := strconv.ParseInt(parts[1], 10, 64)
	return region{off, n}, err1 == nil && err2 == nil
}

// Fields of onnx.proto the walk follows to every tensor a model holds:
// the graph's initializers, and the subgraphs and tensors of node
// attributes (an If's branches, a Loop's body).
const (
	graphSparseInit    protowire.Number = 15 // GraphProto.sparse_initializer
	attrTensor         protowire.Number = 5  // AttributeProto.t
	attrGraph          protowire.Number = 6  // AttributeProto.g
	attrTensors        protowire.Number = 10 // AttributeProto.tensors
	attrGraphs         protowire.Number = 11 // AttributeProto.graphs
	sparseValues       protowire.Number = 1  // SparseTensorProto.values
	sparseIndices      protowire.Number = 2  // SparseTensorProto.indices
	tensorExternalData protowire.Number = 13 // TensorProto.external_data
	entryKey           protowire.Number = 1  // StringStringEntryProto.key
	entryValue         protowire.Number = 2  // StringStringEntryProto.value
)

// eachExternal calls visit with every tensor of the model whose external
// data is in the copy's data file, and returns the model with the
// entries as visit left them.
func eachExternal(model []byte, visit func(*externalRef) error) ([]byte, error) {
	return rewriteFields(model, map[protowire.Number]func([]byte) ([]byte, error){
		onnxproto.ModelGraph: func(g []byte) ([]byte, error) { return walkGraph(g, visit) },
	})
}

func walkGraph(g []byte, visit func(*externalRef) error) ([]byte, error) {
	tensor := func(t []byte) ([]byte, error) { return walkTensor(t, visit) }
	return rewriteFields(g, map[protowire.Number]func([]byte) ([]byte, error){
		onnxproto.GraphInitializer: tensor,
		graphSparseInit: func(s []byte) ([]byte, error) {
			return rewriteFields(s, map[protowire.Number]func([]byte) ([]byte, error){sparseValues: tensor, sparseIndices: tensor})
		},
		graphNode: func(n []byte) ([]byte, error) {
			return rewriteFields(n, map[protowire.Number]func([]byte) ([]byte, error){
				nodeAttr: func(a []byte) ([]byte, error) {
					graph := func(g []byte) ([]byte, error) { return walkGraph(g, visit) }
					return rewriteFields(a, map[protowire.Number]func([]byte) ([]byte, error){
						attrTensor: tensor, attrTensors: tensor, attrGraph: graph, attrGraphs: graph,
					})
				},
			})
		},
	})
}

// walkTensor hands visit the tensor's entries if they point into the
// data file, and writes them back as visit left them.
func walkTensor(t []byte, visit func(*externalRef) error) ([]byte, error) {
	ref := &externalRef{}
	var rest []byte // every field but the external data, as it was
	err := onnxproto.EachField(t, func(num protowire.Number, typ protowire.Type, val, raw []byte) error {
		switch {
		case num == onnxproto.TensorName && typ == protowire.BytesType:
			ref.tensor = string(val)
		case num == tensorExternalData && typ == protowire.BytesType:
			var e entry
			if err := onnxproto.EachField(val, func(num protowire.Number, typ protowire.Type, val, _ []byte) error {
				switch {
				case num == entryKey && typ == protowire.BytesType:
					e.key = string(val)
				case num == entryValue && typ == protowire.BytesType:
					e.value = string(val)
				}
				return nil
			}); err != nil {
				return err
			}
			ref.entries = append(ref.entries, e)
			return nil
		}
		rest = append(rest, raw...)
		return nil
	})
	if err != nil || len(ref.entries) == 0 {
		return t, err
	}
	for _, e := range ref.entries {
		if e.key == "location" && e.value != mappedWeights {
			return t, nil // another file's: not the copy's to move
		}
	}
	if err := visit(ref); err != nil {
		return nil, err
	}
	for _, e := range ref.entries {
		var b []byte
		b = protowire.AppendTag(b, entryKey, protowire.BytesType)
		b = protowire.AppendString(b, e.key)
		b = protowire.AppendTag(b, entryValue, protowire.BytesType)
		b = protowire.AppendString(b, e.value)
		rest = protowire.AppendTag(rest, tensorExternalData, protowire.BytesType)
		rest = protowire.AppendBytes(rest, b)
	}
	return rest, nil
}

// rewriteFields returns the message b with each bytes field whose number
// is in rewrite replaced by what its function makes of it, in place.
func rewriteFields(b []byte, rewrite map[protowire.Number]func([]byte) ([]byte, error)) ([]byte, error) {
	out := make([]byte, 0, len(b))
	err := onnxproto.EachField(b, func(num protowire.Number, typ protowire.Type, val, raw []byte) error {
		f, ok := rewrite[num]
		if !ok || typ != protowire.BytesType {
			out = append(out, raw...)
			return nil
		}
		v, err := f(val)
		if err != nil {
			return err
		}
		out = protowire.AppendTag(out, num, protowire.BytesType)
		out = protowire.AppendBytes(out, v)
		return nil
	})
	return out, err
}
