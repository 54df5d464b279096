package spm

import (
	"errors"
	"fmt"
	"io"
	"math"

	"google.golang.org/protobuf/encoding/protowire"
)

// Piece types of sentencepiece.ModelProto.SentencePiece.Type.
const (
	typeNormal      = 1
	typeUnknown     = 2
	typeControl     = 3
	typeUserDefined = 4
	typeUnused      = 5
	typeByte        = 6
)

// Model types of sentencepiece.TrainerSpec.ModelType.
const (
	modelUnigram = 1
	modelBPE     = 2
	modelWord    = 3
	modelChar    = 4
)

// Wire types, as the tests' hand-built protobufs spell them.
const (
	wireVarint  = int(protowire.VarintType)
	wireBytes   = int(protowire.BytesType)
	wireFixed32 = int(protowire.Fixed32Type)
)

var errTruncated = errors.New("truncated protobuf")

type protoPiece struct {
	piece string
	score float32
	typ   int
}

type trainerSpec struct {
	modelType               int
	unkID, bosID, eosID     int
	padID                   int
	byteFallback            bool
	treatWhitespaceAsSuffix bool
	unkSurface              string
}

type normalizerSpec struct {
	name                   string
	charsmap               []byte
	addDummyPrefix         bool
	removeExtraWhitespaces bool
	escapeWhitespaces      bool
}

type modelProto struct {
	pieces     []protoPiece
	trainer    trainerSpec
	normalizer normalizerSpec
}

// fields calls visit with each field of the message in b, in order.
func fields(b []byte, visit func(num protowire.Number, d fieldValue) error) error {
	for len(b) > 0 {
		num, typ, n := protowire.ConsumeTag(b)
		if n < 0 {
			return wireError(n)
		}
		if num > math.MaxInt32 {
			return fmt.Errorf("invalid field number %d", num)
		}
		b = b[n:]
		d := fieldValue{typ: typ, b: b}
		if err := visit(num, d); err != nil {
			return err
		}
		// Every value, read by the visitor or not (unknown fields), is
		// stepped over here, so visitors only read.
		n = protowire.ConsumeFieldValue(num, typ, b)
		if n < 0 {
			return wireError(n)
		}
		b = b[n:]
	}
	return nil
}

func wireError(n int) error {
	err := protowire.ParseError(n)
	if errors.Is(err, io.ErrUnexpectedEOF) {
		return errTruncated
	}
	return err
}

// fieldValue is one field's value, still encoded.
type fieldValue struct {
	typ protowire.Type
	b   []byte
}

// expect returns an error if the value is not of wire type want.
func (d fieldValue) expect(name string, want protowire.Type) error {
	if d.typ != want {
		return fmt.Errorf("field %s: wire type %d, want %d", name, d.typ, want)
	}
	return nil
}

func (d fieldValue) int32(name string) (int, error) {
	if err := d.expect(name, protowire.VarintType); err != nil {
		return 0, err
	}
	v, n := protowire.ConsumeVarint(d.b)
	if n < 0 {
		return 0, wireError(n)
	}
	return int(int32(v)), nil
}

func (d fieldValue) bool(name string) (bool, error) {
	v, err := d.int32(name)
	return v != 0, err
}

func (d fieldValue) bytes(name string) ([]byte, error) {
	if err := d.expect(name, protowire.BytesType); err != nil {
		return nil, err
	}
	v, n := protowire.ConsumeBytes(d.b)
	if n < 0 {
		return nil, wireError(n)
	}
	return v, nil
}

func (d fieldValue) float32(name string) (float32, error) {
	if err := d.expect(name, protowire.Fixed32Type); err != nil {
		return 0, err
	}
	v, n := protowire.ConsumeFixed32(d.b)
	if n < 0 {
		return 0, wireError(n)
	}
	return math.Float32frombits(v), nil
}

func parseModelProto(b []byte) (*modelProto, error) {
	m := &modelProto{
		trainer: trainerSpec{
			modelType: modelUnigram, unkID: 0, bosID: 1, eosID: 2, padID: -1,
			unkSurface: " \u2047 ",
		},
		normalizer: normalizerSpec{addDummyPrefix: true, removeExtraWhitespaces: true, escapeWhitespaces: true},
	}
	err := fields(b, func(num protowire.Number, d fieldValue) error {
		switch num {
		case 1:
			sub, err := d.bytes("ModelProto.pieces")
			if err != nil {
				return err
			}
			p, err := parsePiece(sub)
			if err != nil {
				return fmt.Errorf("piece %d: %w", len(m.pieces), err)
			}
			m.pieces = append(m.pieces, p)
		case 2:
			sub, err := d.bytes("ModelProto.trainer_spec")
			if err != nil {
				return err
			}
			if err := parseTrainerSpec(sub, &m.trainer); err != nil {
				return fmt.Errorf("trainer_spec: %w", err)
			}
		case 3:
			sub, err := d.bytes("ModelProto.normalizer_spec")
			if err != nil {
				return err
			}
			if err := parseNormalizerSpec(sub, &m.normalizer); err != nil {
				return fmt.Errorf("normalizer_spec: %w", err)
			}
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	return m, nil
}

func parsePiece(b []byte) (protoPiece, error) {
	p := protoPiece{typ: typeNormal}
	err := fields(b, func(num protowire.Number, d fieldValue) (err error) {
		switch num {
		case 1:
			var v []byte
			v, err = d.bytes("piece")
			p.piece = string(v)
		case 2:
			p.score, err = d.float32("score")
		case 3:
			p.typ, err = d.int32("type")
		}
		return err
	})
	return p, err
}

func parseTrainerSpec(b []byte, t *trainerSpec) error {
	return fields(b, func(num protowire.Number, d fieldValue) (err error) {
		switch num {
		case 3:
			t.modelType, err = d.int32("model_type")
		case 24:
			t.treatWhitespaceAsSuffix, err = d.bool("treat_whitespace_as_suffix")
		case 35:
			t.byteFallback, err = d.bool("byte_fallback")
		case 40:
			t.unkID, err = d.int32("unk_id")
		case 41:
			t.bosID, err = d.int32("bos_id")
		case 42:
			t.eosID, err = d.int32("eos_id")
		case 43:
			t.padID, err = d.int32("pad_id")
		case 44:
			var v []byte
			v, err = d.bytes("unk_surface")
			t.unkSurface = string(v)
		}
		return err
	})
}

func parseNormalizerSpec(b []byte, n *normalizerSpec) error {
	return fields(b, func(num protowire.Number, d fieldValue) (err error) {
		switch num {
		case 1:
			var v []byte
			v, err = d.bytes("name")
			n.name = string(v)
		case 2:
			n.charsmap, err = d.bytes("precompiled_charsmap")
		case 3:
			n.addDummyPrefix, err = d.bool("add_dummy_prefix")
		case 4:
			n.removeExtraWhitespaces, err = d.bool("remove_extra_whitespaces")
		case 5:
			n.escapeWhitespaces, err = d.bool("escape_whitespaces")
		}
		return err
	})
}
