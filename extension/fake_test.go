package extension_test

import (
	"context"
	"sync"

	"github.com/fraktor-go/fraktor/extension"
)

// host is the fake host: it records what installers and extensions did to it,
// and the values they left in it.
type host struct {
	mu     sync.Mutex
	log    []string
	values map[string]string
	reg    *extension.Registry[*host]
}

func newHost() *host {
	h := &host{values: map[string]string{}}
	h.reg = extension.NewRegistry[*host](extension.Options{})
	return h
}

func (h *host) record(s string) {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.log = append(h.log, s)
}

func (h *host) events() []string {
	h.mu.Lock()
	defer h.mu.Unlock()
	return append([]string(nil), h.log...)
}

func (h *host) set(k, v string) {
	h.mu.Lock()
	defer h.mu.Unlock()
	if v == "" {
		delete(h.values, k)
		return
	}
	h.values[k] = v
}

func (h *host) snapshot() map[string]string {
	h.mu.Lock()
	defer h.mu.Unlock()
	out := make(map[string]string, len(h.values))
	for k, v := range h.values {
		out[k] = v
	}
	return out
}

// fake is a configurable installer.
type fake struct {
	name        string
	requires    []string
	disabled    bool
	validateErr error
	installErr  error
	startErr    error
	shutdownErr error
	starter     bool
	goroutine   bool // the extension runs a goroutine until Shutdown
	panicOn     string
	// onInstall runs inside Install before the extension is built.
	onInstall func(ctx context.Context, h *host) error
}

func (f *fake) Name() string       { return f.name }
func (f *fake) Requires() []string { return f.requires }
func (f *fake) Enabled() bool      { return !f.disabled }
func (f *fake) Validate() error {
	if f.panicOn == "validate" {
		panic("validate exploded")
	}
	return f.validateErr
}

func (f *fake) Install(ctx context.Context, h *host) (extension.Extension, error) {
	h.record("install " + f.name)
	if f.panicOn == "install" {
		panic("install exploded")
	}
	if f.onInstall != nil {
		if err := f.onInstall(ctx, h); err != nil {
			return nil, err
		}
	}
	if f.installErr != nil {
		return nil, f.installErr
	}
	ext := &fakeExt{name: f.name, h: h, shutdownErr: f.shutdownErr}
	if f.goroutine {
		ext.stop, ext.done = make(chan struct{}), make(chan struct{})
		go func() {
			defer close(ext.done)
			<-ext.stop
		}()
	}
	h.set(f.name, "running")
	if f.starter {
		return &startExt{fakeExt: ext, startErr: f.startErr}, nil
	}
	return ext, nil
}

type fakeExt struct {
	name        string
	h           *host
	stop, done  chan struct{}
	shutdownErr error
}

func (e *fakeExt) Shutdown(context.Context) error {
	e.h.record("shutdown " + e.name)
	if e.stop != nil {
		close(e.stop)
		<-e.done
	}
	e.h.set(e.name, "")
	return e.shutdownErr
}

// stopped reports whether the extension's goroutine has ended.
func (e *fakeExt) stopped() bool {
	select {
	case <-e.done:
		return true
	default:
		return false
	}
}

type startExt struct {
	*fakeExt
	startErr error
}

func (e *startExt) Start(context.Context) error {
	e.h.record("start " + e.name)
	return e.startErr
}

func installers(fs ...*fake) []extension.Installer[*host] {
	out := make([]extension.Installer[*host], len(fs))
	for i, f := range fs {
		out[i] = f
	}
	return out
}

// statusLog records OnStatus calls.
type statusLog struct {
	mu  sync.Mutex
	log []string
}

func (l *statusLog) on(name string, s extension.Status) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.log = append(l.log, name+":"+s.State.String())
}

func (l *statusLog) events() []string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return append([]string(nil), l.log...)
}
