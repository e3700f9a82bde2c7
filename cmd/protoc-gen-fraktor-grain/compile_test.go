package main

import (
	"go/build/constraint"
	"go/format"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	gengo "google.golang.org/protobuf/cmd/protoc-gen-go/internal_gengo"
	"google.golang.org/protobuf/compiler/protogen"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/types/pluginpb"
)

// genModule is the module path of the .proto files compileProtos builds:
// their go_package must start with it.
const genModule = "example.com/t"

// compileProtos writes protos (name → content) into a directory, generates
// them with protoc-gen-go and this plugin (in process, as protoc would run
// both), and vets the output as a Go module in a workspace with this
// repository, so that it compiles against the cluster package as it is. It
// returns the generated files by name, and fails the test when the plugin
// refuses the input or the output does not build or vet.
func compileProtos(t *testing.T, protos map[string]string) map[string]string {
	t.Helper()
	src := t.TempDir()
	var files []string
	for name, content := range protos {
		files = append(files, name)
		if err := os.MkdirAll(filepath.Join(src, filepath.Dir(name)), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(src, name), []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	req := &pluginpb.CodeGeneratorRequest{
		FileToGenerate: files,
		Parameter:      proto.String("module=" + genModule),
		ProtoFile:      descriptors(t, src, files),
	}
	gen := map[string]string{}
	for _, plugin := range []func(*protogen.Plugin) error{
		func(p *protogen.Plugin) error {
			for _, f := range p.Files {
				if f.Generate {
					gengo.GenerateFile(p, f)
				}
			}
			p.SupportedFeatures = gengo.SupportedFeatures
			return nil
		},
		generate,
	} {
		p, err := protogen.Options{}.New(req)
		if err != nil {
			t.Fatal(err)
		}
		if err := plugin(p); err != nil {
			t.Fatalf("generate: %v", err)
		}
		resp := p.Response()
		if resp.Error != nil {
			t.Fatalf("generate: %s", resp.GetError())
		}
		for _, f := range resp.File {
			gen[f.GetName()] = f.GetContent()
		}
	}

	for name, content := range gen {
		if f, err := format.Source([]byte(content)); err != nil || string(f) != content {
			t.Fatalf("%s is not gofmt'd (%v)\n%s", name, err, listing(gen))
		}
		for _, line := range strings.Split(content, "\n") {
			if strings.HasPrefix(line, "package ") {
				break
			}
			if constraint.IsGoBuild(line) || constraint.IsPlusBuild(line) {
				t.Fatalf("%s has the build constraint %q: it may leave the build\n%s", name, line, listing(gen))
			}
		}
	}
	vetModule(t, gen)
	return gen
}

// vetModule writes files (name → content, paths under genModule) into a
// Go module in a workspace with this repository and vets it, failing the
// test when it does not build or vet.
func vetModule(t *testing.T, gen map[string]string) {
	t.Helper()
	mod := t.TempDir()
	for name, content := range gen {
		if err := os.MkdirAll(filepath.Join(mod, filepath.Dir(name)), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(mod, name), []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	root, err := filepath.Abs(repoRoot)
	if err != nil {
		t.Fatal(err)
	}
	write := func(name, content string) {
		if err := os.WriteFile(filepath.Join(mod, name), []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write("go.mod", "module "+genModule+"\n\ngo 1.25.0\n")
	write("go.work", "go 1.25.0\n\nuse (\n\t.\n\t"+root+"\n)\n")
	cmd := exec.Command("go", "vet", "./...")
	cmd.Dir = mod
	cmd.Env = append(os.Environ(), "GOWORK="+filepath.Join(mod, "go.work"), "GOPROXY=off", "GOFLAGS=-buildvcs=false")
	if b, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("go vet of the generated code: %v\n%s\n%s", err, b, listing(gen))
	}
}

// listing shows the generated files of this plugin with line numbers, for a
// failure message.
func listing(gen map[string]string) string {
	var b strings.Builder
	for name, content := range gen {
		if !strings.HasSuffix(name, fileSuffix) {
			continue
		}
		b.WriteString("== " + name + "\n")
		for i, line := range strings.Split(content, "\n") {
			b.WriteString(strings.Repeat(" ", 4-len(strconv.Itoa(i+1))) + strconv.Itoa(i+1) + "  " + line + "\n")
		}
	}
	return b.String()
}

// TestCompiles: .proto inputs the plugin accepts produce code that builds
// and vets.
func TestCompiles(t *testing.T) {
	const head = "syntax = \"proto3\";\n"
	cases := []struct {
		name   string
		protos map[string]string
	}{
		{"baseline", map[string]string{
			"a.proto": head + "package t.v1;\noption go_package = \"example.com/t/v1;tv1\";\nmessage A {}\nmessage B {}\nservice S { rpc Get(A) returns (B); }\n",
		}},
		// Messages of Go packages named like the generated functions'
		// parameters and variables (msg, ctx, req, reply, err, s, x, and
		// msg_ for the name the generator falls back to; context, time and actor,
		// which protogen makes the runtime packages give way to).
		{"imports-named-like-locals", func() map[string]string {
			m := map[string]string{}
			imports, rpcs := "", ""
			for i, pkg := range []string{"msg", "ctx", "req", "reply", "err", "s", "x", "msg_", "context", "time", "actor"} {
				m[pkg+"/m.proto"] = head + "package t." + pkg + ";\noption go_package = \"example.com/t/" + pkg + "\";\nmessage A {}\nmessage B {}\n"
				imports += "import \"" + pkg + "/m.proto\";\n"
				rpcs += "rpc In" + strconv.Itoa(i) + "(t." + pkg + ".A) returns (B); rpc Out" + strconv.Itoa(i) + "(A" + strconv.Itoa(i) + ") returns (t." + pkg + ".B);\n"
				m["a.proto"] += "message A" + strconv.Itoa(i) + " {}\n"
			}
			m["a.proto"] = head + "package t.v1;\noption go_package = \"example.com/t/v1;tv1\";\n" + imports + "message B {}\n" + m["a.proto"] +
				"service S {\n" + rpcs + "}\n"
			return m
		}()},
		{"import-named-cluster", map[string]string{
			"cluster/m.proto": head + "package t.cluster;\noption go_package = \"example.com/t/cluster\";\nmessage A {}\nmessage B {}\n",
			"a.proto":         head + "package t.v1;\noption go_package = \"example.com/t/v1;tv1\";\nimport \"cluster/m.proto\";\nservice S { rpc Get(t.cluster.A) returns (t.cluster.B); }\n",
		}},
		{"empty-service-and-odd-comments", map[string]string{
			"a.proto": head + "package t.v1;\noption go_package = \"example.com/t/v1;tv1\";\nmessage A {}\nmessage B {}\n// S has */ and /* and `back` \"quotes\" and \\ and ünïcödé.\n//go:generate echo hi\nservice S {}\n/* T\n * block */\nservice T { /* x */ rpc Get(A) returns (B); }\n",
		}},
		{"wkt-shared-two-services-alias-nested", map[string]string{
			"o/o.proto": head + "package t.o;\noption go_package = \"example.com/t/other;otherpb\";\nmessage Out { message In {} }\n",
			"a.proto": head + "package t.v1;\noption go_package = \"example.com/t/v1;tv1\";\nimport \"google/protobuf/empty.proto\";\nimport \"google/protobuf/any.proto\";\nimport \"google/protobuf/struct.proto\";\nimport \"o/o.proto\";\n" +
				"message A {}\nmessage S {}\n" +
				"service R { option deprecated = true; rpc Get(google.protobuf.Empty) returns (google.protobuf.Any) { option deprecated = true; } rpc Put(t.o.Out.In) returns (google.protobuf.Empty); rpc V(google.protobuf.Value) returns (google.protobuf.Struct); }\n" +
				"service Q { rpc Get(google.protobuf.Empty) returns (t.o.Out); rpc Echo(A) returns (A); }\n",
		}},
		// Services in Go packages named like the runtime's imports;
		// messages of Go packages named like predeclared identifiers the
		// generated code uses (any, error, new, nil); requests and
		// replies with proto3 optional fields, oneofs, maps and nested
		// messages.
		{"package-names-and-shapes", func() map[string]string {
			m := map[string]string{}
			for _, own := range []string{"cluster", "context", "actor", "proto", "time"} {
				m[own+"/s.proto"] = head + "package t.own." + own + ";\noption go_package = \"example.com/t/" + own + ";" + own + "\";\nmessage A {}\nmessage B {}\nservice S { rpc Get(A) returns (B); }\n"
			}
			imports, rpcs := "", ""
			for i, pkg := range []string{"any", "error", "new", "nil"} {
				n := strconv.Itoa(i)
				m["p"+n+"/m.proto"] = head + "package t.p" + n + ";\noption go_package = \"example.com/t/" + pkg + "\";\nmessage A {}\nmessage B {}\n"
				imports += "import \"p" + n + "/m.proto\";\n"
				rpcs += "rpc In" + n + "(t.p" + n + ".A) returns (t.p" + n + ".B);\n"
			}
			m["a.proto"] = head + "package t.v1;\noption go_package = \"example.com/t/v1;tv1\";\n" + imports +
				"message A { optional int32 x = 1; oneof o { string s = 2; int64 i = 3; } map<string, A> m = 4; message N { oneof p { A a = 1; } } N n = 5; }\n" +
				"message B { message C { map<int32, string> m = 1; optional string y = 2; } }\n" +
				"service S {\n" + rpcs + "rpc Get(A) returns (B.C); rpc Put(A.N) returns (A); rpc Q(B.C) returns (A.N);\n}\n"
			return m
		}()},
		// A public import: protoc-gen-go forwards the imported file's
		// names into the package (type X = other.X), beside the
		// generated ones; the service takes the forwarded message.
		{"public-import", map[string]string{
			"o/o.proto": head + "package t.o;\noption go_package = \"example.com/t/other\";\nmessage X { oneof o { string s = 1; } }\nenum E { E0 = 0; }\n",
			"a.proto":   head + "package t.v1;\noption go_package = \"example.com/t/v1;tv1\";\nimport public \"o/o.proto\";\nmessage B {}\nservice S { rpc Get(t.o.X) returns (B); rpc Put(B) returns (t.o.X); }\n",
		}},
		// Methods named like the standard methods go vet checks
		// (fmt.Scanner's Scan, io.Seeker's Seek, errors' Is/As/Unwrap ...).
		// Methods named like standard methods go vet checks but accepts
		// with a grain method's signature (the others are refused:
		// TestRefused/vet-std-method).
		{"vet-std-method-names", map[string]string{
			"a.proto": head + "package t.v1;\noption go_package = \"example.com/t/v1;tv1\";\n" +
				"message A0 {}\nmessage A1 {}\nmessage A2 {}\nmessage A3 {}\nmessage A4 {}\nmessage A5 {}\nmessage A6 {}\nmessage A7 {}\nmessage A8 {}\nmessage A9 {}\nmessage A10 {}\nmessage B {}\n" +
				"service S { rpc Scan(A0) returns (B); rpc Seek(A1) returns (B); rpc Format(A2) returns (B); rpc Is(A3) returns (B); rpc As(A4) returns (B); rpc Unwrap(A5) returns (B); rpc WriteTo(A6) returns (B); rpc ReadFrom(A7) returns (B); rpc Peek(A8) returns (B); rpc String(A9) returns (B); rpc Error(A10) returns (B); }\n",
		}},
		// Comment lines Go would read as build constraints or directives:
		// the file would leave the build (one //go:build ignore), fail it
		// (two), or use //go:linkname without importing unsafe.
		{"directive-comments", map[string]string{
			"a.proto": head + "package t.v1;\noption go_package = \"example.com/t/v1;tv1\";\nmessage A {}\nmessage B {}\n" +
				"//go:build ignore\n// +build ignore\nservice S {\n//go:linkname x runtime.x\n//line a.go:1\nrpc Get(A) returns (B); }\n",
		}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			compileProtos(t, tc.protos)
		})
	}
}

// TestDeterministic: the same input gives the same output.
func TestDeterministic(t *testing.T) {
	files := []string{"internal/testpb/shop/v1/account.proto", "internal/testpb/shop/v1/audit.proto", "internal/testpb/keywords/keywords.proto"}
	first, errText := run(t, repoRoot, files...)
	if errText != "" {
		t.Fatal(errText)
	}
	for range 3 {
		again, errText := run(t, repoRoot, files...)
		if errText != "" {
			t.Fatal(errText)
		}
		if len(again) != len(first) {
			t.Fatalf("generated %v, then %v", keys(first), keys(again))
		}
		for name, content := range first {
			if again[name] != content {
				t.Fatalf("%s differs between two runs:\n%s", name, firstDiff(content, again[name]))
			}
		}
	}
}

// TestDeprecatedMethodParagraph: a deprecated method with a comment gets
// its "Deprecated:" note as a paragraph of its own in the grain interface
// (tools recognise it only there), as on the client's methods.
func TestDeprecatedMethodParagraph(t *testing.T) {
	gen := compileProtos(t, map[string]string{
		"a.proto": "syntax = \"proto3\";\npackage t.v1;\noption go_package = \"example.com/t/v1;tv1\";\nmessage A {}\nmessage B {}\n" +
			"service S {\n  // Get gets.\n  rpc Get(A) returns (B) { option deprecated = true; }\n  rpc Put(B) returns (A) { option deprecated = true; }\n}\n",
	})
	out := gen["v1/a"+fileSuffix]
	for _, want := range []string{
		"\t// Get gets.\n\t//\n\t// Deprecated: Do not use.\n\tGet(ctx cluster.GrainContext",
		"\t// Deprecated: Do not use.\n\tPut(ctx cluster.GrainContext",
		"// Get gets.\n//\n// Deprecated: Do not use.\nfunc (x *SClient) Get(",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("generated code lacks %q\n%s", want, listing(gen))
		}
	}
}
