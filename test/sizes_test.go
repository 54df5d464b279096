package test

import (
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// The sizes a newcomer can read in one sitting (issue 54): a Go file of at
// most 600 lines, a function of at most 80, and at most 20 methods on the
// pipeline, whose reply (pipeline/reply) and listening side
// (pipeline/listen) own their lives apart from it (issue 71).
const (
	maxFileLines       = 600
	maxFuncLines       = 80
	maxPipelineMethods = 20
)

// TestSizes checks the limits above over the module's non-test Go, in
// every build (files behind build tags included); the third-party and
// generated trees are not ours to split.
func TestSizes(t *testing.T) {
	root := ".."
	fset := token.NewFileSet()
	pipelineMethods := 0
	err := filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			if name := d.Name(); path != root && (name == "third_party" || name == "testdata" || strings.HasPrefix(name, ".")) {
				return filepath.SkipDir
			}
			return nil
		}
		if !strings.HasSuffix(path, ".go") || strings.HasSuffix(path, "_test.go") {
			return nil
		}
		f, err := parser.ParseFile(fset, path, nil, parser.SkipObjectResolution)
		require.NoError(t, err)
		rel, _ := filepath.Rel(root, path)
		if n := fset.File(f.Pos()).LineCount(); n > maxFileLines {
			t.Errorf("%s has %d lines (at most %d): split it along what it does", rel, n, maxFileLines)
		}
		for _, decl := range f.Decls {
			fn, ok := decl.(*ast.FuncDecl)
			if !ok {
				continue
			}
			if n := fset.Position(fn.End()).Line - fset.Position(fn.Pos()).Line + 1; n > maxFuncLines {
				t.Errorf("%s: %s has %d lines (at most %d)", rel, fn.Name.Name, n, maxFuncLines)
			}
			if filepath.Dir(rel) == "pipeline" && receiverName(fn) == "Pipeline" {
				pipelineMethods++
			}
		}
		return nil
	})
	require.NoError(t, err)
	require.NotZero(t, pipelineMethods, "no method of pipeline.Pipeline found: has it moved?")
	t.Logf("pipeline.Pipeline has %d methods", pipelineMethods)
	if pipelineMethods > maxPipelineMethods {
		t.Errorf("pipeline.Pipeline has %d methods (at most %d): give a reply's or the listener's work to them", pipelineMethods, maxPipelineMethods)
	}
}

// receiverName is the type a method is declared on, "" for a function.
func receiverName(fn *ast.FuncDecl) string {
	if fn.Recv == nil || len(fn.Recv.List) == 0 {
		return ""
	}
	typ := fn.Recv.List[0].Type
	if star, ok := typ.(*ast.StarExpr); ok {
		typ = star.X
	}
	if id, ok := typ.(*ast.Ident); ok {
		return id.Name
	}
	return ""
}
