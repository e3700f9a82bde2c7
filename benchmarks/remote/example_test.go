package remotebench_test

import (
	"context"
	"fmt"
	"strings"

	remotebench "github.com/fraktor-go/fraktor/benchmarks/remote"
)

// A peer serves until its input ends; here the input is empty, so it
// announces itself and stops at once. A measuring process would run it as
// a child (StartPeer) and connect a Client to the announced address.
func ExampleServePeer() {
	var out strings.Builder
	err := remotebench.ServePeer(context.Background(), remotebench.ImplFraktor, strings.NewReader(""), &out)
	f := strings.Fields(out.String())
	fmt.Println(err, f[0], strings.HasPrefix(f[1], "127.0.0.1:"), f[2], f[3])
	// Output: <nil> remotebench-peer true sink echo
}
