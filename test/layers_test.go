package test

import (
	"bytes"
	"encoding/json"
	"errors"
	"go/parser"
	"go/token"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// layers are the project's packages, bottom to top, by the first element
// of their path. A package may import its own layer and those below it,
// never one above: internal/ is the ground floor the rest stands on, the
// components know nothing of the pipeline that runs them, the pipeline
// nothing of the backends wired into it, and only the front ends know the
// composition root. The tools the model calls stand beside the pipeline:
// built on the components (llm's tool specs, the language of a text), and
// given to the pipeline by the composition root.
var layers = []layer{
	{"ground", []string{"internal"}},
	{"components", []string{"audio", "assets", "llm", "vad", "turn", "asr", "tts"}},
	{"pipeline", []string{"pipeline", "tools"}},
	{"stand-ins", []string{"standin"}},
	{"composition root", []string{"wiring"}},
	{"tools", []string{"bench", "quantize"}},
	{"front ends", []string{"control", "voicebench", "app", "cmd", "deploy", "test"}},
}

type layer struct {
	name  string
	roots []string
}

// componentImports says which components may import which others: the
// stages are built on audio's frames and formats, and none on another
// stage, so any stage can be swapped or left out alone. Inside one
// component (llm/mnn and llm, tts/moss and tts/normalize) imports are free.
var componentImports = map[string][]string{
	"audio":  nil,
	"assets": nil,
	"llm":    nil,
	"vad":    {"audio"},
	"turn":   {"audio"},
	"asr":    {"audio"},
	"tts":    {"audio"},
}

// goPackage is what the test reads of `go list -json`.
type goPackage struct {
	ImportPath                        string
	Dir                               string
	Module                            struct{ Path string }
	GoFiles, CgoFiles, IgnoredGoFiles []string
}

// projectPackage is a package's non-test Go, in every build (files behind
// build tags or for other systems included): its size and the project
// packages it imports, relative to the module.
type projectPackage struct {
	path    string
	lines   int
	imports []string
}

// TestLayers checks that no non-test import runs from a lower layer to a
// higher one; with -v it logs the package graph with each package's size,
// bottom to top.
func TestLayers(t *testing.T) {
	pkgs := projectPackages(t, "..")
	layerOf := func(path string) int {
		root, _, _ := strings.Cut(path, "/")
		return slices.IndexFunc(layers, func(l layer) bool { return slices.Contains(l.roots, root) })
	}
	slices.SortStableFunc(pkgs, func(a, b projectPackage) int { return layerOf(a.path) - layerOf(b.path) })
	for _, p := range pkgs {
		from := layerOf(p.path)
		if from < 0 {
			t.Errorf("%s is in no layer: add its first path element to layers", p.path)
			continue
		}
		t.Logf("%-20s %-38s %6d lines  imports %s", layers[from].name, p.path, p.lines, strings.Join(p.imports, ", "))
		for _, imp := range p.imports {
			to := layerOf(imp)
			switch {
			case to > from:
				t.Errorf("%s (%s) imports %s (%s), a higher layer", p.path, layers[from].name, imp, layers[to].name)
			case to == from && layers[from].name == "components" && !componentMayImport(p.path, imp):
				t.Errorf("%s imports %s, another component it does not build on (componentImports)", p.path, imp)
			}
		}
	}
}

// componentMayImport is whether component package from may import imp.
func componentMayImport(from, imp string) bool {
	a, _, _ := strings.Cut(from, "/")
	b, _, _ := strings.Cut(imp, "/")
	return a == b || slices.Contains(componentImports[a], b)
}

// projectPackages lists the module's packages under dir, each with the
// project packages its non-test files import.
func projectPackages(t *testing.T, dir string) []projectPackage {
	cmd := exec.Command("go", "list", "-json", "./...")
	cmd.Dir = dir
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	require.NoError(t, err, "go list: %s", stderr.String())
	var pkgs []projectPackage
	for dec := json.NewDecoder(bytes.NewReader(out)); ; {
		var gp goPackage
		if err := dec.Decode(&gp); errors.Is(err, io.EOF) {
			break
		} else {
			require.NoError(t, err)
		}
		p := projectPackage{path: strings.TrimPrefix(strings.TrimPrefix(gp.ImportPath, gp.Module.Path), "/")}
		files := slices.Concat(gp.GoFiles, gp.CgoFiles, gp.IgnoredGoFiles)
		for _, f := range files {
			if strings.HasSuffix(f, "_test.go") {
				continue
			}
			imports, lines := readGo(t, filepath.Join(gp.Dir, f))
			p.lines += lines
			for _, imp := range imports {
				if rel, ok := strings.CutPrefix(imp, gp.Module.Path+"/"); ok && !slices.Contains(p.imports, rel) {
					p.imports = append(p.imports, rel)
				}
			}
		}
		slices.Sort(p.imports)
		pkgs = append(pkgs, p)
	}
	return pkgs
}

// readGo returns the imports of the Go file at path and its line count.
func readGo(t *testing.T, path string) (imports []string, lines int) {
	src, err := os.ReadFile(path)
	require.NoError(t, err)
	f, err := parser.ParseFile(token.NewFileSet(), path, src, parser.ImportsOnly)
	require.NoError(t, err)
	for _, spec := range f.Imports {
		imp, err := strconv.Unquote(spec.Path.Value)
		require.NoError(t, err)
		imports = append(imports, imp)
	}
	return imports, bytes.Count(src, []byte("\n"))
}
