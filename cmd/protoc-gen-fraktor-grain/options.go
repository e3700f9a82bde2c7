package main

import (
	"fmt"
	"go/token"
	"path"
	"unicode"

	"google.golang.org/protobuf/compiler/protogen"
)

// config holds the plugin's options (--fraktor-grain_opt), beside
// protogen's own (paths, module, M, annotate_code).
type config struct {
	// packageSuffix, when set, puts the grain code of a file of Go package
	// p into Go package p+packageSuffix, in a directory of that name below
	// the file's output directory, which imports p for the messages: the
	// generated names (XxxClient, NewXxxClient) then do not meet those of
	// other plugins that write into p, as protoc-gen-go-grpc does.
	packageSuffix string
}

// set is protogen's ParamFunc: it takes the options protogen does not
// know, and refuses any it does not know either (else a misspelt option
// would be ignored without a word).
func (c *config) set(name, value string) error {
	switch name {
	case "package_suffix":
		for _, r := range value {
			if r != '_' && !unicode.IsLetter(r) && !unicode.IsDigit(r) {
				return fmt.Errorf("package_suffix %q cannot end a Go package name (letters, digits and _ only)", value)
			}
		}
		c.packageSuffix = value
		return nil
	}
	return fmt.Errorf("unknown option %s (this plugin's option is package_suffix; protogen's are paths, module, M and annotate_code)", name)
}

// target is where the grain code of a file goes.
type target struct {
	path protogen.GoImportPath  // its Go package
	pkg  protogen.GoPackageName // that package's name
	file string                 // the generated file's name
}

// target returns where the grain code of f goes: beside protoc-gen-go's
// code of f, or in the package_suffix package below it.
func (c config) target(f *protogen.File) target {
	if c.packageSuffix == "" {
		return target{path: f.GoImportPath, pkg: f.GoPackageName, file: f.GeneratedFilenamePrefix + fileSuffix}
	}
	pkg := string(f.GoPackageName) + c.packageSuffix
	return target{
		path: protogen.GoImportPath(path.Join(string(f.GoImportPath), pkg)),
		pkg:  protogen.GoPackageName(pkg),
		file: path.Join(path.Dir(f.GeneratedFilenamePrefix), pkg, path.Base(f.GeneratedFilenamePrefix)+fileSuffix),
	}
}

// checkTargets refuses a generated file that is not a valid Go file of
// its package (a package name that the suffix makes a keyword: go+to), or
// whose name is that of protoc-gen-go's file of another .proto (x.proto's
// x_fraktor.pb.go and x_fraktor.proto's): protoc would fail with "Tried to
// write the same file twice", or, in separate runs, one would overwrite
// the other.
func (c config) checkTargets(gen *protogen.Plugin) error {
	goFiles := map[string]*protogen.File{}
	for _, f := range gen.Files {
		goFiles[f.GeneratedFilenamePrefix+".pb.go"] = f
	}
	for _, f := range gen.Files {
		if !f.Generate || len(f.Services) == 0 {
			continue
		}
		t := c.target(f)
		if token.IsKeyword(string(t.pkg)) {
			return fmt.Errorf("protoc-gen-fraktor-grain: %s: package_suffix %q makes its grain package name %s a Go keyword; choose another suffix",
				f.Desc.Path(), c.packageSuffix, t.pkg)
		}
		if other, ok := goFiles[t.file]; ok {
			return fmt.Errorf("protoc-gen-fraktor-grain: %s: its generated file %s would be protoc-gen-go's file of %s; rename one of them",
				f.Desc.Path(), t.file, other.Desc.Path())
		}
	}
	return nil
}
