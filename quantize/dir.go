package quantize

import (
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/voiceassistant/voice/internal/graphedit"
)

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
	data := &dataFileSet{dir: out, files: map[string]*graphedit.DataFile{}}
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
	if model, err = graphedit.Inline(model, in); err != nil {
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
	files map[string]*graphedit.DataFile
	open  []*os.File
}

// file is the data file loc, made at its first use.
func (s *dataFileSet) file(loc string) (*graphedit.DataFile, error) {
	if d := s.files[loc]; d != nil {
		return d, nil
	}
	f, err := os.Create(filepath.Join(s.dir, loc))
	if err != nil {
		return nil, err
	}
	s.open = append(s.open, f)
	d := graphedit.NewDataFile(loc, f)
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
func keptApart(path string, rewritten map[string]*graphedit.DataFile) error {
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
	_, err := graphedit.MapInitializers(model, func(t []byte) ([]byte, error) {
		loc, _, _, ok, err := graphedit.ExternalRef(t)
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
