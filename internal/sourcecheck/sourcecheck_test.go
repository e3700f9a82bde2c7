package sourcecheck

import (
	"errors"
	"go/ast"
	"go/parser"
	"go/token"
	"go/types"
	"io/fs"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"go.uber.org/goleak"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// TestNoBuiltinPrint: production code never calls the builtins print or
// println, which write to the process's standard error past every logger.
// A debugging println merged from a review once reached the placement
// actor's refusal path.
func TestNoBuiltinPrint(t *testing.T) {
	found, err := builtinPrints(filepath.Join("..", ".."))
	if err != nil {
		t.Fatal(err)
	}
	if len(found) > 0 {
		t.Fatalf("builtin print/println in production code:\n%s", strings.Join(found, "\n"))
	}
}

// TestBuiltinPrintsResolvesNames: a call counts when its name resolves to
// the builtin, not when it is spelt print or println. The fixture shadows
// both with a parameter, a local variable and a function declared in
// another file of its package (a check by spelling and by the file's own
// declarations flagged those), and calls the builtins once plainly and
// once in parentheses (a check of bare identifiers missed that one).
func TestBuiltinPrintsResolvesNames(t *testing.T) {
	found, err := builtinPrints(filepath.Join("testdata", "shadow"))
	if err != nil {
		t.Fatal(err)
	}
	want := []string{"a.go:23:2", "a.go:24:2"}
	var got []string
	for _, f := range found {
		got = append(got, strings.TrimPrefix(f, filepath.Join("testdata", "shadow")+string(filepath.Separator)))
	}
	if !slices.Equal(got, want) {
		t.Fatalf("builtin calls found at %q, want %q", got, want)
	}
}

// builtinPrints returns the positions of the calls to the builtin print or
// println in the non-test Go files under root (not in testdata, benchmarks
// or dot directories, unless root is one). Each directory's files are
// type-checked together, imports left unresolved, so that a name resolves
// as the compiler resolves it: a parameter, a local or a package-level
// declaration in another file shadows the builtin.
func builtinPrints(root string) ([]string, error) {
	fset := token.NewFileSet()
	byDir := map[string]map[string][]*ast.File{} // dir -> package name -> files
	err := filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			name := d.Name()
			if path != root && (strings.HasPrefix(name, ".") || name == "testdata" || name == "benchmarks") {
				return filepath.SkipDir
			}
			return nil
		}
		if !strings.HasSuffix(path, ".go") || strings.HasSuffix(path, "_test.go") {
			return nil
		}
		f, err := parser.ParseFile(fset, path, nil, parser.SkipObjectResolution)
		if err != nil {
			return err
		}
		dir := filepath.Dir(path)
		if byDir[dir] == nil {
			byDir[dir] = map[string][]*ast.File{}
		}
		byDir[dir][f.Name.Name] = append(byDir[dir][f.Name.Name], f)
		return nil
	})
	if err != nil {
		return nil, err
	}
	var found []string
	for _, pkgs := range byDir {
		for name, files := range pkgs {
			info := &types.Info{Uses: map[*ast.Ident]types.Object{}}
			conf := types.Config{
				Importer: noImports{},
				Error:    func(error) {}, // unresolved imports: keep checking
			}
			_, _ = conf.Check(name, fset, files, info)
			for _, f := range files {
				ast.Inspect(f, func(n ast.Node) bool {
					call, ok := n.(*ast.CallExpr)
					if !ok {
						return true
					}
					id, ok := ast.Unparen(call.Fun).(*ast.Ident)
					if !ok {
						return true
					}
					if b, ok := info.Uses[id].(*types.Builtin); ok && (b.Name() == "print" || b.Name() == "println") {
						found = append(found, fset.Position(call.Pos()).String())
					}
					return true
				})
			}
		}
	}
	slices.Sort(found)
	return found, nil
}

// noImports resolves no import: the check needs only the names declared
// in the package and the universe's.
type noImports struct{}

func (noImports) Import(string) (*types.Package, error) {
	return nil, errors.New("sourcecheck: imports are not resolved")
}

// TestEveryPackageHasDocGo: every directory of the module (and of the
// benchmarks module) that holds Go files other than tests has a doc.go
// carrying the package comment, so `go doc` and pkg.go.dev show what each
// package is for (conventions: a doc.go per package).
func TestEveryPackageHasDocGo(t *testing.T) {
	root := filepath.Join("..", "..")
	var missing []string
	err := filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if !d.IsDir() {
			return nil
		}
		if path != root && (strings.HasPrefix(d.Name(), ".") || d.Name() == "testdata" || d.Name() == "bin") {
			return filepath.SkipDir
		}
		code, err := filepath.Glob(filepath.Join(path, "*.go"))
		if err != nil {
			return err
		}
		code = slices.DeleteFunc(code, func(f string) bool { return strings.HasSuffix(f, "_test.go") })
		if len(code) == 0 {
			return nil
		}
		if !slices.Contains(code, filepath.Join(path, "doc.go")) {
			missing = append(missing, path)
			return nil
		}
		f, err := parser.ParseFile(token.NewFileSet(), filepath.Join(path, "doc.go"), nil, parser.PackageClauseOnly|parser.ParseComments)
		if err != nil {
			return err
		}
		if f.Doc == nil || strings.TrimSpace(f.Doc.Text()) == "" {
			missing = append(missing, path+" (doc.go without a package comment)")
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if len(missing) > 0 {
		t.Fatalf("packages without a doc.go:\n%s", strings.Join(missing, "\n"))
	}
}
