// Command peer is the remote benchmark's peer as a program: it hosts the
// sink and echo actors of fraktor-go or protoactor-go, prints
// "remotebench-peer ADDRESS SINK-ID ECHO-ID" once listening, and exits when
// its standard input closes.
//
//	go run ./remote/cmd/peer fraktor|protoactor|raw-tcp|raw-proto
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
