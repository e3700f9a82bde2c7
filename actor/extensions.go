package actor

import (
	"context"

	"github.com/fraktor-go/fraktor/extension"
)

// ExtensionInstaller installs an extension into a system from
// SystemConfig.Extensions (B1.1); Install gets the system's Host. See
// package extension for the contract: install order by Requires, validation
// before anything is installed, a disabled installer creates nothing (B1.4).
type ExtensionInstaller = extension.Installer[Host]

// Extension is an installed extension; System.Shutdown shuts it down in
// reverse install order.
type Extension = extension.Extension

// ExtensionStatusEvent is published on the EventStream at every status change
// of an extension (B1.5).
type ExtensionStatusEvent struct {
	Name   string
	Status extension.Status
}

// Extensions returns the system's extension registry: statuses (B1.5) and
// typed lookup, e.g. extension.Lookup[*remote.Remote](sys.Extensions(), "remote").
func (s *System) Extensions() *extension.Registry[Host] { return s.exts }

func (s *System) newExtensionRegistry() *extension.Registry[Host] {
	return extension.NewRegistry[Host](extension.Options{
		Logger: s.logger,
		OnStatus: func(name string, st extension.Status) {
			s.events.Publish(&ExtensionStatusEvent{Name: name, Status: st})
		},
	})
}

func (s *System) installExtensions(ctx context.Context) error {
	if len(s.cfg.Extensions) == 0 {
		return nil
	}
	return s.exts.InstallAll(ctx, host{s}, s.cfg.Extensions)
}
