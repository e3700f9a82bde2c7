package extension

import "context"

// Installer creates one extension into a host (the actor system) of type H.
// The actor system's config holds a list of them (B1.1); a [Registry]
// validates them all, orders them by their requirements and installs them one
// after the other.
//
// All methods are called by the Registry from the goroutine that called
// [Registry.InstallAll], one call at a time. Name, Requires and Enabled must
// be cheap and return the same answer every time.
type Installer[H any] interface {
	// Name identifies the extension; it is unique within one registry and
	// is the key of Status and Lookup.
	Name() string
	// Requires names the extensions that must be installed before this one
	// (cluster requires remote). A requirement on a name that no installer
	// has, or on a disabled installer, fails InstallAll.
	Requires() []string
	// Enabled reports whether the extension should exist at all. A disabled
	// installer is neither validated nor installed: it creates nothing and
	// leaves the host unchanged (B1.4); its status is Disabled.
	Enabled() bool
	// Validate checks the installer's config. It runs for every enabled
	// installer before any of them is installed, so a bad config never
	// leaves a half-built system (B1.2).
	Validate() error
	// Install builds the extension into host. The extensions it requires
	// are installed already and can be looked up. ctx bounds the call. If
	// Install fails it must release what it started itself; the registry
	// then shuts down the extensions installed before it, in reverse order.
	// A nil Extension with a nil error is treated as a failure.
	Install(ctx context.Context, host H) (Extension, error)
}

// Extension is a running capability in a host.
type Extension interface {
	// Shutdown stops the extension and every goroutine it started. It is
	// called once by the registry, in reverse install order. ctx bounds the
	// grace period only: when ctx is done, Shutdown must still release its
	// resources (forcefully) before returning, and may return ctx.Err().
	Shutdown(ctx context.Context) error
}

// Starter is an optional interface of an [Extension]: Start is called after
// every enabled extension of the InstallAll call has been installed, in
// install order, on the InstallAll goroutine. Use it for work that needs the
// whole set in place (a cluster joining once remote and the others exist).
// An extension is Starting between a successful Install and the return of
// Start; a Start error fails InstallAll like an Install error does.
type Starter interface {
	Start(ctx context.Context) error
}

// Lingerer is an optional interface of an [Extension] whose goroutines may
// outlive its Shutdown: one that, when ctx ends, returns ctx's error while
// goroutines it started are still on their way out (a request that has not
// yet seen its cancellation, a blocking call into user code). Terminated
// returns a channel that is closed once every goroutine the extension
// started has returned; it is closed already when Shutdown returned nil.
// Without it, the registry takes Shutdown's return as the end of the
// extension's goroutines.
//
// The registry calls Terminated once, on the goroutine that called
// Shutdown (that of ShutdownAll, or of InstallAll rolling back), after
// Shutdown has returned, whatever it returned; it must not block. A nil
// channel, or a panic, means nothing is left running.
type Lingerer interface {
	Terminated() <-chan struct{}
}
