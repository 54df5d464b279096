package assets

// How many bytes of its weight file an MNN graph reads. llm.mnn is a
// flatbuffer (alibaba/MNN schema/default/MNN.fbs, root type Net) whose ops
// keep their weights in llm.mnn.weight: a parameter table's external
// list, [offset, size1, size2, ...], has the engine read offset through
// offset+size1+size2+... of it in one sequence (source/core/
// OpCommonUtils.cpp:814-819 loadExternalDatas; ConvolutionCommon.cpp:
// 577-600; OpCommonUtils.cpp:605-700 _RebuildExternalOp). MNN checks none
// of it: a weight file cut short is read past its end, and the engine
// crashes. The field numbers are the vtable offsets of the generated
// reader (schema/current/*_generated.h) at the commit scripts/build-mnn
// builds.

import (
	"encoding/binary"
	"errors"
	"fmt"
	"math"
	"os"
	"path/filepath"

	"github.com/voiceassistant/voice/internal/filemap"
)

// Vtable offsets of the fields read.
const (
	netOplists       = 10 // Net.oplists: [Op]
	netSubgraphs     = 24 // Net.subgraphs: [SubGraphProto]
	subgraphNodes    = 12 // SubGraphProto.nodes: [Op]
	opMainType       = 6  // Op.main_type: OpParameter (u8)
	opMain           = 8  // Op.main: the OpParameter table
	opExternalPath   = 18 // Op.externalPath: a file of its own
	fusedLinearConvs = 4  // FusedLinearParam.convs: [Convolution2D]
	fusedLinearLN    = 10 // FusedLinearParam.ln: LayerNorm
)

// The OpParameter (MNN_generated.h:1137-1233) of a fused projection,
// and the vtable offsets of the external lists of the tables it holds.
const (
	paramFusedLinear      = 103
	convolution2DExternal = 16
	layerNormExternal     = 14
)

// externalField is the vtable offset of the external list of each
// OpParameter table that has one, by its OpParameter: Blob
// (Tensor_generated.h:121), Convolution2D, Scale, Convolution3D
// (CaffeOp_generated.h:1403, 2927, 1511), LayerNorm, GroupNorm
// (TensorflowOp_generated.h:3161, 3285).
var externalField = map[uint8]int64{
	7:  22,
	9:  convolution2DExternal,
	58: 10,
	80: 10,
	88: layerNormExternal,
	95: 16,
}

// errNotAGraph is the error for a graph the walk cannot follow.
var errNotAGraph = errors.New("not an MNN graph")

// flatbuffer reads a flatbuffer b, each offset checked to land in it.
// Every table and list entry it visits costs one of its budget, which is
// less than the entries b can hold: tables that refer to each other over
// and over (which no builder writes) end the walk instead of making it
// take the square of the file's size.
type flatbuffer struct {
	b      []byte
	budget int64
}

// fbTable is a table at pos whose vtable, at vtable, has vsize bytes.
type fbTable struct{ pos, vtable, vsize int64 }

func (fb *flatbuffer) bad(format string, args ...any) error {
	return fmt.Errorf("%w (%s)", errNotAGraph, fmt.Sprintf(format, args...))
}

// read is the n bytes at pos.
func (fb *flatbuffer) read(pos, n int64) ([]byte, error) {
	if pos < 0 || pos > int64(len(fb.b))-n {
		return nil, fb.bad("an offset points outside it, at %d", pos)
	}
	return fb.b[pos : pos+n], nil
}

func (fb *flatbuffer) u32(pos int64) (int64, error) {
	b, err := fb.read(pos, 4)
	if err != nil {
		return 0, err
	}
	return int64(binary.LittleEndian.Uint32(b)), nil
}

// table is the table at pos.
func (fb *flatbuffer) table(pos int64) (fbTable, error) {
	if fb.budget--; fb.budget < 0 {
		return fbTable{}, fb.bad("its tables refer to each other over and over")
	}
	b, err := fb.read(pos, 4)
	if err != nil {
		return fbTable{}, err
	}
	vtable := pos - int64(int32(binary.LittleEndian.Uint32(b)))
	h, err := fb.read(vtable, 4)
	if err != nil {
		return fbTable{}, err
	}
	vsize := int64(binary.LittleEndian.Uint16(h))
	if _, err := fb.read(vtable, vsize); err != nil || vsize < 4 || vsize%2 != 0 {
		return fbTable{}, fb.bad("a vtable at %d of %d bytes", vtable, vsize)
	}
	return fbTable{pos: pos, vtable: vtable, vsize: vsize}, nil
}

// field is where t's field at vtable offset vt is; false if t has none.
func (fb *flatbuffer) field(t fbTable, vt int64) (int64, bool) {
	if vt+2 > t.vsize {
		return 0, false
	}
	off := int64(binary.LittleEndian.Uint16(fb.b[t.vtable+vt:]))
	return t.pos + off, off != 0
}

// ref is where t's field at vt (a table, vector or string) points; false
// if t has none.
func (fb *flatbuffer) ref(t fbTable, vt int64) (int64, bool, error) {
	pos, ok := fb.field(t, vt)
	if !ok {
		return 0, false, nil
	}
	off, err := fb.u32(pos)
	return pos + off, err == nil, err
}

// subtable is the table t's field at vt points to; false if t has none.
func (fb *flatbuffer) subtable(t fbTable, vt int64) (fbTable, bool, error) {
	pos, ok, err := fb.ref(t, vt)
	if !ok || err != nil {
		return fbTable{}, false, err
	}
	sub, err := fb.table(pos)
	return sub, err == nil, err
}

// vector is where the elements of t's vector at vt start, and how many of
// elemSize bytes it has, all of them in b; 0 if t has none.
func (fb *flatbuffer) vector(t fbTable, vt, elemSize int64) (start, n int64, err error) {
	pos, ok, err := fb.ref(t, vt)
	if !ok || err != nil {
		return 0, 0, err
	}
	if n, err = fb.u32(pos); err != nil {
		return 0, 0, err
	}
	if _, err := fb.read(pos+4, n*elemSize); err != nil {
		return 0, 0, fb.bad("a list of %d entries runs past its end", n)
	}
	return pos + 4, n, nil
}

// tables calls visit with each table of t's vector of tables at vt.
func (fb *flatbuffer) tables(t fbTable, vt int64, visit func(fbTable) error) error {
	start, n, err := fb.vector(t, vt, 4)
	if err != nil {
		return err
	}
	for i := range n {
		pos := start + 4*i
		off, _ := fb.u32(pos)
		sub, err := fb.table(pos + off)
		if err != nil {
			return err
		}
		if err := visit(sub); err != nil {
			return err
		}
	}
	return nil
}

// mnnWeightsRead is how many bytes of its weight file the MNN graph b
// reads: the furthest end of the external data of its ops, those of its
// subgraphs included; 0 if it reads none.
func mnnWeightsRead(b []byte) (int64, error) {
	fb := &flatbuffer{b: b, budget: int64(len(b))/4 + 1}
	root, err := fb.u32(0)
	if err != nil {
		return 0, err
	}
	net, err := fb.table(root)
	if err != nil {
		return 0, err
	}
	var end int64
	visitOp := func(op fbTable) error {
		n, err := fb.opReads(op)
		end = max(end, n)
		return err
	}
	if err := fb.tables(net, netOplists, visitOp); err != nil {
		return 0, err
	}
	err = fb.tables(net, netSubgraphs, func(sub fbTable) error {
		return fb.tables(sub, subgraphNodes, visitOp)
	})
	return end, err
}

// opReads is the end of what op reads of the weight file.
func (fb *flatbuffer) opReads(op fbTable) (int64, error) {
	// An op with a path of its own reads its data from there
	// (OpCommonUtils.cpp:53-58, 540-544).
	if _, ok := fb.field(op, opExternalPath); ok {
		return 0, nil
	}
	var kind uint8
	if pos, ok := fb.field(op, opMainType); ok {
		b, err := fb.read(pos, 1)
		if err != nil {
			return 0, err
		}
		kind = b[0]
	}
	param, ok, err := fb.subtable(op, opMain)
	if !ok || err != nil {
		return 0, err
	}
	if vt, ok := externalField[kind]; ok {
		return fb.externalEnd(param, vt)
	}
	if kind != paramFusedLinear {
		return 0, nil
	}
	// The member convolutions and the norm of a fused projection
	// (MNN.fbs FusedLinearParam; OpCommonUtils.cpp:650-706).
	var end int64
	err = fb.tables(param, fusedLinearConvs, func(conv fbTable) error {
		n, err := fb.externalEnd(conv, convolution2DExternal)
		end = max(end, n)
		return err
	})
	if err != nil {
		return 0, err
	}
	ln, ok, err := fb.subtable(param, fusedLinearLN)
	if !ok || err != nil {
		return end, err
	}
	n, err := fb.externalEnd(ln, layerNormExternal)
	return max(end, n), err
}

// externalEnd is where the data t's external list at vt names ends: its
// offset plus its sizes; 0 for a list of fewer than two entries, which
// the engine does not read (OpCommonUtils.hpp:23 USE_EXTERNAL_DATA).
func (fb *flatbuffer) externalEnd(t fbTable, vt int64) (int64, error) {
	start, n, err := fb.vector(t, vt, 8)
	if err != nil || n < 2 {
		return 0, err
	}
	if fb.budget -= n; fb.budget < 0 {
		return 0, fb.bad("its tables refer to each other over and over")
	}
	var end int64
	for i := range n {
		v := int64(binary.LittleEndian.Uint64(fb.b[start+8*i:]))
		if v < 0 || v > math.MaxInt64-end {
			return 0, fb.bad("external data at %d of %d bytes", end, v)
		}
		end += v
	}
	return end, nil
}

// checkMNNGraph checks that the file at p is an MNN graph whose tables,
// those the weights are found by, can be followed.
func checkMNNGraph(p string) error {
	b, unmap, err := filemap.Map(p)
	if err != nil {
		return err
	}
	defer unmap()
	_, err = mnnWeightsRead(b)
	return err
}

// checkMNNWeights checks that the file at p, if it is f, the weight file
// of the export in dir, holds all that the graph beside it reads of it,
// and the tied embeddings llm_config.json places in it
// (transformers/llm/engine/src/diskembedding.cpp:75-88, 119-135). Where
// the configs or the graph cannot be read, their own checks say so: the
// weights are not blamed for them.
func checkMNNWeights(dir string, f File, p string) error {
	cfg, _, err := readMNNConfig(dir)
	switch {
	case errors.Is(err, os.ErrNotExist):
		cfg = map[string]any{} // the engine's defaults name the files
	case err != nil:
		return nil
	}
	weights, err := configFile(cfg, "llm_weight", "llm.mnn.weight")
	if err != nil || weights != f.Path {
		return nil
	}
	graph, err := configFile(cfg, "llm_model", "llm.mnn")
	if err != nil {
		return nil
	}
	b, unmap, err := filemap.Map(filepath.Join(dir, filepath.FromSlash(graph)))
	if err != nil {
		return nil
	}
	defer unmap()
	need, err := mnnWeightsRead(b)
	if err != nil {
		return nil
	}
	by := "the graph " + graph
	if end := tiedEmbeddingsEnd(cfg["tie_embeddings"]); end > need {
		need, by = end, "the tied embeddings of llm_config.json"
	}
	size, err := fileSize(p)
	if err != nil {
		return err
	}
	if size < need {
		return fmt.Errorf("cut short: %d bytes received, but %s reads %d bytes of it", size, by, need)
	}
	return nil
}
