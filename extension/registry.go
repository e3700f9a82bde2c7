package extension

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"reflect"
	"sync"
)

// Options configures a [Registry].
type Options struct {
	// OnStatus, when set, is called after every status change, with the new
	// status, on the goroutine that made the change (the caller of
	// InstallAll or ShutdownAll) and in the order of the changes. It must
	// not block and must not call InstallAll or ShutdownAll; it may call
	// Status, Statuses and Lookup. The actor system publishes these on its
	// EventStream.
	OnStatus func(name string, s Status)
	// Logger receives lifecycle records at Debug; nil discards them.
	Logger *slog.Logger
}

type phase uint8

const (
	phaseNew phase = iota
	phaseUsed
	phaseClosed
)

// Registry installs the extensions of one host, keeps their status and looks
// them up by name. It holds no package-level state: each host owns its
// registry, so two systems in one process never share extensions.
//
// InstallAll and ShutdownAll are serialised (a ShutdownAll waits for a
// running InstallAll). Status, Statuses, Lookup and Get are safe to call from
// any goroutine at any time, including while InstallAll runs. The zero value
// is usable and equals NewRegistry with zero Options.
type Registry[H any] struct {
	opts Options
	life sync.Mutex // serialises InstallAll and ShutdownAll

	mu        sync.RWMutex
	phase     phase
	status    map[string]Status
	running   map[string]Extension // installed and not shut down
	installed []string             // install order of running extensions
	lingering []lingering          // shut down Lingerers, in shutdown order
}

// lingering is a shut-down [Lingerer]: the channel its Terminated returned.
type lingering struct {
	name string
	done <-chan struct{}
}

// NewRegistry returns an empty registry.
func NewRegistry[H any](opts Options) *Registry[H] {
	return &Registry[H]{opts: opts}
}

// Status returns the status of the named extension. It returns an [*Error]
// wrapping ErrNotInstalled when InstallAll has not reached that name (or no
// installer has it).
func (r *Registry[H]) Status(name string) (Status, error) {
	r.mu.RLock()
	defer r.mu.RUnlock()
	s, ok := r.status[name]
	if !ok {
		return Status{}, &Error{Extension: name, Op: OpLookup, Err: fmt.Errorf("%w: no status recorded", ErrNotInstalled)}
	}
	return s, nil
}

// Statuses returns a snapshot of every recorded status, keyed by name.
func (r *Registry[H]) Statuses() map[string]Status {
	r.mu.RLock()
	defer r.mu.RUnlock()
	out := make(map[string]Status, len(r.status))
	for k, v := range r.status {
		out[k] = v
	}
	return out
}

// Lookup returns the running extension called name as a T. It fails with an
// [*Error] wrapping ErrNotInstalled when no such extension runs (never
// installed, disabled, failed or stopped), or ErrWrongType when it is not a
// T. An extension can be looked up from the moment its Install returned, so
// the Install of a dependent extension finds its requirements.
//
// Extension packages build their typed accessor on it:
//
//	func Get(sys *actor.System) (*Remote, error) { return extension.Lookup[*Remote](sys.Extensions(), Name) }
func Lookup[T any, H any](r *Registry[H], name string) (T, error) {
	var zero T
	r.mu.RLock()
	ext, ok := r.running[name]
	r.mu.RUnlock()
	if !ok {
		return zero, &Error{Extension: name, Op: OpLookup, Err: ErrNotInstalled}
	}
	t, ok := ext.(T)
	if !ok {
		return zero, &Error{Extension: name, Op: OpLookup,
			Err: fmt.Errorf("%w: %T is not %s", ErrWrongType, ext, reflect.TypeFor[T]())}
	}
	return t, nil
}

// Get is Lookup reporting only whether it succeeded.
func Get[T any, H any](r *Registry[H], name string) (T, bool) {
	t, err := Lookup[T](r, name)
	return t, err == nil
}

// setStatus records a status and then tells the listener, outside the lock.
func (r *Registry[H]) setStatus(name string, s Status) {
	r.mu.Lock()
	if r.status == nil {
		r.status = make(map[string]Status)
	}
	r.status[name] = s
	r.mu.Unlock()
	if l := r.opts.Logger; l != nil {
		if s.Cause != nil {
			l.Debug("extension status", slog.String("extension", name), slog.String("state", s.State.String()), slog.Any("cause", s.Cause))
		} else {
			l.Debug("extension status", slog.String("extension", name), slog.String("state", s.State.String()))
		}
	}
	if f := r.opts.OnStatus; f != nil {
		f(name, s)
	}
}

// addRunning records an installed extension at the end of the install order.
func (r *Registry[H]) addRunning(name string, ext Extension) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.running == nil {
		r.running = make(map[string]Extension)
	}
	r.running[name] = ext
	r.installed = append(r.installed, name)
}

// ShutdownAll shuts every running extension down in reverse install order and
// marks each Stopped (with the Shutdown error as Cause, if any). It calls
// every Shutdown even when an earlier one fails or ctx is done, and returns
// the failures joined (errors.Join), each an [*Error] wrapping ErrShutdown.
// It is idempotent: later calls return nil. After it, InstallAll fails with
// ErrClosed.
func (r *Registry[H]) ShutdownAll(ctx context.Context) error {
	r.life.Lock()
	defer r.life.Unlock()
	r.mu.Lock()
	if r.phase == phaseClosed {
		r.mu.Unlock()
		return nil
	}
	r.phase = phaseClosed
	r.mu.Unlock()
	return r.shutdownRunning(ctx, nil)
}

// shutdownRunning stops the running extensions in reverse install order. The
// names in keep keep their (Failed) status instead of becoming Stopped.
func (r *Registry[H]) shutdownRunning(ctx context.Context, keep map[string]bool) error {
	r.mu.Lock()
	names := r.installed
	r.installed = nil
	r.mu.Unlock()
	var errs []error
	for i := len(names) - 1; i >= 0; i-- {
		name := names[i]
		r.mu.RLock()
		ext := r.running[name]
		r.mu.RUnlock()
		cause := protect(func() error { return ext.Shutdown(ctx) })
		var done <-chan struct{}
		if l, ok := ext.(Lingerer); ok {
			// A panic in Terminated tells nothing of its goroutines: it
			// counts as nothing left, like an extension without it.
			_ = protect(func() error {
				done = l.Terminated()
				return nil
			})
		}
		r.mu.Lock()
		delete(r.running, name)
		if done != nil {
			r.lingering = append(r.lingering, lingering{name: name, done: done})
		}
		r.mu.Unlock()
		var serr error
		if cause != nil {
			serr = &Error{Extension: name, Op: OpShutdown, Err: fmt.Errorf("%w: %w", ErrShutdown, cause)}
			errs = append(errs, serr)
		}
		if !keep[name] {
			r.setStatus(name, Status{State: Stopped, Cause: serr})
		}
	}
	return errors.Join(errs...)
}

// protectValue runs f and returns its result, or a panic as an error
// wrapping ErrPanic (an installer's Name, Requires and Enabled).
func protectValue[T any](f func() T) (v T, err error) {
	err = protect(func() error {
		v = f()
		return nil
	})
	return v, err
}

// protect runs f and turns a panic into an error wrapping ErrPanic.
func protect(f func() error) (err error) {
	defer func() {
		if p := recover(); p != nil {
			err = fmt.Errorf("%w: %v", ErrPanic, p)
		}
	}()
	return f()
}
