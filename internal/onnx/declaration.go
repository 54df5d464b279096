package onnx

import (
	"errors"
	"fmt"

	ort "github.com/yalue/onnxruntime_go"
	"google.golang.org/protobuf/encoding/protowire"

	"github.com/voiceassistant/voice/internal/onnxproto"
)

// Declaration reads the inputs and outputs a model file declares. It reads
// them from the file itself, mapped rather than loaded, so a large model's
// weights (inline or in external data files) are neither read nor
// decoded: asking ONNX Runtime instead builds a session, which loads them.
func Declaration(path string) (ins, outs []ort.InputOutputInfo, err error) {
	data, unmap, err := mapFile(path)
	if err != nil {
		return nil, nil, fmt.Errorf("model %s: %w", path, err)
	}
	defer unmap()
	ins, outs, err = declaration(data)
	if err != nil {
		return nil, nil, fmt.Errorf("model %s: cannot read it as ONNX (%v); the file is corrupt or not a model", path, err)
	}
	return ins, outs, nil
}

// Field numbers of onnx.proto beyond onnxproto's: ValueInfoProto, TypeProto
// and its Tensor, TensorShapeProto and its Dimension.
const (
	valueType      = 2
	typeTensor     = 1
	typeSequence   = 4
	typeMap        = 5
	typeSparse     = 8
	typeOptional   = 9
	tensorElemType = 1
	tensorShape    = 2
	shapeDim       = 1
	dimValue       = 1
)

// valueTypes maps TypeProto's value fields to ONNX Runtime's value types.
var valueTypes = map[protowire.Number]ort.ONNXType{
	typeTensor: ort.ONNXTypeTensor, typeSequence: ort.ONNXTypeSequence, typeMap: ort.ONNXTypeMap,
	typeSparse: ort.ONNXTypeSparseTensor, typeOptional: ort.ONNXTypeOptional,
}

var errNoGraph = errors.New("no graph")

func declaration(model []byte) (ins, outs []ort.InputOutputInfo, err error) {
	var graph []byte
	err = onnxproto.EachField(model, func(num protowire.Number, typ protowire.Type, val, _ []byte) error {
		if num == onnxproto.ModelGraph && typ == protowire.BytesType {
			graph = val
		}
		return nil
	})
	if err == nil && graph == nil {
		err = errNoGraph
	}
	if err != nil {
		return nil, nil, err
	}
	// Before IR version 4 every initializer was also listed as an input;
	// ONNX Runtime does not count those as inputs to feed.
	initializers := map[string]bool{}
	var inputs []ort.InputOutputInfo
	err = onnxproto.EachField(graph, func(num protowire.Number, typ protowire.Type, val, _ []byte) error {
		if typ != protowire.BytesType {
			return nil
		}
		switch num {
		case onnxproto.GraphInitializer:
			return onnxproto.EachField(val, func(num protowire.Number, typ protowire.Type, v, _ []byte) error {
				if num == onnxproto.TensorName && typ == protowire.BytesType {
					initializers[string(v)] = true
				}
				return nil
			})
		case onnxproto.GraphInput, onnxproto.GraphOutput:
			info, err := valueInfo(val)
			if err != nil {
				return err
			}
			if num == onnxproto.GraphInput {
				inputs = append(inputs, info)
			} else {
				outs = append(outs, info)
			}
		}
		return nil
	})
	if err != nil {
		return nil, nil, err
	}
	for _, in := range inputs {
		if !initializers[in.Name] {
			ins = append(ins, in)
		}
	}
	return ins, outs, nil
}

// valueInfo reads a ValueInfoProto as ONNX Runtime reports it: symbolic
// or unknown dimensions as -1.
func valueInfo(b []byte) (ort.InputOutputInfo, error) {
	var info ort.InputOutputInfo
	err := onnxproto.EachField(b, func(num protowire.Number, typ protowire.Type, val, _ []byte) error {
		if typ != protowire.BytesType {
			return nil
		}
		switch num {
		case onnxproto.ValueInfoName:
			info.Name = string(val)
		case valueType:
			return onnxproto.EachField(val, func(num protowire.Number, _ protowire.Type, v, _ []byte) error {
				if kind, ok := valueTypes[num]; ok {
					info.OrtValueType = kind
				}
				if num == typeTensor {
					return tensorType(v, &info)
				}
				return nil
			})
		}
		return nil
	})
	return info, err
}

func tensorType(b []byte, info *ort.InputOutputInfo) error {
	return onnxproto.EachField(b, func(num protowire.Number, typ protowire.Type, val, _ []byte) error {
		switch {
		case num == tensorElemType && typ == protowire.VarintType:
			v, _ := protowire.ConsumeVarint(val)
			info.DataType = ort.TensorElementDataType(v)
		case num == tensorShape && typ == protowire.BytesType:
			dims, err := shape(val)
			info.Dimensions = dims
			return err
		}
		return nil
	})
}

// shape reads a TensorShapeProto: each dimension's size, -1 where it is
// symbolic or unknown.
func shape(b []byte) (ort.Shape, error) {
	dims := ort.Shape{}
	err := onnxproto.EachField(b, func(num protowire.Number, typ protowire.Type, dim, _ []byte) error {
		if num != shapeDim || typ != protowire.BytesType {
			return nil
		}
		size := int64(-1)
		dims = append(dims, size)
		return onnxproto.EachField(dim, func(num protowire.Number, typ protowire.Type, v, _ []byte) error {
			if num == dimValue && typ == protowire.VarintType {
				x, _ := protowire.ConsumeVarint(v)
				dims[len(dims)-1] = int64(x)
			}
			return nil
		})
	})
	return dims, err
}
