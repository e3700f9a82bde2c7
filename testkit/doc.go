// Package testkit is for testing actors: a system per test that shuts down
// and checks for leaked goroutines at cleanup (NewSystem), probes that
// record the messages (Probe) and EventStream events (EventProbe) they
// receive, expectations whose failures name what arrived instead (type,
// value, sender), Eventually for state without events, and a deterministic
// mode (NewManualSystem) in which the test steps the scheduler and moves a
// virtual clock, so a scenario gives the same trace on every run.
//
// Expectations take a timeout. On a NewSystem system it is wall time
// (0 means DefaultTimeout). On a NewManualSystem system it is virtual time:
// the expectation runs the system until idle and, when nothing has arrived,
// advances the virtual clock one timer deadline at a time, up to the
// timeout; 0 means "do not move the clock".
//
// For grains: NewGrain runs one grain identity without a cluster in the
// deterministic mode, as the cluster would (a message after a stop starts
// a new activation, idle activations passivate on the virtual clock, a
// failed start is the caller's *cluster.ActivationFailedError), with stubs
// in place of the grains it calls (Grain.Stub, Grain.StubProbe,
// WithGrainStub; a call of the grain to itself reaches the grain;
// Grain.Send sends as a request, Grain.Tell as cluster.Send, and neither
// delivers a nil message);
// NewCluster starts an in-process cluster with fault injection (Kill,
// Stop, Restart, AddNode, Partition, Disconnect, PartitionRegistry,
// Pause, and timing: SetClockRate, SlowRegistry, DelayLink) and an
// Observer that checks single activation, optionally on one virtual clock
// (VirtualTime) that TestCluster.Eventually and AwaitConverged move while
// they wait; FencedStore is a store that refuses writes with stale
// fencing tokens.
//
// Functions that take a testing.TB call only its Helper, Cleanup, Fatalf
// and Errorf methods. docs/testing.md shows both modes step by step.
package testkit
