// Package testconsul starts a real Consul agent for tests: a single server on
// free loopback ports with its own data directory, ready once it has a
// leader, has registered its node and has committed a write, and stopped at
// test cleanup. Fault tests stop, kill, restart, pause (SIGSTOP) and resume
// (SIGCONT) it. It is
// how cluster/consul is tested; nothing replaces Consul with a fake.
//
// The binary is $FRAKTOR_CONSUL or <repository root>/bin/consul, built by
// `make consul` (tools/consul/install.sh). When it is missing, or the agent
// does not come up, the test fails with the reason; it never skips.
//
// The agent is a persistent single-server agent rather than `consul agent
// -dev`, whose in-memory Raft store would lose every session and key on
// Restart; it uses the development timings that matter here (Raft
// multiplier 1) and a session_ttl_min of 1s so that tests can use short
// session TTLs.
package testconsul
