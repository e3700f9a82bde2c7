// Package dashboard serves a live web view of a fraktor cluster: the members
// with their status, incarnation and membership lease, the activations each
// hosts by kind, request rate and latency, and recent cluster events.
//
// A Dashboard is an http.Handler that users mount in their own server. Attach
// the members of this process to it (one, or several in a test or demo); it
// reads their state on every poll of its JSON endpoint and subscribes to
// their event streams. The page is one static file embedded in the binary:
// no build step and no external resources, so it works offline.
//
// The package imports cluster; cluster never imports it.
package dashboard
