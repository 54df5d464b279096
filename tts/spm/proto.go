package spm

import (
	"encoding/binary"
	"errors"
	"fmt"
	"math"
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

// Protobuf wire types.
const (
	wireVarint  = 0
	wireFixed64 = 1
	wireBytes   = 2
	wireStart   = 3
	wireEnd     = 4
	wireFixed32 = 5
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

// decoder walks one protobuf message.
type decoder struct {
	b   []byte
	off int
}

func (d *decoder) done() bool { return d.off >= len(d.b) }

func (d *decoder) varint() (uint64, error) {
	v, n := binary.Uvarint(d.b[d.off:])
	if n == 0 {
		return 0, errTruncated
	}
	if n < 0 {
		return 0, errors.New("malformed varint")
	}
	d.off += n
	return v, nil
}

// field reads a field key and returns the field number and wire type.
func (d *decoder) field() (int, int, error) {
	k, err := d.varint()
	if err != nil {
		return 0, 0, err
	}
	num, wt := k>>3, int(k&7)
	if num == 0 || num > math.MaxInt32 {
		return 0, 0, fmt.Errorf("invalid field number %d at offset %d", num, d.off)
	}
	return int(num), wt, nil
}

func (d *decoder) bytes() ([]byte, error) {
	l, err := d.varint()
	if err != nil {
		return nil, err
	}
	if l > uint64(len(d.b)-d.off) {
		return nil, errTruncated
	}
	v := d.b[d.off : d.off+int(l)]
	d.off += int(l)
	return v, nil
}

func (d *decoder) fixed32() (uint32, error) {
	if len(d.b)-d.off < 4 {
		return 0, errTruncated
	}
	v := binary.LittleEndian.Uint32(d.b[d.off:])
	d.off += 4
	return v, nil
}

// skip skips a field value of wire type wt.
func (d *decoder) skip(num, wt int) error {
	switch wt {
	case wireVarint:
		_, err := d.varint()
		return err
	case wireFixed64:
		if len(d.b)-d.off < 8 {
			return errTruncated
		}
		d.off += 8
		return nil
	case wireBytes:
		_, err := d.bytes()
		return err
	case wireFixed32:
		_, err := d.fixed32()
		return err
	case wireStart:
		for {
			if d.done() {
				return errTruncated
			}
			n, w, err := d.field()
			if err != nil {
				return err
			}
			if w == wireEnd {
				if n != num {
					return fmt.Errorf("mismatched end group %d (want %d)", n, num)
				}
				return nil
			}
			if err := d.skip(n, w); err != nil {
				return err
			}
		}
	default:
		return fmt.Errorf("invalid wire type %d for field %d", wt, num)
	}
}

// expect returns an error if wt is not the wire type want of field name.
func expect(name string, wt, want int) error {
	if wt != want {
		return fmt.Errorf("field %s: wire type %d, want %d", name, wt, want)
	}
	return nil
}

func (d *decoder) int32Field(name string, wt int) (int, error) {
	if err := expect(name, wt, wireVarint); err != nil {
		return 0, err
	}
	v, err := d.varint()
	return int(int32(v)), err
}

func (d *decoder) boolField(name string, wt int) (bool, error) {
	if err := expect(name, wt, wireVarint); err != nil {
		return false, err
	}
	v, err := d.varint()
	return v != 0, err
}

func (d *decoder) bytesField(name string, wt int) ([]byte, error) {
	if err := expect(name, wt, wireBytes); err != nil {
		return nil, err
	}
	return d.bytes()
}

func parseModelProto(b []byte) (*modelProto, error) {
	m := &modelProto{
		trainer: trainerSpec{
			modelType: modelUnigram, unkID: 0, bosID: 1, eosID: 2, padID: -1,
			unkSurface: " \u2047 ",
		},
		normalizer: normalizerSpec{addDummyPrefix: true, removeExtraWhitespaces: true, escapeWhitespaces: true},
	}
	d := &decoder{b: b}
	for !d.done() {
		num, wt, err := d.field()
		if err != nil {
			return nil, err
		}
		switch num {
		case 1:
			sub, err := d.bytesField("ModelProto.pieces", wt)
			if err != nil {
				return nil, err
			}
			p, err := parsePiece(sub)
			if err != nil {
				return nil, fmt.Errorf("piece %d: %w", len(m.pieces), err)
			}
			m.pieces = append(m.pieces, p)
		case 2:
			sub, err := d.bytesField("ModelProto.trainer_spec", wt)
			if err != nil {
				return nil, err
			}
			if err := parseTrainerSpec(sub, &m.trainer); err != nil {
				return nil, fmt.Errorf("trainer_spec: %w", err)
			}
		case 3:
			sub, err := d.bytesField("ModelProto.normalizer_spec", wt)
			if err != nil {
				return nil, err
			}
			if err := parseNormalizerSpec(sub, &m.normalizer); err != nil {
				return nil, fmt.Errorf("normalizer_spec: %w", err)
			}
		default:
			if err := d.skip(num, wt); err != nil {
				return nil, err
			}
		}
	}
	return m, nil
}

func parsePiece(b []byte) (protoPiece, error) {
	p := protoPiece{typ: typeNormal}
	d := &decoder{b: b}
	for !d.done() {
		num, wt, err := d.field()
		if err != nil {
			return p, err
		}
		switch num {
		case 1:
			v, err := d.bytesField("piece", wt)
			if err != nil {
				return p, err
			}
			p.piece = string(v)
		case 2:
			if err := expect("score", wt, wireFixed32); err != nil {
				return p, err
			}
			v, err := d.fixed32()
			if err != nil {
				return p, err
			}
			p.score = math.Float32frombits(v)
		case 3:
			if p.typ, err = d.int32Field("type", wt); err != nil {
				return p, err
			}
		default:
			if err := d.skip(num, wt); err != nil {
				return p, err
			}
		}
	}
	return p, nil
}

func parseTrainerSpec(b []byte, t *trainerSpec) error {
	d := &decoder{b: b}
	for !d.done() {
		num, wt, err := d.field()
		if err != nil {
			return err
		}
		switch num {
		case 3:
			t.modelType, err = d.int32Field("model_type", wt)
		case 24:
			t.treatWhitespaceAsSuffix, err = d.boolField("treat_whitespace_as_suffix", wt)
		case 35:
			t.byteFallback, err = d.boolField("byte_fallback", wt)
		case 40:
			t.unkID, err = d.int32Field("unk_id", wt)
		case 41:
			t.bosID, err = d.int32Field("bos_id", wt)
		case 42:
			t.eosID, err = d.int32Field("eos_id", wt)
		case 43:
			t.padID, err = d.int32Field("pad_id", wt)
		case 44:
			var v []byte
			v, err = d.bytesField("unk_surface", wt)
			t.unkSurface = string(v)
		default:
			err = d.skip(num, wt)
		}
		if err != nil {
			return err
		}
	}
	return nil
}

func parseNormalizerSpec(b []byte, n *normalizerSpec) error {
	d := &decoder{b: b}
	for !d.done() {
		num, wt, err := d.field()
		if err != nil {
			return err
		}
		switch num {
		case 1:
			var v []byte
			v, err = d.bytesField("name", wt)
			n.name = string(v)
		case 2:
			n.charsmap, err = d.bytesField("precompiled_charsmap", wt)
		case 3:
			n.addDummyPrefix, err = d.boolField("add_dummy_prefix", wt)
		case 4:
			n.removeExtraWhitespaces, err = d.boolField("remove_extra_whitespaces", wt)
		case 5:
			n.escapeWhitespaces, err = d.boolField("escape_whitespaces", wt)
		default:
			err = d.skip(num, wt)
		}
		if err != nil {
			return err
		}
	}
	return nil
}
