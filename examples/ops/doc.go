// Command ops is a grain service run the way production runs one: one
// binary, one member per process, members meeting through a Consul agent,
// mutual TLS between them, metrics and health over HTTP, a graceful leave
// on SIGTERM. docs/operations.md is the guide written from running it.
//
//	ops certs  --dir D --names m1,m2,m3,load   # a CA and member certificates (never committed)
//	ops member --name m1 --listen 127.0.0.1:7101 --consul 127.0.0.1:8500 \
//	           --tls-cert D/m1.pem --tls-key D/m1-key.pem --tls-ca D/ca.pem --http 127.0.0.1:9101
//	ops load   --name load --consul 127.0.0.1:8500 --tls-... --members 4 --duration 60s
//
// Every flag can also be set in the environment as OPS_<FLAG> (upper case,
// '-' → '_'): OPS_CONSUL=127.0.0.1:8500, OPS_TLS_CA=/etc/ops/ca.pem.
//
// `ops load --fill N` activates N counters once (capacity), `--rate R` paces
// the load; the driver counts every request's outcome by error class and
// reports, per grain, the longest time without an answer.
package main
