package quantize

import (
	"crypto/sha256"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"

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
	return mapInitializers(model, func(t []byte) ([]byte, error) {
		loc, off, n, ok, err := externalRef(t)
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
	return mapInitializers(model, func(t []byte) ([]byte, error) {
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

// mapInitializers rewrites each initializer of the model's main graph
// with f, keeping every other field as written.
func mapInitializers(model []byte, f func(tensor []byte) ([]byte, error)) ([]byte, error) {
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

// externalRef reads where a tensor's data lies; ok is false for a tensor
// stored inline. A length of -1 means "to the end of the file".
func externalRef(t []byte) (loc string, off, n int64, ok bool, err error) {
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

// Dir quantizes a model set: every .onnx file of the directory in, in
// format f (see Bits), except those named in keep, which are copied as they are, as is
// every other file. Graphs that keep their weights in external data files
// get them in files of the same names in out, shared between the graphs
// as they were, so the set's own references still hold; a graph with its
// weights inside gets them in a data file named after it (NAME.data). It returns the
// graphs quantized; the sizes are the set's files.
func Dir(in, out string, f Format, keep []string) (graphs []string, err error) {
	if err := f.validate(); err != nil {
		return nil, err
	}
	entries, err := os.ReadDir(in)
	if err != nil {
		return nil, err
	}
	if err := os.MkdirAll(out, 0o755); err != nil {
		return nil, err
	}
	for _, e := range entries {
		if filepath.Ext(e.Name()) == ".onnx" && !slices.Contains(keep, e.Name()) {
			graphs = append(graphs, e.Name())
		}
	}
	data := &dataFileSet{dir: out, files: map[string]*DataFile{}}
	defer data.closeOpen()
	for _, name := range graphs {
		if err := quantizeGraph(in, out, name, f, data); err != nil {
			return nil, err
		}
	}
	if err := data.close(); err != nil {
		return nil, err
	}
	for _, e := range entries {
		if e.IsDir() || data.files[e.Name()] != nil || slices.Contains(graphs, e.Name()) {
			continue
		}
		if err := keptApart(filepath.Join(in, e.Name()), data.files); err != nil {
			return nil, err
		}
		if err := copyFile(filepath.Join(in, e.Name()), filepath.Join(out, e.Name())); err != nil {
			return nil, err
		}
	}
	return graphs, nil
}

// quantizeGraph writes the graph name of the set in to out, quantized in
// format f, its weights in its data file of data.
func quantizeGraph(in, out, name string, f Format, data *dataFileSet) error {
	model, err := os.ReadFile(filepath.Join(in, name))
	if err != nil {
		return err
	}
	locs, err := externalFiles(model)
	if err != nil {
		return fmt.Errorf("%s: %w", name, err)
	}
	if len(locs) > 1 {
		return fmt.Errorf("%s: weights in %d external files (%s); one per graph is supported", name, len(locs), strings.Join(locs, ", "))
	}
	if model, err = Inline(model, in); err != nil {
		return fmt.Errorf("%s: %w", name, err)
	}
	q, _, err := Bits(model, f)
	if err != nil {
		return fmt.Errorf("%s: %w", name, err)
	}
	// A graph with its weights inside gets a data file of its own:
	// ONNX Runtime maps the weights from it instead of copying them
	// out of the parsed model (measured: 242 -> 214 MiB for X-ASR's
	// 4-bit encoder).
	loc := strings.TrimSuffix(name, ".onnx") + ".data"
	if len(locs) == 1 {
		loc = locs[0]
	}
	d, err := data.file(loc)
	if err != nil {
		return err
	}
	if q, err = d.Externalize(q); err != nil {
		return fmt.Errorf("%s: %w", name, err)
	}
	return os.WriteFile(filepath.Join(out, name), q, 0o644)
}

// dataFileSet is the data files Dir writes in dir, by name, shared by
// the graphs that name the same one.
type dataFileSet struct {
	dir   string
	files map[string]*DataFile
	open  []*os.File
}

// file is the data file loc, made at its first use.
func (s *dataFileSet) file(loc string) (*DataFile, error) {
	if d := s.files[loc]; d != nil {
		return d, nil
	}
	f, err := os.Create(filepath.Join(s.dir, loc))
	if err != nil {
		return nil, err
	}
	s.open = append(s.open, f)
	d := NewDataFile(loc, f)
	s.files[loc] = d
	return d, nil
}

// close closes the files, saying if one could not be written.
func (s *dataFileSet) close() error {
	for len(s.open) > 0 {
		f := s.open[0]
		s.open = s.open[1:]
		if err := f.Close(); err != nil {
			return err
		}
	}
	return nil
}

// closeOpen closes what a failed Dir left open.
func (s *dataFileSet) closeOpen() {
	for _, f := range s.open {
		f.Close()
	}
}

// keptApart checks that a graph copied as it is does not share a data
// file with quantized graphs, whose new file no longer holds its weights.
func keptApart(path string, rewritten map[string]*DataFile) error {
	if filepath.Ext(path) != ".onnx" {
		return nil
	}
	model, err := os.ReadFile(path)
	if err != nil {
		return err
	}
	locs, err := externalFiles(model)
	if err != nil {
		return fmt.Errorf("%s: %w", path, err)
	}
	for _, loc := range locs {
		if rewritten[loc] != nil {
			return fmt.Errorf("%s is kept as it is but shares %s with graphs being quantized; quantize it too", filepath.Base(path), loc)
		}
	}
	return nil
}

// externalFiles lists the data files the model's initializers refer to.
func externalFiles(model []byte) ([]string, error) {
	var locs []string
	_, err := mapInitializers(model, func(t []byte) ([]byte, error) {
		loc, _, _, ok, err := externalRef(t)
		if ok && !slices.Contains(locs, loc) {
			locs = append(locs, loc)
		}
		return t, err
	})
	return locs, err
}

func copyFile(from, to string) error {
	src, err := os.Open(from)
	if err != nil {
		return err
	}
	defer src.Close()
	dst, err := os.Create(to)
	if err != nil {
		return err
	}
	if _, err := io.Copy(dst, src); err != nil {
		dst.Close()
		return err
	}
	return dst.Close()
}
