// Package soak holds a soak trial of a running cluster: its test,
// TestSoak, starts three members in one process over real loopback TCP
// (remote and cluster with the in-memory registry) and drives rounds of
// churn through them: many grain identities, most used once and
// passivated; requests and Sends; members leaving and coming back as new
// incarnations of the same member ID or under new IDs, now and then killed
// instead; one member living through the whole run, cut off the registry
// until it fences and rejoins as a new incarnation of the same system;
// connections reset; plain actors spawned, watched across
// members, asked and stopped; requests timing out; dead letters; abandoned
// futures. Between an early checkpoint and the last one, each taken once
// the cluster is quiet and after two GCs, it compares the goroutines (by
// the function that started them), the live heap, each member's own gauges
// (actor registry, remote endpoints and connections, PidCache,
// activations) and how many of the stopped incarnations' actor systems are
// still reachable, and fails when goroutines, registries or reachable
// stopped systems grow with the rounds.
//
// The default run is a few rounds, short enough for `make test` under
// -race; a long run finds what grows slowly:
//
//	go test -run TestSoak -v ./testkit/soak/ -soak.rounds=200
//	go test -run TestSoak ./testkit/soak/ -soak.rounds=200 \
//	    -memprofile /tmp/mem.out -memprofilerate=1
//	go tool pprof -sample_index=inuse_space -top soak.test /tmp/mem.out
//
// The package has no code of its own outside its tests.
package soak
