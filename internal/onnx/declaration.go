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

// Field numbers of onnx.proto: ModelProto, GraphProto, TensorProto,
// ValueInfoProto, TypeProto and its Tensor, TensorShapeProto and its
// Dimension.
const (
	modelGraph       = 7
	graphInitializer = 5
	graphInput       = 11
	graphOutput      = 12
	tensorName       = 8
	valueName        = 1
	valueType        = 2
	typeTensor       = 1
	typeSequence     = 4
	typeMap          = 5
	typeSparse       = 8
	typeOptional     = 9
	tensorElemType   = 1
	tensorShape      = 2
	shapeDim         = 1
	dimValue         = 1
)

var errNoGraph = errors.New("no graph")

func declaration(model []byte) (ins, outs []ort.InputOutputInfo, err error) {
	var graph []byte
	err = onnxproto.EachField(model, func(num protowire.Number, typ protowire.Type, val, _ []byte) error {
		if num == modelGraph && typ == protowire.BytesType {
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
		case graphInitializer:
			return onnxproto.EachField(val, func(num protowire.Number, typ protowire.Type, v, _ []byte) error {
				if num == tensorName && typ == protowire.BytesType {
					initializers[string(v)] = true
				}
				return nil
			})
		case graphInput, graphOutput:
			info, err := valueInfo(val)
			if err != nil {
				return err
			}
			if num == graphInput {
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
		case valueName:
			info.Name = string(val)
		case valueType:
			return onnxproto.EachField(val, func(num protowire.Number, typ protowire.Type, v, _ []byte) error {
				switch num {
				case typeTensor:
					info.OrtValueType = ort.ONNXTypeTensor
					return tensorType(v, &info)
				case typeSequence:
					info.OrtValueType = ort.ONNXTypeSequence
				case typeMap:
					info.OrtValueType = ort.ONNXTypeMap
				case typeSparse:
					info.OrtValueType = ort.ONNXTypeSparseTensor
				case typeOptional:
					info.OrtValueType = ort.ONNXTypeOptional
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
			info.Dimensions = ort.Shape{}
			return onnxproto.EachField(val, func(num protowire.Number, typ protowire.Type, dim, _ []byte) error {
				if num != shapeDim || typ != protowire.BytesType {
					return nil
				}
				size := int64(-1)
				err := onnxproto.EachField(dim, func(num protowire.Number, typ protowire.Type, v, _ []byte) error {
					if num == dimValue && typ == protowire.VarintType {
						x, _ := protowire.ConsumeVarint(v)
						size = int64(x)
					}
					return nil
				})
				info.Dimensions = append(info.Dimensions, size)
				return err
			})
		}
		return nil
	})
}
