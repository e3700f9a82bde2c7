// Command hello is the program of docs/getting-started.md: two cluster
// members in one process, a greeter grain, and requests from both members
// reaching one activation per identity.
package main
