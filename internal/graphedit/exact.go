package graphedit

import (
	"math"

	"google.golang.org/protobuf/encoding/protowire"
)

// ExactActivations returns the model with its MatMulNBits computing on
// fp32 activations (accuracy level 0) rather than int8 ones (the 4 that
// the quantizer's NBits sets). At level 4 a product rounds its
// input to 8 bits, so an input that differs in its last bit from
// another's can round to another step: two graphs that agree to fp32
// rounding then differ by a quantization step now and then, which hides
// a real difference of that size. A rewrite is checked on its exact form.
func ExactActivations(model []byte) ([]byte, error) {
	return Rewrite(model, func(g []byte) ([]byte, bool, error) {
		gr, err := ReadGraph(g)
		if err != nil {
			return nil, false, err
		}
		for _, n := range gr.Nodes {
			if n.OpType == "MatMulNBits" && n.Domain == MSDomain {
				if _, ok := n.Ints["accuracy_level"]; ok {
					n.Fields = WithoutAttr(n.Fields, "accuracy_level")
				}
			}
		}
		return gr.Encode(nil, nil, nil), false, nil
	})
}

// WithoutAttr drops the attribute name from a node's fields.
func WithoutAttr(fields [][]byte, name string) [][]byte {
	var out [][]byte
	for _, f := range fields {
		num, typ, n := protowire.ConsumeTag(f)
		if num == nodeAttr && typ == protowire.BytesType && n > 0 {
			v, _ := protowire.ConsumeBytes(f[n:])
			var attr string
			_ = eachField(v, func(num protowire.Number, typ protowire.Type, val, _ []byte) error {
				if num == attrName && typ == protowire.BytesType {
					attr = string(val)
				}
				return nil
			})
			if attr == name {
				continue
			}
		}
		out = append(out, f)
	}
	return out
}

// IntAttr is an AttributeProto of type INT.
func IntAttr(name string, v int64) []byte {
	var a []byte
	a = protowire.AppendTag(a, attrName, protowire.BytesType)
	a = protowire.AppendString(a, name)
	a = protowire.AppendTag(a, attrInt, protowire.VarintType)
	a = protowire.AppendVarint(a, uint64(v))
	a = protowire.AppendTag(a, attrType, protowire.VarintType)
	a = protowire.AppendVarint(a, attrTypeInt)
	var b []byte
	b = protowire.AppendTag(b, nodeAttr, protowire.BytesType)
	return protowire.AppendBytes(b, a)
}

// FloatAttr is an AttributeProto of type FLOAT.
func FloatAttr(name string, v float32) []byte {
	var a []byte
	a = protowire.AppendTag(a, attrName, protowire.BytesType)
	a = protowire.AppendString(a, name)
	a = protowire.AppendTag(a, attrFloat, protowire.Fixed32Type)
	a = protowire.AppendFixed32(a, math.Float32bits(v))
	a = protowire.AppendTag(a, attrType, protowire.VarintType)
	a = protowire.AppendVarint(a, attrTypeFloat)
	return protowire.AppendBytes(protowire.AppendTag(nil, nodeAttr, protowire.BytesType), a)
}
