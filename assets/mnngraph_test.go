package assets

// The MNN lines cited are at alibaba/MNN commit
// 4d40bdbd7efb73a58383bb5da867a6f41eb1776e, the one scripts/build-mnn
// builds.

import (
	"encoding/binary"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// fbTab is a flatbuffer table to build: its u8 fields and its fields that
// point elsewhere (an fbTab, a []fbTab, an []int64 or a string), by
// vtable offset.
type fbTab struct {
	u8   map[int]uint8
	refs map[int]any
}

// buildFlatbuffer lays out root as a flatbuffer, each table after its
// vtable and before what it points to (offsets run forward).
func buildFlatbuffer(root fbTab) []byte {
	b := make([]byte, 4)
	binary.LittleEndian.PutUint32(b, uint32(appendFB(&b, root)))
	return b
}

// appendFB appends v to b and returns where it starts.
func appendFB(b *[]byte, v any) int {
	le := binary.LittleEndian
	switch v := v.(type) {
	case fbTab:
		slots := 0
		for vt := range v.u8 {
			slots = max(slots, vt/2-1)
		}
		for vt := range v.refs {
			slots = max(slots, vt/2-1)
		}
		vtable := len(*b)
		*b = le.AppendUint16(*b, uint16(4+2*slots))
		*b = le.AppendUint16(*b, uint16(4+4*slots))
		*b = append(*b, make([]byte, 2*slots)...)
		table := len(*b)
		*b = le.AppendUint32(*b, uint32(table-vtable))
		*b = append(*b, make([]byte, 4*slots)...)
		field := func(vt int) int {
			pos := table + 4 + 4*(vt/2-2)
			le.PutUint16((*b)[vtable+vt:], uint16(pos-table))
			return pos
		}
		for vt, x := range v.u8 {
			(*b)[field(vt)] = x
		}
		for vt, x := range v.refs {
			pos := field(vt)
			at := appendFB(b, x) // first: it may move b
			le.PutUint32((*b)[pos:], uint32(at-pos))
		}
		return table
	case []fbTab:
		start := len(*b)
		*b = le.AppendUint32(*b, uint32(len(v)))
		*b = append(*b, make([]byte, 4*len(v))...)
		for i, x := range v {
			pos := start + 4 + 4*i
			at := appendFB(b, x)
			le.PutUint32((*b)[pos:], uint32(at-pos))
		}
		return start
	case []int64:
		start := len(*b)
		*b = le.AppendUint32(*b, uint32(len(v)))
		for _, x := range v {
			*b = le.AppendUint64(*b, uint64(x))
		}
		return start
	case string:
		start := len(*b)
		*b = le.AppendUint32(*b, uint32(len(v)))
		*b = append(append(*b, v...), 0)
		return start
	}
	panic("appendFB: no layout for this type")
}

// op is an Op of main_type kind with parameter table param.
func op(kind uint8, param fbTab) fbTab {
	return fbTab{u8: map[int]uint8{opMainType: kind}, refs: map[int]any{opMain: param}}
}

// withExternal is a parameter table with the external list ext at vt.
func withExternal(vt int, ext ...int64) fbTab {
	return fbTab{refs: map[int]any{vt: ext}}
}

func graphOf(ops ...fbTab) fbTab { return fbTab{refs: map[int]any{netOplists: ops}} }

// Each kind of op's external list, where the engine reads it, counts:
// offset plus every size, read in one sequence from the offset
// (source/core/OpCommonUtils.cpp:814-819 loadExternalDatas,
// ConvolutionCommon.cpp:577-600, OpCommonUtils.cpp:605-706).
func TestMNNWeightsRead(t *testing.T) {
	conv := func(ext ...int64) fbTab { return op(9, withExternal(16, ext...)) }
	fused := op(paramFusedLinear, fbTab{refs: map[int]any{
		fusedLinearConvs: []fbTab{withExternal(16, 100, 10, 2), withExternal(16, 500, 40, 4, 4)},
		fusedLinearLN:    withExternal(14, 700, 8, 8),
	}})
	withPath := conv(0, 9000)
	withPath.refs[opExternalPath] = "other.weight"
	for _, tc := range []struct {
		name string
		net  fbTab
		want int64
	}{
		{"no ops", fbTab{}, 0},
		{"a convolution: weight, alpha, bias, index", graphOf(conv(1000, 512, 64, 16, 8)), 1600},
		{"the furthest of several", graphOf(conv(0, 10, 10), conv(5000, 10, 10), conv(10, 10)), 5020},
		{"a constant (Blob)", graphOf(op(7, withExternal(22, 64, 4096))), 4160},
		{"Scale, Convolution3D, LayerNorm, GroupNorm", graphOf(op(58, withExternal(10, 10, 1)), op(80, withExternal(10, 20, 1)),
			op(88, withExternal(14, 30, 1)), op(95, withExternal(16, 40, 1))), 41},
		{"a fused projection's convolutions and norm", graphOf(fused), 716},
		{"the nodes of a subgraph", fbTab{refs: map[int]any{netSubgraphs: []fbTab{{refs: map[int]any{subgraphNodes: []fbTab{conv(300, 30)}}}}}}, 330},
		// USE_EXTERNAL_DATA, OpCommonUtils.hpp:23.
		{"a list of one entry is not read", graphOf(conv(9000)), 0},
		{"an op with a file of its own (OpCommonUtils.cpp:53-58)", graphOf(withPath), 0},
		{"an op of another kind", graphOf(op(19, withExternal(16, 0, 9000))), 0},
	} {
		got, err := mnnWeightsRead(buildFlatbuffer(tc.net))
		require.NoError(t, err, tc.name)
		assert.Equal(t, tc.want, got, tc.name)
	}
}

// A graph the walk cannot follow is an error, never a panic or a walk
// the square of its size.
func TestMNNWeightsReadMalformed(t *testing.T) {
	good := buildFlatbuffer(graphOf(op(9, withExternal(16, 1000, 512, 64))))
	for _, tc := range []struct {
		name string
		data []byte
		want string
	}{
		{"empty", nil, "points outside it"},
		{"zeros", make([]byte, 64), "a vtable at 0 of 0 bytes"},
		{"a page", []byte("<!DOCTYPE html><html><body>502 Bad Gateway</body></html>"), "points outside it"},
		{"cut short", good[:len(good)-4], "a list of 3 entries runs past its end"},
		{"a negative size", buildFlatbuffer(graphOf(op(9, withExternal(16, 0, -1)))), "of -1 bytes"},
		{"sizes past any file", buildFlatbuffer(graphOf(op(9, withExternal(16, 1<<62, 1<<62)))), "external data at 4611686018427387904"},
		{"a root outside", []byte{0xff, 0xff, 0, 0, 0, 0, 0, 0}, "points outside it, at 65535"},
		{"every op the same, read over and over", sameOpOverAndOver(t), "refer to each other over and over"},
	} {
		_, err := mnnWeightsRead(tc.data)
		require.Error(t, err, tc.name)
		assert.ErrorIs(t, err, errNotAGraph, tc.name)
		assert.Contains(t, err.Error(), tc.want, tc.name)
	}
}

// sameOpOverAndOver is a graph whose op list names, 200 times over, one op
// with a list of 1000 sizes: no builder writes it, and a walk that read
// each would read 200,000 sizes from a file of 16 KB.
func sameOpOverAndOver(t *testing.T) []byte {
	var ops []fbTab
	for range 199 {
		ops = append(ops, op(9, fbTab{}))
	}
	ops = append(ops, op(9, withExternal(16, make([]int64, 1000)...)))
	b := buildFlatbuffer(graphOf(ops...))
	fb := &flatbuffer{b: b, budget: 1 << 20}
	root, err := fb.u32(0)
	require.NoError(t, err)
	graph, err := fb.table(root)
	require.NoError(t, err)
	start, n, err := fb.vector(graph, netOplists, 4)
	require.NoError(t, err)
	// Offsets point forward only: every entry to the last op.
	last := start + 4*(n-1)
	target := last + int64(binary.LittleEndian.Uint32(b[last:]))
	for i := range n {
		pos := start + 4*i
		binary.LittleEndian.PutUint32(b[pos:], uint32(target-pos))
	}
	return b
}

// The tiny export's graph reads its weight file to the last byte: its
// output layer, a convolution (source/core/ConvolutionCommon.cpp:586-600),
// ends there.
func TestMNNWeightsReadTinyExport(t *testing.T) {
	got, err := mnnWeightsRead(readTiny(t, "llm.mnn"))
	require.NoError(t, err)
	assert.EqualValues(t, len(readTiny(t, "llm.mnn.weight")), got)
}

// A weight file shorter than its graph reads is refused, whole it passes;
// so are tied embeddings llm_config.json places past its end
// (transformers/llm/engine/src/diskembedding.cpp:92-135).
func TestMNNWeightsCutShort(t *testing.T) {
	weights := readTiny(t, "llm.mnn.weight")
	whole := int64(len(weights))
	tiedPast := tinyLLMConfig(t, map[string]any{"tie_embeddings": map[string]any{
		"weight_offset": 40960.0, "alpha_offset": float64(whole), "alpha_size": 2560.0, "quant_bit": 8.0, "quant_block": 64.0}})
	for _, tc := range []struct {
		name   string
		pkg    map[string][]byte
		length int64
		want   string
	}{
		{"whole", tinyPackage(t), whole, ""},
		{"tied within it", tiedPackage(t), whole, ""},
		{"a byte short", tinyPackage(t), whole - 1, "cut short: 66361 bytes received, but the graph llm.mnn reads 66362 bytes of it"},
		{"half", tinyPackage(t), whole / 2, "33181 bytes received, but the graph llm.mnn reads 66362"},
		{"at the end of a layer's norm", tinyPackage(t), 44340, "44340 bytes received"},
		{"a byte", tinyPackage(t), 1, "1 bytes received"},
		{"tied past its end", mergePackage(tinyPackage(t), "llm_config.json", marshal(t, tiedPast)), whole,
			"66362 bytes received, but the tied embeddings of llm_config.json reads 68922 bytes of it"},
	} {
		dir := t.TempDir()
		tc.pkg["llm.mnn.weight"] = weights[:tc.length]
		writePackage(t, dir, tc.pkg)
		p := filepath.Join(dir, "llm.mnn.weight")
		err := checkFormat(mnnModel, File{Path: "llm.mnn.weight"}, dir, p)
		if tc.want == "" {
			assert.NoError(t, err, tc.name)
			continue
		}
		if assert.Error(t, err, tc.name) {
			assert.Contains(t, err.Error(), tc.want, tc.name)
		}
	}
}

func mergePackage(pkg map[string][]byte, name string, data []byte) map[string][]byte {
	pkg[name] = data
	return pkg
}

// FuzzMNNWeightsRead feeds the walk of an MNN graph with damaged graphs
// (the seeds in testdata/fuzz are small graphs of each kind of op; the
// tiny export's whole graph, 158 KB, slowed the fuzzer to a few hundred
// runs a second): it must end, with the end of the data they read or an
// error that says it is no graph, without a panic.
func FuzzMNNWeightsRead(f *testing.F) {
	f.Fuzz(func(t *testing.T, data []byte) {
		end, err := mnnWeightsRead(data)
		if err != nil {
			require.ErrorIs(t, err, errNotAGraph)
			return
		}
		require.GreaterOrEqual(t, end, int64(0))
	})
}
