package test

import (
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/voiceassistant/voice/assets"
)

// docs/ARCHITECTURE.md is a map of the code for whoever changes it, so the
// names on it must be the code's. Every inline code span (`...`, outside
// fenced blocks) is read by these rules:
//
//   - Not checked: a span with white space (a command line), one that starts
//     with "-" (a flag), "/" or "~" (a path outside the repository), or that
//     holds "$", "*" or "://" (a variable, a glob, a URL).
//   - A repository path: a span with a "/", or one ending in .go, .json or
//     .md. It must exist relative to the repository root (a file or a
//     folder; a trailing "/" is fine). A bare file name is not found: write
//     `pipeline/stages.go`, not `stages.go`.
//   - A Go declaration: identifiers joined by dots whose first is the last
//     element of one of the module's package paths (`pipeline.Config`,
//     `wiring.Stages.StageModels`; a trailing "()" is allowed). The second
//     must be declared at the top level of that package (func, type, var or
//     const), and the third, if any, must be a method with that receiver
//     type, a field of that struct type (an embedded one by its type's
//     name) or a method of that interface type; parts after the third are
//     not checked. A package is read from its non-test .go files with
//     go/parser, whatever their build tags, so a name declared only under
//     `mnn` or `webrtcapm` counts.
//   - Anything else (`mnn`, `voice-agent`, `fmt.Println`) is not checked.

// TestArchitectureDoc checks docs/ARCHITECTURE.md against the code.
func TestArchitectureDoc(t *testing.T) {
	root, err := filepath.Abs("..")
	require.NoError(t, err)
	text, err := os.ReadFile(filepath.Join(root, "docs", "ARCHITECTURE.md"))
	require.NoError(t, err)

	// The check means something only if it finds the doc's references.
	pkgs, err := goPackages(root)
	require.NoError(t, err)
	var paths, decls int
	for _, r := range docRefs(string(text), pkgs) {
		if r.path {
			paths++
		} else {
			decls++
		}
	}
	assert.GreaterOrEqual(t, paths, 20, "repository paths checked in docs/ARCHITECTURE.md")
	assert.GreaterOrEqual(t, decls, 20, "Go declarations checked in docs/ARCHITECTURE.md")

	assert.Empty(t, docProblems(root, string(text)),
		"docs/ARCHITECTURE.md names what the code does not have: a file or a declaration was renamed or removed; update the doc")

	// The same text with a renamed declaration and a removed file fails.
	renamed := string(text) + "\nNow `pipeline.NoSuchThing`, in `pipeline/gone.go`.\n"
	assert.Len(t, docProblems(root, renamed), 2)
}

// TestDocProblems shows that the checker reports a renamed declaration or
// a missing path, and passes what it should.
func TestDocProblems(t *testing.T) {
	root, err := filepath.Abs("..")
	require.NoError(t, err)
	for _, tc := range []struct {
		name, text string
		want       []string // one substring per problem, in order
	}{
		{
			name: "real names",
			text: "The loop (`pipeline/pipeline.go`, `pipeline.Pipeline.Run()`) stops at `pipeline.Config.Interrupt`;\n" +
				"`wiring` and `scripts/models/` exist, `wiring.Stages.StageModels` is a method,\n" +
				"`clock.Clock.Hold` an interface method, `mnn.Model.RollsBack` is under a build tag,\n" +
				"`reply.Reply.cancel` unexported and `assets/manifest.json` a file.",
		},
		{
			name: "renamed declaration",
			text: "See `pipeline.NoSuchThing` and `pipeline.Config.NoSuchField`.",
			want: []string{"line 1: `pipeline.NoSuchThing`", "line 1: `pipeline.Config.NoSuchField`"},
		},
		{
			name: "member of a name that is not a type",
			text: "`pipeline.New.Field`",
			want: []string{"`pipeline.New.Field`"},
		},
		{
			name: "missing paths",
			text: "ok\n`pipeline/no_such_file.go` and `docs/NOPE.md`",
			want: []string{"line 2: `pipeline/no_such_file.go`", "line 2: `docs/NOPE.md`"},
		},
		{
			name: "bare file name",
			text: "`stages.go`",
			want: []string{"`stages.go`"},
		},
		{
			name: "not checked",
			text: "`voice-agent replay IN.wav` `--barge-in` `-tags` `/tmp/reply.wav` `~/.config/x` `$XDG_CONFIG_HOME/a`\n" +
				"`https://example.com/a.md` `test/*.go` `mnn` `fmt.Println` `e.g` `Config.Interrupt`\n" +
				"```text\n`pipeline.InAFence` `no/such/path`\n```\n",
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			problems := docProblems(root, tc.text)
			require.Len(t, problems, len(tc.want), "problems: %q", problems)
			for i, w := range tc.want {
				assert.Contains(t, problems[i], w)
			}
		})
	}
}

// docRef is an inline code span of a document that names something in the
// repository.
type docRef struct {
	line int    // 1-based
	text string // as written, less a trailing "()"
	path bool   // a repository path; otherwise a Go declaration
}

var (
	inlineCode = regexp.MustCompile("`([^`\n]+)`")
	dottedName = regexp.MustCompile(`^[a-z][a-z0-9_]*(\.[A-Za-z_][A-Za-z0-9_]*)+$`)
)

// docRefs finds the references to check in text; pkgs is goPackages'.
func docRefs(text string, pkgs map[string][]string) []docRef {
	var refs []docRef
	fenced := false
	for i, line := range strings.Split(text, "\n") {
		if strings.HasPrefix(strings.TrimSpace(line), "```") {
			fenced = !fenced
			continue
		}
		if fenced {
			continue
		}
		for _, m := range inlineCode.FindAllStringSubmatch(line, -1) {
			s := m[1]
			switch {
			case strings.ContainsAny(s, " \t$*") || strings.Contains(s, "://") ||
				strings.HasPrefix(s, "-") || strings.HasPrefix(s, "/") || strings.HasPrefix(s, "~"):
				// A command line, a flag, a path outside the repository, a
				// variable, a glob or a URL.
			case strings.Contains(s, "/") || strings.HasSuffix(s, ".go") || strings.HasSuffix(s, ".json") || strings.HasSuffix(s, ".md"):
				refs = append(refs, docRef{line: i + 1, text: s, path: true})
			default:
				s = strings.TrimSuffix(s, "()")
				pkg, _, _ := strings.Cut(s, ".")
				if dottedName.MatchString(s) && len(pkgs[pkg]) > 0 {
					refs = append(refs, docRef{line: i + 1, text: s})
				}
			}
		}
	}
	return refs
}

// docProblems checks text's references against the repository at root and
// returns one line per reference that names nothing there.
func docProblems(root, text string) []string {
	pkgs, err := goPackages(root)
	if err != nil {
		return []string{err.Error()}
	}
	parsed := map[string]*goDecls{}
	var problems []string
	for _, r := range docRefs(text, pkgs) {
		at := fmt.Sprintf("line %d: `%s`", r.line, r.text)
		if r.path {
			if _, err := os.Stat(filepath.Join(root, filepath.FromSlash(r.text))); err != nil {
				problems = append(problems, at+": no such file or folder in the repository")
			}
			continue
		}
		parts := strings.Split(r.text, ".")
		found := false
		var errs []string
		for _, dir := range pkgs[parts[0]] {
			d, ok := parsed[dir]
			if !ok {
				d, err = parseDecls(filepath.Join(root, dir))
				if err != nil {
					errs = append(errs, err.Error())
				}
				parsed[dir] = d
			}
			if d != nil && d.has(parts[1:]) {
				found = true
				break
			}
		}
		if !found {
			what := parts[1]
			if len(parts) > 2 {
				what = parts[1] + "." + parts[2]
			}
			problems = append(problems, fmt.Sprintf("%s: %s (%s) declares no %s%s", at, parts[0],
				strings.Join(pkgs[parts[0]], ", "), what, strings.Join(errs, "; ")))
		}
	}
	return problems
}

// goPackages maps the last element of each of the module's package paths
// to the package folders (relative to root) that end in it. It skips what
// the go command skips (testdata, names starting with "." or "_") and
// third_party, which scripts/setup fills with libraries and models.
func goPackages(root string) (map[string][]string, error) {
	pkgs := map[string][]string{}
	err := filepath.WalkDir(root, func(path string, e fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		name := e.Name()
		if e.IsDir() {
			if path != root && (name == "testdata" || name == "third_party" || strings.HasPrefix(name, ".") || strings.HasPrefix(name, "_")) {
				return filepath.SkipDir
			}
			return nil
		}
		if !strings.HasSuffix(name, ".go") || strings.HasSuffix(name, "_test.go") {
			return nil
		}
		rel, err := filepath.Rel(root, filepath.Dir(path))
		if err != nil {
			return err
		}
		rel = filepath.ToSlash(rel)
		last := rel[strings.LastIndex(rel, "/")+1:]
		if !slices.Contains(pkgs[last], rel) {
			pkgs[last] = append(pkgs[last], rel)
		}
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("listing the module's packages: %w", err)
	}
	return pkgs, nil
}

// goDecls are a package's top-level names and, per type, its methods,
// struct fields or interface methods.
type goDecls struct {
	top     map[string]bool
	members map[string]map[string]bool
}

// has reports whether names (Name, or Type and Member) are declared.
func (d *goDecls) has(names []string) bool {
	if !d.top[names[0]] {
		return false
	}
	return len(names) == 1 || d.members[names[0]][names[1]]
}

func (d *goDecls) member(typ, name string) {
	if d.members[typ] == nil {
		d.members[typ] = map[string]bool{}
	}
	d.members[typ][name] = true
}

// parseDecls reads the declarations of the non-test .go files in dir.
func parseDecls(dir string) (*goDecls, error) {
	files, err := filepath.Glob(filepath.Join(dir, "*.go"))
	if err != nil {
		return nil, err
	}
	d := &goDecls{top: map[string]bool{}, members: map[string]map[string]bool{}}
	fset := token.NewFileSet()
	for _, path := range files {
		if strings.HasSuffix(path, "_test.go") {
			continue
		}
		f, err := parser.ParseFile(fset, path, nil, parser.SkipObjectResolution)
		if err != nil {
			return d, err
		}
		for _, decl := range f.Decls {
			switch decl := decl.(type) {
			case *ast.FuncDecl:
				if decl.Recv == nil {
					d.top[decl.Name.Name] = true
				} else if len(decl.Recv.List) > 0 {
					d.member(typeName(decl.Recv.List[0].Type), decl.Name.Name)
				}
			case *ast.GenDecl:
				for _, spec := range decl.Specs {
					switch spec := spec.(type) {
					case *ast.ValueSpec:
						for _, n := range spec.Names {
							d.top[n.Name] = true
						}
					case *ast.TypeSpec:
						typ := spec.Name.Name
						d.top[typ] = true
						var fields *ast.FieldList
						switch t := spec.Type.(type) {
						case *ast.StructType:
							fields = t.Fields
						case *ast.InterfaceType:
							fields = t.Methods
						}
						if fields == nil {
							continue
						}
						for _, field := range fields.List {
							for _, n := range field.Names {
								d.member(typ, n.Name)
							}
							if len(field.Names) == 0 {
								d.member(typ, typeName(field.Type))
							}
						}
					}
				}
			}
		}
	}
	return d, nil
}

// typeName is the name of a receiver or embedded type: T for T, *T, T[P]
// or pkg.T.
func typeName(e ast.Expr) string {
	for {
		switch t := e.(type) {
		case *ast.Ident:
			return t.Name
		case *ast.StarExpr:
			e = t.X
		case *ast.ParenExpr:
			e = t.X
		case *ast.IndexExpr:
			e = t.X
		case *ast.IndexListExpr:
			e = t.X
		case *ast.SelectorExpr:
			return t.Sel.Name
		default:
			return ""
		}
	}
}

// TestModelsDocSizes checks that docs/models.md gives the synthesizer's
// download sizes as `voice-agent models list` does (it said ~760 MB where
// the list said 717 MB).
func TestModelsDocSizes(t *testing.T) {
	doc, err := os.ReadFile("../docs/models.md")
	require.NoError(t, err)
	manifest, err := assets.LoadManifest()
	require.NoError(t, err)
	var total int64
	for _, name := range []string{"MOSS-TTS-Nano-100M-ONNX", "MOSS-Audio-Tokenizer-Nano-ONNX"} {
		m, ok := manifest.Model(name)
		require.True(t, ok, name)
		size, approx, unknown := m.DownloadSize()
		require.False(t, approx || unknown, "%s has a pinned size", name)
		total += size
		assert.Contains(t, string(doc), strings.TrimSuffix(assets.FormatSize(size), " MiB"), "docs/models.md gives %s's size as models list does", name)
	}
	assert.Contains(t, string(doc), assets.FormatSize(total), "docs/models.md gives the two sets' total")
}
