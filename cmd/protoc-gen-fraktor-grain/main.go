package main

import "google.golang.org/protobuf/compiler/protogen"

func main() {
	var cfg config
	protogen.Options{ParamFunc: cfg.set}.Run(func(gen *protogen.Plugin) error { return generateWith(gen, cfg) })
}
