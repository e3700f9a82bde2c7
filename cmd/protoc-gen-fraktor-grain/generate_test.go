package main

import (
	"bytes"
	"flag"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"google.golang.org/protobuf/compiler/protogen"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/types/descriptorpb"
	"google.golang.org/protobuf/types/pluginpb"
)

var update = flag.Bool("update", false, "rewrite the golden files (the generated files under internal/testpb)")

// repoRoot is the module's root, where the .proto paths start.
const repoRoot = "../.."

// protocPath finds protoc; CI installs it (make protoc), so there a missing
// protoc fails the test (FRAKTOR_REQUIRE_PROTOC=1).
func protocPath(t *testing.T) string {
	t.Helper()
	p, err := exec.LookPath("protoc")
	if err != nil {
		if os.Getenv("FRAKTOR_REQUIRE_PROTOC") == "1" {
			t.Fatalf("protoc not found: %v (make protoc installs it)", err)
		}
		t.Skipf("protoc not found (make protoc installs it): %v", err)
	}
	return p
}

// descriptors compiles files (paths under dir, the include root) with the
// real protoc into a descriptor set, imports and source info included, and
// returns its files.
func descriptors(t *testing.T, dir string, files []string) []*descriptorpb.FileDescriptorProto {
	t.Helper()
	out := filepath.Join(t.TempDir(), "set.pb")
	args := append([]string{"-I", dir, "--include_imports", "--include_source_info", "-o", out}, files...)
	if b, err := exec.Command(protocPath(t), args...).CombinedOutput(); err != nil {
		t.Fatalf("protoc %v: %v\n%s", args, err, b)
	}
	raw, err := os.ReadFile(out)
	if err != nil {
		t.Fatal(err)
	}
	var set descriptorpb.FileDescriptorSet
	if err := proto.Unmarshal(raw, &set); err != nil {
		t.Fatal(err)
	}
	return set.File
}

// run compiles files (paths under dir, which is the include root) with the
// real protoc into a descriptor set and runs the generator on it in
// process, as protoc would run the plugin. It returns the generated files
// by name, or the generator's error.
func run(t *testing.T, dir string, files ...string) (map[string]string, string) {
	t.Helper()
	req := &pluginpb.CodeGeneratorRequest{
		FileToGenerate: files,
		Parameter:      proto.String("paths=source_relative"),
		ProtoFile:      descriptors(t, dir, files),
	}
	plugin, err := protogen.Options{}.New(req)
	if err != nil {
		t.Fatal(err)
	}
	if err := generate(plugin); err != nil {
		return nil, err.Error()
	}
	resp := plugin.Response()
	if resp.Error != nil {
		return nil, resp.GetError()
	}
	got := map[string]string{}
	for _, f := range resp.File {
		got[f.GetName()] = f.GetContent()
	}
	return got, ""
}

// TestGolden generates the test services of internal/testpb (imports across
// files and packages, well-known types, several services per file, nested
// messages, Go keywords as names, comments, a deprecated service, a
// service without methods) and compares with the generated files in the
// repository, which the build compiles and the cluster tests run.
func TestGolden(t *testing.T) {
	cases := []struct {
		name  string
		files []string
		want  []string
	}{
		{"imports-wkt-comments", []string{"internal/testpb/shop/v1/account.proto"}, []string{"internal/testpb/shop/v1/account_fraktor.pb.go"}},
		{"two-services-same-package-import", []string{"internal/testpb/shop/v1/audit.proto"}, []string{"internal/testpb/shop/v1/audit_fraktor.pb.go"}},
		{"keywords-empty-service", []string{"internal/testpb/keywords/keywords.proto"}, []string{"internal/testpb/keywords/keywords_fraktor.pb.go"}},
		{"no-services", []string{"internal/testpb/common/v1/money.proto"}, nil},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			got, errText := run(t, repoRoot, tc.files...)
			if errText != "" {
				t.Fatalf("generate: %s", errText)
			}
			if len(got) != len(tc.want) {
				t.Fatalf("generated %d files, want %d: %v", len(got), len(tc.want), keys(got))
			}
			for _, name := range tc.want {
				content, ok := got[name]
				if !ok {
					t.Fatalf("%s not generated; got %v", name, keys(got))
				}
				path := filepath.Join(repoRoot, name)
				if *update {
					if err := os.WriteFile(path, []byte(content), 0o644); err != nil {
						t.Fatal(err)
					}
					continue
				}
				want, err := os.ReadFile(path)
				if err != nil {
					t.Fatal(err)
				}
				if !bytes.Equal(want, []byte(content)) {
					t.Errorf("%s differs from the generator's output (run go test -update, or make generate):\n%s", name, firstDiff(string(want), content))
				}
			}
		})
	}
}

// TestGoldenContent checks the points of the golden files that matter
// (so a golden file regenerated wrong cannot pass unnoticed).
func TestGoldenContent(t *testing.T) {
	got, errText := run(t, repoRoot, "internal/testpb/shop/v1/account.proto", "internal/testpb/shop/v1/audit.proto", "internal/testpb/keywords/keywords.proto")
	if errText != "" {
		t.Fatal(errText)
	}
	account := got["internal/testpb/shop/v1/account_fraktor.pb.go"]
	audit := got["internal/testpb/shop/v1/audit_fraktor.pb.go"]
	kw := got["internal/testpb/keywords/keywords_fraktor.pb.go"]
	for _, want := range []string{
		"Deposit(ctx cluster.GrainContext, req *DepositRequest) (*Balance, error)",
		"GetBalance(ctx cluster.GrainContext, req *emptypb.Empty) (*Balance, error)",
		`emptypb "google.golang.org/protobuf/types/known/emptypb"`,
		"func AccountKind(newGrain func(cluster.Identity) AccountGrain, opts ...cluster.KindOption) cluster.Kind",
		"func NewAccountClient(c *cluster.Cluster, id string) *AccountClient",
		"func (x *AccountClient) Deposit(ctx context.Context, req *DepositRequest) (*Balance, error)",
		"func (x *AccountClient) DepositFuture(req *DepositRequest, timeout time.Duration) *actor.Future",
		`const AccountKindName = "fraktor.test.shop.v1.Account"`,
		"// Account keeps one balance.\n//\n// Deposits are applied in arrival order.",
		"\t// Withdraw takes an amount; it fails with code \"insufficient_funds\" when\n\t// the balance is smaller.\n\tWithdraw(",
	} {
		if !strings.Contains(account, want) {
			t.Errorf("account_fraktor.pb.go lacks %q", want)
		}
	}
	for _, want := range []string{
		"Record(ctx cluster.GrainContext, req *Balance) (*wrapperspb.Int64Value, error)",
		"Last(ctx cluster.GrainContext, req *wrapperspb.StringValue) (*Balance_Entry, error)",
		"type AuditorGrain interface", "type LedgerGrain interface",
		"// Deprecated: Do not use.\ntype LedgerGrain interface",
	} {
		if !strings.Contains(audit, want) {
			t.Errorf("audit_fraktor.pb.go lacks %q", want)
		}
	}
	for _, want := range []string{
		"package keywords",
		"Go(ctx cluster.GrainContext, req *Chan) (*Interface, error)",
		"Range(ctx cluster.GrainContext, req *ChanSelect) (*Chan, error)",
		"Context(ctx cluster.GrainContext, req *Interface) (*ChanSelect, error)",
		"type StructGrain interface",
	} {
		if !strings.Contains(kw, want) {
			t.Errorf("keywords_fraktor.pb.go lacks %q", want)
		}
	}
}

// TestRefused: what a grain cannot serve fails the generation with an error
// naming the method, and nothing is generated.
func TestRefused(t *testing.T) {
	cases := []struct{ name, body, want string }{
		{"server-streaming", "service S { rpc Watch(A) returns (stream B); }", "t.v1.S.Watch: streaming methods are not supported"},
		{"client-streaming", "service S { rpc Upload(stream A) returns (B); }", "t.v1.S.Upload: streaming methods are not supported"},
		{"bidi-streaming", "service S { rpc Chat(stream A) returns (stream B); }", "t.v1.S.Chat: streaming methods are not supported"},
		{"shared-request", "service S { rpc Get(A) returns (B); rpc Reset(A) returns (B); }", "t.v1.S.Get and t.v1.S.Reset both take t.v1.A"},
		{"same-go-name", "service S { rpc get_b(A) returns (B); rpc GetB(B) returns (A); }", "t.v1.S.get_b and t.v1.S.GetB have the same Go name GetB"},
		{"same-go-name-case", "service S { rpc getB(A) returns (B); rpc GetB(B) returns (A); }", "t.v1.S.getB and t.v1.S.GetB have the same Go name GetB"},
		{"vet-std-method", "service S { rpc MarshalJSON(A) returns (B); }", "t.v1.S.MarshalJSON: go vet requires a method named MarshalJSON"},
		{"future-clash", "service S { rpc Get(A) returns (B); rpc GetFuture(B) returns (A); }", "t.v1.S.Get: its client's GetFuture would clash"},
		{"message-clash", "message SClient {}\nservice S { rpc Get(A) returns (B); }", "t.v1.S: its generated SClient would clash with message t.v1.SClient in Go package \"example.com/t/v1\""},
		{"oneof-clash", "message Z { oneof o { A s_client = 1; } }\nservice Z_S { rpc Get(A) returns (B); }", "t.v1.Z_S: its generated Z_SClient would clash with oneof field t.v1.Z.s_client"},
		{"enum-clash", "enum SKind { SKIND_UNSPECIFIED = 0; }\nservice S { rpc Get(A) returns (B); }", "t.v1.S: its generated SKind would clash with enum t.v1.SKind"},
		{"service-clash", "service fine { rpc Get(A) returns (B); }", "t.v1.fine: its generated FineKindName would clash with the generated code of service t.v1.Fine"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			src := "syntax = \"proto3\";\npackage t.v1;\noption go_package = \"example.com/t/v1;tv1\";\nmessage A {}\nmessage B {}\n" +
				"service Fine { rpc Do(A) returns (B); }\n" + tc.body + "\n"
			if err := os.WriteFile(filepath.Join(dir, "t.proto"), []byte(src), 0o644); err != nil {
				t.Fatal(err)
			}
			got, errText := run(t, dir, "t.proto")
			if !strings.Contains(errText, tc.want) || !strings.HasPrefix(errText, "protoc-gen-fraktor-grain: ") {
				t.Fatalf("error %q, want one containing %q", errText, tc.want)
			}
			if len(got) != 0 {
				t.Fatalf("generated %v despite the error", keys(got))
			}
		})
	}
}

// TestRefusedPublicImportClash: a service whose generated name clashes
// with a name protoc-gen-go forwards into its package from a public import
// (type SClient = other.SClient) is refused like one that clashes with the
// package's own message; before, the plugin generated a second SClient and
// the package did not compile.
func TestRefusedPublicImportClash(t *testing.T) {
	dir := t.TempDir()
	const head = "syntax = \"proto3\";\n"
	for name, src := range map[string]string{
		"other/o.proto": head + "package t.o;\noption go_package = \"example.com/t/other\";\nmessage SClient {}\n",
		"a.proto": head + "package t.v1;\noption go_package = \"example.com/t/v1;tv1\";\nimport public \"other/o.proto\";\n" +
			"message A {}\nmessage B {}\nservice S { rpc Get(A) returns (B); }\n",
	} {
		if err := os.MkdirAll(filepath.Join(dir, filepath.Dir(name)), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, name), []byte(src), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	got, errText := run(t, dir, "a.proto")
	const want = "t.v1.S: its generated SClient would clash with message t.o.SClient (forwarded by the public import of other/o.proto in a.proto)"
	if !strings.Contains(errText, want) {
		t.Fatalf("error %q, want one containing %q", errText, want)
	}
	if len(got) != 0 {
		t.Fatalf("generated %v despite the error", keys(got))
	}
}

func keys(m map[string]string) []string {
	var out []string
	for k := range m {
		out = append(out, k)
	}
	return out
}

// firstDiff shows the first line where want and got differ.
func firstDiff(want, got string) string {
	w, g := strings.Split(want, "\n"), strings.Split(got, "\n")
	for i := 0; i < len(w) || i < len(g); i++ {
		var a, b string
		if i < len(w) {
			a = w[i]
		}
		if i < len(g) {
			b = g[i]
		}
		if a != b {
			return "line " + strconv.Itoa(i+1) + ":\n  file:      " + a + "\n  generator: " + b
		}
	}
	return "(same lines; different line endings)"
}
