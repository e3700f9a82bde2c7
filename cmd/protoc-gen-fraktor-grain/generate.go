package main

import (
	"fmt"
	"go/build/constraint"
	"strconv"
	"strings"
	"unicode"
	"unicode/utf8"

	"google.golang.org/protobuf/compiler/protogen"
	"google.golang.org/protobuf/types/descriptorpb"
	"google.golang.org/protobuf/types/pluginpb"
)

// The packages generated code refers to.
const (
	contextPkg = protogen.GoImportPath("context")
	timePkg    = protogen.GoImportPath("time")
	actorPkg   = protogen.GoImportPath("github.com/fraktor-go/fraktor/actor")
	clusterPkg = protogen.GoImportPath("github.com/fraktor-go/fraktor/cluster")
)

// fileSuffix ends the name of every generated file.
const fileSuffix = "_fraktor.pb.go"

// generate is generateWith without options.
func generate(gen *protogen.Plugin) error { return generateWith(gen, config{}) }

// generateWith writes the typed grain code of every file to generate that
// has services, after checking all of them (so a refused method produces
// no output at all).
func generateWith(gen *protogen.Plugin, cfg config) error {
	gen.SupportedFeatures = uint64(pluginpb.CodeGeneratorResponse_FEATURE_PROTO3_OPTIONAL)
	for _, f := range gen.Files {
		if !f.Generate {
			continue
		}
		for _, s := range f.Services {
			if err := check(s); err != nil {
				return err
			}
		}
	}
	if err := cfg.checkTargets(gen); err != nil {
		return err
	}
	if err := checkNames(gen, cfg); err != nil {
		return err
	}
	for _, f := range gen.Files {
		if f.Generate && len(f.Services) > 0 {
			generateFile(gen, f, cfg.target(f))
		}
	}
	return nil
}

// check refuses what a grain cannot serve.
func check(s *protogen.Service) error {
	byInput := map[string]*protogen.Method{}
	byName := map[string]*protogen.Method{}
	names := map[string]bool{}
	for _, m := range s.Methods {
		names[m.GoName] = true
	}
	for _, m := range s.Methods {
		full := m.Desc.FullName()
		// protoc tells get_balance, getBalance and GetBalance apart; their
		// Go names are all GetBalance, which the interface and the client
		// would declare twice.
		if prev, ok := byName[m.GoName]; ok {
			return fmt.Errorf("protoc-gen-fraktor-grain: %s and %s have the same Go name %s: rename one of them",
				prev.Desc.FullName(), full, m.GoName)
		}
		byName[m.GoName] = m
		if vetStdMethods[m.GoName] {
			return fmt.Errorf("protoc-gen-fraktor-grain: %s: go vet requires a method named %s to have the signature of the standard interface method (its stdmethods check); rename it",
				full, m.GoName)
		}
		if m.Desc.IsStreamingClient() || m.Desc.IsStreamingServer() {
			return fmt.Errorf("protoc-gen-fraktor-grain: %s: streaming methods are not supported (a grain method takes one request and returns one reply)", full)
		}
		in := string(m.Input.Desc.FullName())
		if prev, ok := byInput[in]; ok {
			return fmt.Errorf("protoc-gen-fraktor-grain: %s and %s both take %s: a grain dispatches on the request's type, give each method its own request message",
				prev.Desc.FullName(), full, in)
		}
		byInput[in] = m
		if names[m.GoName+"Future"] {
			return fmt.Errorf("protoc-gen-fraktor-grain: %s: its client's %sFuture would clash with method %sFuture", full, m.GoName, m.GoName)
		}
	}
	return nil
}

// vetStdMethods are the method names go vet's stdmethods check requires to
// have a standard library interface's signature (json.Marshaler's
// MarshalJSON() ([]byte, error), io.ByteReader's ReadByte() (byte,
// error), ...), which a grain method's (ctx, req) (reply, error) never
// has: the generated interface and client would fail go vet. The other
// names it checks (Scan, Seek, Format, Is, As, Unwrap, WriteTo, ReadFrom)
// it skips for these signatures (TestCompiles/vet-std-method-names vets
// them; go vet of Go 1.26 flagged each name of this list).
var vetStdMethods = map[string]bool{
	"GobDecode": true, "GobEncode": true, "MarshalJSON": true, "MarshalXML": true,
	"ReadByte": true, "ReadRune": true, "UnmarshalJSON": true, "UnmarshalXML": true,
	"UnreadByte": true, "UnreadRune": true, "WriteByte": true,
}

// serviceNames are the package-level identifiers genService declares for
// service s, as it names them.
func serviceNames(s *protogen.Service) []string {
	n := s.GoName
	return []string{n + "KindName", n + "Grain", n + "Kind", lowerFirst(n) + "Server",
		lowerFirst(n) + "Messages", n + "Client", "New" + n + "Client"}
}

// checkNames refuses a service whose generated identifiers would clash
// with another identifier of its Go package: what protoc-gen-go declares
// for the package's messages, enums, enum values, oneof wrappers,
// extensions and file descriptors (and for those of the files its files
// import publicly, which it forwards), or what this plugin declares for
// another service of the package (a service Account and a message
// AccountClient, or two services whose Go names are the same). The Go
// compiler would refuse the package anyway, with an error in generated
// code; this names the service and the .proto element instead. Every file
// protoc was given counts, generated in this run or not, since they share
// the package when they share the Go import path. With a package_suffix,
// a service's names are declared in its grain package (cfg.target), where
// only other services' names can meet them.
func checkNames(gen *protogen.Plugin, cfg config) error {
	declared := map[protogen.GoImportPath]map[string]string{}
	via := "" // while adding a publicly imported file's names: where they come from
	add := func(p protogen.GoImportPath, id, what string) {
		m := declared[p]
		if m == nil {
			m = map[string]string{}
			declared[p] = m
		}
		if _, ok := m[id]; !ok {
			m[id] = what + via
		}
	}
	var addEnum func(p protogen.GoImportPath, e *protogen.Enum)
	addEnum = func(p protogen.GoImportPath, e *protogen.Enum) {
		add(p, e.GoIdent.GoName, "enum "+string(e.Desc.FullName()))
		for _, v := range e.Values {
			add(p, v.GoIdent.GoName, "enum value "+string(v.Desc.FullName()))
		}
	}
	var addMessage func(p protogen.GoImportPath, m *protogen.Message)
	addMessage = func(p protogen.GoImportPath, m *protogen.Message) {
		if m.Desc.IsMapEntry() {
			return
		}
		add(p, m.GoIdent.GoName, "message "+string(m.Desc.FullName()))
		for _, f := range m.Fields {
			if f.Oneof != nil && !f.Oneof.Desc.IsSynthetic() {
				add(p, f.GoIdent.GoName, "oneof field "+string(f.Desc.FullName()))
			}
		}
		for _, e := range m.Enums {
			addEnum(p, e)
		}
		for _, x := range m.Extensions {
			add(p, x.GoIdent.GoName, "extension "+string(x.Desc.FullName()))
		}
		for _, n := range m.Messages {
			addMessage(p, n)
		}
	}
	// addFile declares in p what protoc-gen-go declares for f's elements.
	addFile := func(p protogen.GoImportPath, f *protogen.File) {
		for _, e := range f.Enums {
			addEnum(p, e)
		}
		for _, m := range f.Messages {
			addMessage(p, m)
		}
		for _, x := range f.Extensions {
			add(p, x.GoIdent.GoName, "extension "+string(x.Desc.FullName()))
		}
	}
	for _, f := range gen.Files {
		p := f.GoImportPath
		add(p, f.GoDescriptorIdent.GoName, "the descriptor of "+f.Desc.Path())
		addFile(p, f)
		// A public import of a file of another Go package makes
		// protoc-gen-go forward that file's names into this package
		// (type SClient = other.SClient), which clash as its own do.
		imports := f.Desc.Imports()
		for i := range imports.Len() {
			imp := imports.Get(i)
			if dep, ok := gen.FilesByPath[imp.Path()]; ok && imp.IsPublic && dep.GoImportPath != p {
				via = " (forwarded by the public import of " + dep.Desc.Path() + " in " + f.Desc.Path() + ")"
				addFile(p, dep)
				via = ""
			}
		}
	}
	for _, f := range gen.Files {
		p := cfg.target(f).path
		for _, s := range f.Services {
			for _, id := range serviceNames(s) {
				if what, ok := declared[p][id]; ok {
					return fmt.Errorf("protoc-gen-fraktor-grain: %s: its generated %s would clash with %s in Go package %s; rename one of them",
						s.Desc.FullName(), id, what, p)
				}
			}
			for _, id := range serviceNames(s) {
				add(p, id, "the generated code of service "+string(s.Desc.FullName()))
			}
		}
	}
	return nil
}

// generateFile writes the grain code of f's services to t.
func generateFile(gen *protogen.Plugin, f *protogen.File, t target) {
	g := gen.NewGeneratedFile(t.file, t.path)
	g.P("// Code generated by protoc-gen-fraktor-grain. DO NOT EDIT.")
	g.P("// source: ", f.Desc.Path())
	g.P()
	g.P("package ", t.pkg)
	for _, s := range f.Services {
		genService(g, s)
	}
}

// lowerFirst makes an unexported name of an exported one (AccountX →
// accountX).
func lowerFirst(s string) string {
	r, n := utf8.DecodeRuneInString(s)
	return string(unicode.ToLower(r)) + s[n:]
}

// comments writes c (a leading comment of the .proto) as Go comment
// lines, after a blank comment line when something precedes it.
func comments(g *protogen.GeneratedFile, c protogen.Comments, separate bool) {
	text := strings.TrimRight(c.String(), "\n")
	if text == "" {
		return
	}
	if separate {
		g.P("//")
	}
	for _, line := range strings.Split(text, "\n") {
		g.P(undirect(line))
	}
}

// undirect returns the comment line line so that Go does not read it as a
// directive or a build constraint. A .proto comment "//go:build ignore"
// would otherwise become a build constraint of the generated file (gofmt,
// which protogen runs, moves such lines above the package clause: the
// file would leave the build, or fail it as a second constraint), and
// "//go:linkname ..." a directive the compiler refuses. A directive gets a
// space after the slashes; a "+build" line, which Go reads with or without
// it, is quoted.
func undirect(line string) string {
	switch {
	case constraint.IsPlusBuild(line):
		return "// " + strconv.Quote(strings.TrimSpace(line[2:]))
	case isDirective(line):
		return "// " + line[2:]
	}
	return line
}

// isDirective reports whether the comment line is a Go directive:
// //line, //extern, //export, or //word:word (//go:build, //go:linkname).
func isDirective(line string) bool {
	c, ok := strings.CutPrefix(line, "//")
	if !ok {
		return false
	}
	for _, p := range []string{"line ", "extern ", "export "} {
		if strings.HasPrefix(c, p) {
			return true
		}
	}
	colon := strings.IndexByte(c, ':')
	if colon <= 0 || colon+1 >= len(c) {
		return false
	}
	for _, r := range c[:colon+2] {
		if r != ':' && (r < 'a' || r > 'z') && (r < '0' || r > '9') {
			return false
		}
	}
	return strings.Count(c[:colon+2], ":") == 1
}

func deprecatedService(s *protogen.Service) bool {
	o, ok := s.Desc.Options().(*descriptorpb.ServiceOptions)
	return ok && o.GetDeprecated()
}

func deprecatedMethod(m *protogen.Method) bool {
	o, ok := m.Desc.Options().(*descriptorpb.MethodOptions)
	return ok && o.GetDeprecated()
}

func deprecation(g *protogen.GeneratedFile, yes bool) {
	if yes {
		g.P("//")
		g.P("// Deprecated: Do not use.")
	}
}

// locals are the names of the parameters and variables of the functions
// genService writes whose bodies refer to the service's messages.
type locals struct{ s, ctx, msg, req, reply, err, x string }

// localNames returns the names genService gives its parameters and
// variables in g for service s. A message of another Go package is
// written pkg.Name, and the package's name in the file is the last element
// of its import path: a parameter or variable of the same name (messages
// of example.com/api/msg, and Dispatch's msg) would hide the package in
// the function's body, which would not compile. A name that a package of
// the service's messages has is given trailing underscores until it is
// free; the runtime's packages, which protogen renames to context1,
// cluster1 and so on, cannot clash.
func localNames(g *protogen.GeneratedFile, s *protogen.Service) locals {
	// The cluster package first, as genService's first use does, so the
	// packages keep the names they had.
	g.QualifiedGoIdent(protogen.GoIdent{GoName: "GrainContext", GoImportPath: clusterPkg})
	pkgs := map[string]bool{}
	for _, m := range s.Methods {
		for _, msg := range []*protogen.Message{m.Input, m.Output} {
			if q := g.QualifiedGoIdent(msg.GoIdent); strings.Contains(q, ".") {
				pkgs[q[:strings.LastIndexByte(q, '.')]] = true
			}
		}
	}
	free := func(name string) string {
		for pkgs[name] {
			name += "_"
		}
		return name
	}
	return locals{s: free("s"), ctx: free("ctx"), msg: free("msg"), req: free("req"), reply: free("reply"), err: free("err"), x: free("x")}
}

func genService(g *protogen.GeneratedFile, s *protogen.Service) {
	name := s.GoName
	full := string(s.Desc.FullName())
	kindName := name + "KindName"
	grainIface := name + "Grain"
	server := lowerFirst(name) + "Server"
	msgsVar := lowerFirst(name) + "Messages"
	client := name + "Client"
	q := func(p protogen.GoImportPath, id string) string {
		return g.QualifiedGoIdent(protogen.GoIdent{GoName: id, GoImportPath: p})
	}
	depr := deprecatedService(s)
	v := localNames(g, s)

	g.P()
	g.P("// ", kindName, " is the kind name of the grains of service ", full, ".")
	g.P("const ", kindName, " = ", fmt.Sprintf("%q", full))

	// The server interface.
	g.P()
	g.P("// ", grainIface, " is implemented by the grains of service ", full, ".")
	comments(g, s.Comments.Leading, true)
	g.P("//")
	g.P("// Each method runs on the grain's activation, one call at a time; an error")
	g.P("// it returns reaches the caller as a *cluster.GrainError (return one made")
	g.P("// with cluster.NewGrainError to choose the code). A grain may also")
	g.P("// implement cluster.GrainActivated, cluster.GrainDeactivating and")
	g.P("// cluster.GrainMessageReceiver.")
	deprecation(g, depr)
	g.P("type ", grainIface, " interface {")
	for _, m := range s.Methods {
		comments(g, m.Comments.Leading, false)
		if deprecatedMethod(m) {
			// A paragraph of its own, after the method's comment: tools
			// (gopls, staticcheck) see "Deprecated:" only at the start of
			// one.
			if strings.TrimSpace(string(m.Comments.Leading)) != "" {
				g.P("//")
			}
			g.P("// Deprecated: Do not use.")
		}
		g.P(m.GoName, "(ctx ", q(clusterPkg, "GrainContext"), ", req *", g.QualifiedGoIdent(m.Input.GoIdent),
			") (*", g.QualifiedGoIdent(m.Output.GoIdent), ", error)")
	}
	g.P("}")

	// The kind.
	g.P()
	g.P("// ", name, "Kind returns the grain kind of service ", full, " (named ", kindName, "):")
	g.P("// newGrain makes the grain of an activation; opts are cluster.NewKind's.")
	g.P("// Install it in cluster.Config.Kinds of the members that host the grains;")
	g.P("// the service's messages are registered with their remote serializers.")
	deprecation(g, depr)
	g.P("func ", name, "Kind(newGrain func(", q(clusterPkg, "Identity"), ") ", grainIface, ", opts ...", q(clusterPkg, "KindOption"), ") ", q(clusterPkg, "Kind"), " {")
	g.P("return ", q(clusterPkg, "NewGrainKind"), "(", kindName, ", ", msgsVar, ", func(id ", q(clusterPkg, "Identity"), ") ", q(clusterPkg, "GrainServer"), " {")
	g.P("return ", server, "{grain: newGrain(id)}")
	g.P("}, opts...)")
	g.P("}")

	g.P()
	g.P("// ", server, " is the cluster.GrainServer of one ", full, " grain.")
	g.P("type ", server, " struct{ grain ", grainIface, " }")
	g.P()
	g.P("func (s ", server, ") Grain() any { return s.grain }")
	g.P()
	g.P("func (", v.s, " ", server, ") Dispatch(", v.ctx, " ", q(clusterPkg, "GrainContext"), ", ", v.msg, " any) (any, error) {")
	if len(s.Methods) > 0 {
		g.P("switch ", v.req, " := ", v.msg, ".(type) {")
		for _, m := range s.Methods {
			g.P("case *", g.QualifiedGoIdent(m.Input.GoIdent), ":")
			g.P(v.reply, ", ", v.err, " := ", v.s, ".grain.", m.GoName, "(", v.ctx, ", ", v.req, ")")
			g.P("if ", v.err, " != nil {")
			g.P("return nil, ", v.err)
			g.P("}")
			g.P("if ", v.reply, " == nil {")
			g.P(v.reply, " = new(", g.QualifiedGoIdent(m.Output.GoIdent), ")")
			g.P("}")
			g.P("return ", v.reply, ", nil")
		}
		g.P("}")
	}
	g.P("return nil, ", q(clusterPkg, "ErrUnknownRequest"))
	g.P("}")

	// The messages.
	g.P()
	g.P("// ", msgsVar, " are the requests and replies of service ", full, ".")
	g.P("var ", msgsVar, " = ", q(clusterPkg, "NewGrainMessages"), "(")
	seen := map[string]bool{}
	for _, m := range s.Methods {
		for _, msg := range []*protogen.Message{m.Input, m.Output} {
			if id := g.QualifiedGoIdent(msg.GoIdent); !seen[id] {
				seen[id] = true
				g.P("(*", id, ")(nil),")
			}
		}
	}
	g.P(")")

	// The client.
	g.P()
	g.P("// ", client, " calls one grain of service ", full, " from anywhere in")
	g.P("// the cluster (any goroutine; inside a grain, use the Future variants).")
	comments(g, s.Comments.Leading, true)
	deprecation(g, depr)
	g.P("type ", client, " struct {")
	g.P("c  *", q(clusterPkg, "Cluster"))
	g.P("id ", q(clusterPkg, "Identity"))
	g.P("}")
	g.P()
	g.P("// New", client, " returns a client of the ", full, " grain id on c. It")
	g.P("// registers the service's messages with c's remote serializers.")
	deprecation(g, depr)
	g.P("func New", client, "(c *", q(clusterPkg, "Cluster"), ", id string) *", client, " {")
	g.P("_ = ", msgsVar, ".Register(c) // generated messages: nothing to refuse")
	g.P("return &", client, "{c: c, id: ", q(clusterPkg, "NewIdentity"), "(", kindName, ", id)}")
	g.P("}")
	for _, m := range s.Methods {
		in, out := g.QualifiedGoIdent(m.Input.GoIdent), g.QualifiedGoIdent(m.Output.GoIdent)
		g.P()
		g.P("// ", m.GoName, " calls the grain's ", m.GoName, " and waits for its reply within ctx,")
		g.P("// activating the grain and retrying as cluster.Call does; the method's")
		g.P("// error is a *cluster.GrainError.")
		comments(g, m.Comments.Leading, true)
		deprecation(g, deprecatedMethod(m))
		g.P("func (", v.x, " *", client, ") ", m.GoName, "(", v.ctx, " ", q(contextPkg, "Context"), ", ", v.req, " *", in, ") (*", out, ", error) {")
		g.P("return ", q(clusterPkg, "Call"), "[*", out, "](", v.ctx, ", ", v.x, ".c, ", v.x, ".id, ", v.req, ")")
		g.P("}")
		g.P()
		g.P("// ", m.GoName, "Future calls the grain's ", m.GoName, " without blocking: the future")
		g.P("// completes with a *", m.Output.GoIdent.GoName, " or fails with a *cluster.GrainError or")
		g.P("// cluster.Call's errors (cluster.ErrTimeout after timeout; the cluster's")
		g.P("// RequestTimeout when timeout ≤ 0). A grain pipes it to itself")
		g.P("// (PipeTo(ctx.Self())) and gets the result as a message.")
		deprecation(g, deprecatedMethod(m))
		g.P("func (", v.x, " *", client, ") ", m.GoName, "Future(", v.req, " *", in, ", timeout ", q(timePkg, "Duration"), ") *", q(actorPkg, "Future"), " {")
		g.P("return ", q(clusterPkg, "CallFuture"), "(", v.x, ".c, ", v.x, ".id, ", v.req, ", timeout)")
		g.P("}")
	}
}
