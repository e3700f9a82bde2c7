// Command demo shows the fraktor-go runtime: actors, a supervised crash and
// restart, request/response, a watched stop and a graceful shutdown.
package main
