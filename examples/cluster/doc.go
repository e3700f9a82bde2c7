// Command cluster is the fraktor-go demo that `make run` starts: a cluster of
// members in one process (or one member per process with --join), an account
// grain kind, a load driver calling grains from every member, a member
// killed abruptly midway whose grains are activated again elsewhere, a
// graceful shutdown and a consistency check of every acknowledged request.
// A live dashboard (cluster/dashboard) is served on localhost.
package main
