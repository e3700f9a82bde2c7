package actor

import (
	"context"
	"errors"
	"fmt"
)

// ExtensionInstaller installs an extension into a system (temporary shape,
// replaced by extension.Installer[*System]).
type ExtensionInstaller interface {
	Name() string
	Requires() []string
	Enabled() bool
	Validate() error
	Install(ctx context.Context, sys *System) (Extension, error)
}

// Extension is an installed extension.
type Extension interface {
	Shutdown(ctx context.Context) error
}

type extensions struct {
	sys       *System
	installed []Extension
}

func newExtensions(s *System) *extensions { return &extensions{sys: s} }

func (e *extensions) install(ins []ExtensionInstaller) error {
	for _, i := range ins {
		if !i.Enabled() {
			continue
		}
		if err := i.Validate(); err != nil {
			return fmt.Errorf("actor: extension %s: %w", i.Name(), err)
		}
		x, err := i.Install(context.Background(), e.sys)
		if err != nil {
			return fmt.Errorf("actor: extension %s: %w", i.Name(), err)
		}
		e.installed = append(e.installed, x)
	}
	return nil
}

func (e *extensions) shutdown(ctx context.Context) error {
	var errs []error
	for i := len(e.installed) - 1; i >= 0; i-- {
		errs = append(errs, e.installed[i].Shutdown(ctx))
	}
	e.installed = nil
	return errors.Join(errs...)
}
