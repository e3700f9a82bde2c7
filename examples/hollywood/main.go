package main

import (
	"flag"
	"fmt"
	"os"
)

func main() {
	flag.Parse()
	cmd := flag.Arg(0)
	var err error
	switch cmd {
	case "local":
		err = runLocal()
	case "remote":
		err = runRemote()
	case "remote-server":
		err = runRemoteServer()
	case "cluster":
		err = runCluster()
	case "":
		for _, run := range []func() error{runLocal, runRemote, runCluster} {
			if err = run(); err != nil {
				break
			}
		}
	default:
		err = fmt.Errorf("unknown command %q (local, remote, cluster)", cmd)
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "error:", err)
		os.Exit(1)
	}
}
