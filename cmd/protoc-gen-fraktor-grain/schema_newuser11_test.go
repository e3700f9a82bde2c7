package main

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

// buildPlugins builds protoc-gen-go (the module's version) and this
// plugin into a directory and returns it, for the tests that run the real
// protoc with both, as `make generate` does.
func buildPlugins(t *testing.T) string {
	t.Helper()
	protocPath(t)
	dir := t.TempDir()
	for _, pkg := range []string{"google.golang.org/protobuf/cmd/protoc-gen-go", "."} {
		cmd := exec.Command("go", "build", "-o", dir+string(filepath.Separator), pkg)
		if b, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("go build %s: %v\n%s", pkg, err, b)
		}
	}
	return dir
}

// protocGen runs the real protoc on files (paths under the include root
// src) with protoc-gen-go (goOpt) and this plugin (grainOpt) from bin,
// into a new directory. It returns the files written there by their
// slash-separated path, or protoc's output when it failed.
func protocGen(t *testing.T, bin, src, goOpt, grainOpt string, files ...string) (map[string]string, string) {
	t.Helper()
	out := t.TempDir()
	args := append([]string{"-I", src, "--go_out=" + out, "--go_opt=" + goOpt,
		"--fraktor-grain_out=" + out, "--fraktor-grain_opt=" + grainOpt}, files...)
	cmd := exec.Command(protocPath(t), args...)
	cmd.Env = append(os.Environ(), "PATH="+bin+string(os.PathListSeparator)+os.Getenv("PATH"))
	if b, err := cmd.CombinedOutput(); err != nil {
		return nil, string(b)
	}
	got := map[string]string{}
	err := filepath.WalkDir(out, func(path string, d os.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		b, err := os.ReadFile(path)
		rel, _ := filepath.Rel(out, path)
		got[filepath.ToSlash(rel)] = string(b)
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	return got, ""
}

// writeProtos writes protos (name → content) under a new directory and
// returns it and the names, sorted as given.
func writeProtos(t *testing.T, protos map[string]string) (string, []string) {
	t.Helper()
	dir := t.TempDir()
	var names []string
	for name, content := range protos {
		names = append(names, name)
		if err := os.MkdirAll(filepath.Join(dir, filepath.Dir(name)), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, name), []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return dir, names
}

// schemaProtos are the .proto files of examples/typedschema, a team's
// multi-file schema.
var schemaProtos = []string{
	"examples/typedschema/common/v1/common.proto",
	"examples/typedschema/legacy/legacy.proto",
	"examples/typedschema/orders/v1/admin.proto",
	"examples/typedschema/orders/v1/orders.proto",
	"examples/typedschema/type/type.proto",
}

// TestSchemaGenerationModes: the real protoc with both plugins writes the
// same code for examples/typedschema in the three output modes (protogen's
// paths=source_relative, which make generate uses; the default import-path
// mode; module=), only in other places, and that code is the code checked
// in.
func TestSchemaGenerationModes(t *testing.T) {
	bin := buildPlugins(t)
	const module = "github.com/fraktor-go/fraktor"
	for _, mode := range []struct{ opt, prefix string }{
		{"paths=source_relative", ""},
		{"paths=import", module + "/"},
		{"module=" + module, ""},
	} {
		t.Run(mode.opt, func(t *testing.T) {
			got, errText := protocGen(t, bin, repoRoot, mode.opt, mode.opt, schemaProtos...)
			if errText != "" {
				t.Fatal(errText)
			}
			var want []string
			for _, p := range schemaProtos {
				base := strings.TrimSuffix(p, ".proto")
				want = append(want, base+".pb.go")
				if !strings.HasSuffix(p, "common.proto") { // the file without services
					want = append(want, base+fileSuffix)
				}
			}
			if len(got) != len(want) {
				t.Fatalf("generated %v, want %v", keys(got), want)
			}
			for _, name := range want {
				content, ok := got[mode.prefix+name]
				if !ok {
					t.Fatalf("%s not generated; got %v", mode.prefix+name, keys(got))
				}
				file, err := os.ReadFile(filepath.Join(repoRoot, name))
				if err != nil {
					t.Fatal(err)
				}
				if !bytes.Equal(file, []byte(content)) {
					t.Errorf("%s differs from the checked-in file (make generate):\n%s", name, firstDiff(string(file), content))
				}
			}
		})
	}
}

// grpcLike declares in Go package tv1 what protoc-gen-go-grpc declares for
// a service Orders with a method Get (its names, not its code: the plugin
// is no dependency of this module): a team's gRPC code beside the
// messages, in the package of the go_package option, where that plugin
// always writes it.
const grpcLike = `package tv1

import "context"

type OrdersClient interface {
	Get(ctx context.Context, in *A) (*B, error)
}

func NewOrdersClient(cc any) OrdersClient { return nil }

type OrdersServer interface {
	Get(context.Context, *A) (*B, error)
}

type UnimplementedOrdersServer struct{}

func (UnimplementedOrdersServer) Get(context.Context, *A) (*B, error) { return nil, nil }

func RegisterOrdersServer(s any, srv OrdersServer) {}

const Orders_Get_FullMethodName = "/t.v1.Orders/Get"
`

// TestPackageSuffixBesideGRPC: with package_suffix=grain the grain code of
// a file of Go package tv1 goes to package tv1grain, in directory
// tv1grain/ below the file's output directory, so it builds beside the
// gRPC code of the same services, which protoc-gen-go-grpc writes into
// tv1 with the names XxxClient and NewXxxClient that this plugin's client
// has too. Before, the plugin had no such option (protoc failed with
// "unknown parameter"), and docs/typed-grains.md advised generating the
// gRPC code into another Go package, which protoc-gen-go-grpc cannot do.
func TestPackageSuffixBesideGRPC(t *testing.T) {
	bin := buildPlugins(t)
	src, files := writeProtos(t, map[string]string{
		"v1/a.proto": "syntax = \"proto3\";\npackage t.v1;\noption go_package = \"example.com/t/v1;tv1\";\n" +
			"import \"google/protobuf/empty.proto\";\nimport \"o/o.proto\";\n" +
			"message A {}\nmessage B {}\n// Orders is served by gRPC and as grains.\nservice Orders { rpc Get(A) returns (B); rpc Put(t.o.X) returns (google.protobuf.Empty); }\n",
		"v1/b.proto": "syntax = \"proto3\";\npackage t.v1;\noption go_package = \"example.com/t/v1;tv1\";\nimport \"v1/a.proto\";\nservice admin { rpc Get(A) returns (B); }\n",
		"o/o.proto":  "syntax = \"proto3\";\npackage t.o;\noption go_package = \"example.com/t/o\";\nmessage X {}\n",
	})
	const use = `package use

import (
	"github.com/fraktor-go/fraktor/cluster"

	"example.com/t/v1"
	"example.com/t/v1/tv1grain"
)

var (
	_ tv1.OrdersClient         = tv1.NewOrdersClient(nil)
	_ *tv1grain.OrdersClient   = tv1grain.NewOrdersClient((*cluster.Cluster)(nil), "id")
	_ tv1.OrdersServer         = tv1.UnimplementedOrdersServer{}
	_ func() cluster.Kind      = func() cluster.Kind { return tv1grain.AdminKind(nil) }
	_ tv1grain.OrdersGrain     = nil
	_                          = tv1grain.OrdersKindName
)
`
	for _, opt := range []string{"module=" + genModule, "paths=source_relative"} {
		t.Run(opt, func(t *testing.T) {
			gen, errText := protocGen(t, bin, src, opt, opt+",package_suffix=grain", files...)
			if errText != "" {
				t.Fatalf("protoc: %s", errText)
			}
			for _, name := range []string{"v1/tv1grain/a" + fileSuffix, "v1/tv1grain/b" + fileSuffix} {
				if !strings.Contains(gen[name], "\npackage tv1grain\n") {
					t.Fatalf("%s: no package tv1grain; generated %v", name, keys(gen))
				}
			}
			for _, want := range []string{
				"func NewOrdersClient(c *cluster.Cluster, id string) *OrdersClient",
				"Get(ctx cluster.GrainContext, req *v1.A) (*v1.B, error)",
				"Put(ctx cluster.GrainContext, req *o.X) (*emptypb.Empty, error)",
				`v1 "example.com/t/v1"`,
			} {
				if !strings.Contains(gen["v1/tv1grain/a"+fileSuffix], want) {
					t.Errorf("a%s lacks %q\n%s", fileSuffix, want, listing(gen))
				}
			}
			gen["v1/a_grpc.pb.go"] = grpcLike
			gen["use/use.go"] = use
			vetModule(t, gen)
		})
	}
}

// TestPackageSuffixRefused: a package_suffix that cannot end a Go
// package name, and an option the plugin does not know, fail the
// generation with an error naming the option.
func TestPackageSuffixRefused(t *testing.T) {
	bin := buildPlugins(t)
	src, files := writeProtos(t, map[string]string{
		"a.proto": "syntax = \"proto3\";\npackage t.v1;\noption go_package = \"example.com/t/v1;tv1\";\nmessage A {}\nservice S { rpc Get(A) returns (A); }\n",
	})
	for opt, want := range map[string]string{
		"package_suffix=-grain": `protoc-gen-fraktor-grain: package_suffix "-grain" cannot end a Go package name`,
		"package_suffix=a/b":    `protoc-gen-fraktor-grain: package_suffix "a/b" cannot end a Go package name`,
		"package_sufix=grain":   `protoc-gen-fraktor-grain: unknown option package_sufix`,
	} {
		_, errText := protocGen(t, bin, src, "paths=source_relative", "paths=source_relative,"+opt, files...)
		if !strings.Contains(errText, want) {
			t.Errorf("%s: protoc said %q, want %q", opt, errText, want)
		}
	}
	// Go package fo with the suffix r would be package for.
	src, files = writeProtos(t, map[string]string{
		"a.proto": "syntax = \"proto3\";\npackage t.v1;\noption go_package = \"example.com/t/fo\";\nmessage A {}\nservice S { rpc Get(A) returns (A); }\n",
	})
	_, errText := protocGen(t, bin, src, "paths=source_relative", "paths=source_relative,package_suffix=r", files...)
	const want = `protoc-gen-fraktor-grain: a.proto: package_suffix "r" makes its grain package name for a Go keyword`
	if !strings.Contains(errText, want) {
		t.Errorf("protoc said %q, want %q", errText, want)
	}
}

// TestRefusedOutputClash: the plugin's file for x.proto is
// x_fraktor.pb.go, which is also protoc-gen-go's file for x_fraktor.proto
// in the same directory. Before, the plugin wrote it, and protoc failed
// with a bare "x_fraktor.pb.go: Tried to write the same file twice." (or,
// with the two files generated by separate protoc runs, one overwrote the
// other); now the plugin refuses, naming both .proto files.
func TestRefusedOutputClash(t *testing.T) {
	src, files := writeProtos(t, map[string]string{
		"p/orders.proto":         "syntax = \"proto3\";\npackage t;\noption go_package = \"example.com/t/p\";\nmessage A {}\nservice S { rpc Get(A) returns (A); }\n",
		"p/orders_fraktor.proto": "syntax = \"proto3\";\npackage t;\noption go_package = \"example.com/t/p\";\nmessage B {}\n",
	})
	got, errText := run(t, src, files...)
	const want = "protoc-gen-fraktor-grain: p/orders.proto: its generated file p/orders_fraktor.pb.go would be protoc-gen-go's file of p/orders_fraktor.proto; rename one of them"
	if !strings.Contains(errText, want) {
		t.Fatalf("error %q, want %q", errText, want)
	}
	if len(got) != 0 {
		t.Fatalf("generated %v despite the error", keys(got))
	}
}

// TestCompilesRuntimeNames: methods named like what the runtime and the
// generated code use (Send, Kind, Init, Receive, Stop, Client, Identity,
// Context, Error, Grain, Dispatch, Register) and like the optional hooks
// (Activated, Deactivating, ReceiveMessage) build and vet. A grain with a
// method named like a hook cannot implement that hook (one Go method per
// name): docs/typed-grains.md says so.
func TestCompilesRuntimeNames(t *testing.T) {
	var msgs, rpcs strings.Builder
	for i, name := range []string{"Send", "Kind", "Init", "Receive", "Stop", "Client", "Identity", "Context", "Error",
		"Grain", "Dispatch", "Register", "Activated", "Deactivating", "ReceiveMessage", "send_message"} {
		msgs.WriteString("message M" + strconv.Itoa(i) + " {}\n")
		rpcs.WriteString("rpc " + name + "(M" + strconv.Itoa(i) + ") returns (M0);\n")
	}
	gen := compileProtos(t, map[string]string{
		"a.proto": "syntax = \"proto3\";\npackage t.v1;\noption go_package = \"example.com/t/v1;tv1\";\n" + msgs.String() +
			"service Orders {\n" + rpcs.String() + "}\n",
	})
	for _, want := range []string{
		"ReceiveMessage(ctx cluster.GrainContext, req *M14) (*M0, error)",
		"func (x *OrdersClient) SendMessage(ctx context.Context, req *M15) (*M0, error)",
	} {
		if !strings.Contains(gen["v1/a"+fileSuffix], want) {
			t.Errorf("generated code lacks %q\n%s", want, listing(gen))
		}
	}
}

// TestPackageSuffixNames: with package_suffix, a message named like a
// service's generated client (refused without it: TestRefused/message-clash)
// is in another Go package than the client, and both build; two services
// of the grain package whose generated names meet are still refused.
func TestPackageSuffixNames(t *testing.T) {
	bin := buildPlugins(t)
	const head = "syntax = \"proto3\";\npackage t.v1;\noption go_package = \"example.com/t/v1;tv1\";\nmessage A {}\n"
	src, files := writeProtos(t, map[string]string{
		"v1/a.proto": head + "message SClient {}\nservice S { rpc Get(A) returns (SClient); }\n",
	})
	gen, errText := protocGen(t, bin, src, "module="+genModule, "module="+genModule+",package_suffix=grain", files...)
	if errText != "" {
		t.Fatal(errText)
	}
	if !strings.Contains(gen["v1/tv1grain/a"+fileSuffix], "func (x *SClient) Get(ctx context.Context, req *v1.A) (*v1.SClient, error)") {
		t.Fatalf("generated:\n%s", listing(gen))
	}
	vetModule(t, gen)

	src, files = writeProtos(t, map[string]string{
		"v1/a.proto": head + "service S { rpc Get(A) returns (A); }\n",
		"v1/b.proto": "syntax = \"proto3\";\npackage t.v1;\noption go_package = \"example.com/t/v1;tv1\";\nimport \"v1/a.proto\";\nservice s { rpc Get(A) returns (A); }\n",
	})
	_, errText = protocGen(t, bin, src, "module="+genModule, "module="+genModule+",package_suffix=grain", files...)
	const want = `its generated SKindName would clash with the generated code of service t.v1.S in Go package "example.com/t/v1/tv1grain"`
	if !strings.Contains(errText, want) {
		t.Fatalf("protoc said %q, want %q", errText, want)
	}
}
