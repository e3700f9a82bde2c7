package main

import (
	"context"
	"fmt"
	"os"

	remotebench "github.com/fraktor-go/fraktor/benchmarks/remote"
)

func main() {
	if len(os.Args) != 2 {
		fmt.Fprintln(os.Stderr, "usage: peer fraktor|protoactor|raw-tcp|raw-proto")
		os.Exit(2)
	}
	// No deadline: the measuring process kills a peer that does not stop.
	if err := remotebench.ServePeer(context.Background(), os.Args[1], os.Stdin, os.Stdout); err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
}
