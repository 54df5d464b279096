// Package onnxproto walks ONNX files (protobuf messages) field by field,
// without generated code and without copying: the model tools read and
// rewrite only the few fields they need, and a large model's weights are
// skipped over rather than decoded.
package onnxproto

import "google.golang.org/protobuf/encoding/protowire"

// Field numbers of onnx.proto that more than one package reads.
const (
	ModelGraph       protowire.Number = 7  // ModelProto.graph
	GraphInitializer protowire.Number = 5  // GraphProto.initializer
	GraphInput       protowire.Number = 11 // GraphProto.input
	GraphOutput      protowire.Number = 12 // GraphProto.output
	TensorName       protowire.Number = 8  // TensorProto.name
	ValueInfoName    protowire.Number = 1  // ValueInfoProto.name
)

// EachField calls visit with each field of the message in b: its number,
// wire type, value (a bytes field's contents, a varint's or fixed value's
// encoding) and the field's whole encoding.
func EachField(b []byte, visit func(num protowire.Number, typ protowire.Type, val, raw []byte) error) error {
	for len(b) > 0 {
		num, typ, n := protowire.ConsumeTag(b)
		if n < 0 {
			return protowire.ParseError(n)
		}
		m := protowire.ConsumeFieldValue(num, typ, b[n:])
		if m < 0 {
			return protowire.ParseError(m)
		}
		val := b[n : n+m]
		if typ == protowire.BytesType {
			v, k := protowire.ConsumeBytes(val)
			if k < 0 {
				return protowire.ParseError(k)
			}
			val = v
		}
		if err := visit(num, typ, val, b[:n+m]); err != nil {
			return err
		}
		b = b[n+m:]
	}
	return nil
}
