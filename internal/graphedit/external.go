package graphedit

import (
	"crypto/sha256"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strconv"

	"google.golang.org/protobuf/encoding/protowire"
)

// Fields of TensorProto and StringStringEntryProto for weights stored
// outside the model file (ONNX's "external data"), which models over
// protobuf's 2 GB limit, and sets whose graphs share weights, use.
const (
	tensorLocation   = 14 // data_location: 1 = EXTERNAL
	locationExternal = 1
	entryKey         = 1
	entryValue       = 2
)

// externalMin is the smallest tensor moved to a data file; smaller ones
// stay in the graph, as onnx's own converter does (its default is 1 KiB).
const externalMin = 1024

// pageSize aligns large tensors in a data file, so ONNX Runtime can map
// each straight from the file.
const pageSize = 4096

// Inline returns the model with every initializer whose data lies in an
// external file (resolved against dir, the model's directory) read into
// the model itself, so the rewrites see its values.
func Inline(model []byte, dir string) ([]byte, error) {
	files := map[string]*os.File{}
	defer func() {
		for _, f := range files {
			f.Close()
		}
	}()
	return MapInitializers(model, func(t []byte) ([]byte, error) {
		loc, off, n, ok, err := ExternalRef(t)
		if err != nil || !ok {
			return t, err
		}
		if !filepath.IsLocal(loc) {
			return nil, fmt.Errorf("external data %q lies outside the model's directory", loc)
		}
		f := files[loc]
		if f == nil {
			if f, err = os.Open(filepath.Join(dir, loc)); err != nil {
				return nil, fmt.Errorf("external data: %w", err)
			}
			files[loc] = f
		}
		if n < 0 {
			st, err := f.Stat()
			if err != nil {
				return nil, err
			}
			n = st.Size() - off
		}
		data := make([]byte, n)
		if _, err := f.ReadAt(data, off); err != nil {
			return nil, fmt.Errorf("external data %s at %d, %d bytes: %w (a truncated file?)", loc, off, n, err)
		}
		return withData(t, data), nil
	})
}

// DataFile collects the weights of one or more graphs in one external data
// file: a tensor already written (the same bytes, as graphs of one set
// share) is written once and referenced by each graph.
type DataFile struct {
	Name string // the file name graphs refer to, beside them
	w    io.Writer
	size int64
	at   map[[32]byte]int64
}

// NewDataFile writes a data file named name to w.
func NewDataFile(name string, w io.Writer) *DataFile {
	return &DataFile{Name: name, w: w, at: map[[32]byte]int64{}}
}

// Externalize moves the model's initializers of at least externalMin
// bytes into d, leaving references in their place.
func (d *DataFile) Externalize(model []byte) ([]byte, error) {
	return MapInitializers(model, func(t []byte) ([]byte, error) {
		data, ok := rawData(t)
		if !ok || len(data) < externalMin {
			return t, nil
		}
		off, err := d.write(data)
		if err != nil {
			return nil, err
		}
		return withRef(t, d.Name, off, int64(len(data))), nil
	})
}

func (d *DataFile) write(data []byte) (int64, error) {
	sum := sha256.Sum256(data)
	if off, ok := d.at[sum]; ok {
		return off, nil
	}
	if pad := -d.size & (pageSize - 1); len(data) >= pageSize && pad > 0 {
		if _, err := d.w.Write(make([]byte, pad)); err != nil {
			return 0, err
		}
		d.size += int64(pad)
	}
	if _, err := d.w.Write(data); err != nil {
		return 0, err
	}
	off := d.size
	d.size += int64(len(data))
	d.at[sum] = off
	return off, nil
}

// MapInitializers rewrites each initializer of the model's main graph
// with f, keeping every other field as written.
func MapInitializers(model []byte, f func(tensor []byte) ([]byte, error)) ([]byte, error) {
	out, graphs, err := mapField(model, modelGraph, func(graph []byte) ([]byte, error) {
		out, _, err := mapField(graph, graphInit, f)
		return out, err
	})
	if err == nil && graphs == 0 {
		err = ErrNotONNX
	}
	return out, err
}

// mapField copies message b with the value of each length-delimited field
// num replaced by f's, and says how many there were.
func mapField(b []byte, num protowire.Number, f func([]byte) ([]byte, error)) ([]byte, int, error) {
	out := make([]byte, 0, len(b))
	found := 0
	err := eachField(b, func(n protowire.Number, typ protowire.Type, val, raw []byte) error {
		if n != num || typ != protowire.BytesType {
			out = append(out, raw...)
			return nil
		}
		found++
		v, err := f(val)
		if err != nil {
			return err
		}
		out = protowire.AppendTag(out, n, typ)
		out = protowire.AppendBytes(out, v)
		return nil
	})
	return out, found, err
}

// ExternalRef reads where a tensor's data lies; ok is false for a tensor
// stored inline. A length of -1 means "to the end of the file".
func ExternalRef(t []byte) (loc string, off, n int64, ok bool, err error) {
	n = -1
	err = eachField(t, func(num protowire.Number, typ protowire.Type, val, _ []byte) error {
		switch {
		case num == tensorLocation && typ == protowire.VarintType:
			x, _ := protowire.ConsumeVarint(val)
			ok = x == locationExternal
		case num == tensorExt && typ == protowire.BytesType:
			var k, v string
			_ = eachField(val, func(num protowire.Number, _ protowire.Type, val, _ []byte) error {
				switch num {
				case entryKey:
					k = string(val)
				case entryValue:
					v = string(val)
				}
				return nil
			})
			var perr error
			switch k {
			case "location":
				loc = v
			case "offset":
				off, perr = strconv.ParseInt(v, 10, 64)
			case "length":
				n, perr = strconv.ParseInt(v, 10, 64)
			}
			if perr != nil || off < 0 || n < -1 {
				return fmt.Errorf("external data entry %s=%q is not a valid size", k, v)
			}
		}
		return nil
	})
	if err == nil && ok && loc == "" {
		err = errors.New("external data without a location")
	}
	return loc, off, n, ok, err
}

// rawData is the tensor's inline raw_data, if it has one.
func rawData(t []byte) (data []byte, ok bool) {
	_ = eachField(t, func(num protowire.Number, typ protowire.Type, val, _ []byte) error {
		if num == tensorRaw && typ == protowire.BytesType {
			data, ok = val, true
		}
		return nil
	})
	return data, ok
}

// withData is the tensor with its data inline as raw_data.
func withData(t, data []byte) []byte {
	out := dropStorage(t)
	out = protowire.AppendTag(out, tensorRaw, protowire.BytesType)
	return protowire.AppendBytes(out, data)
}

// withRef is the tensor with its data at off in the file loc.
func withRef(t []byte, loc string, off, n int64) []byte {
	out := dropStorage(t)
	for _, kv := range [][2]string{{"location", loc}, {"offset", strconv.FormatInt(off, 10)}, {"length", strconv.FormatInt(n, 10)}} {
		var e []byte
		e = protowire.AppendTag(e, entryKey, protowire.BytesType)
		e = protowire.AppendString(e, kv[0])
		e = protowire.AppendTag(e, entryValue, protowire.BytesType)
		e = protowire.AppendString(e, kv[1])
		out = protowire.AppendTag(out, tensorExt, protowire.BytesType)
		out = protowire.AppendBytes(out, e)
	}
	out = protowire.AppendTag(out, tensorLocation, protowire.VarintType)
	return protowire.AppendVarint(out, locationExternal)
}

// dropStorage copies the tensor without where its data is.
func dropStorage(t []byte) []byte {
	var out []byte
	_ = eachField(t, func(num protowire.Number, _ protowire.Type, _, raw []byte) error {
		if num != tensorRaw && num != tensorExt && num != tensorLocation {
			out = append(out, raw...)
		}
		return nil
	})
	return out
}
