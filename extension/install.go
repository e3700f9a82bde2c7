package extension

import (
	"context"
	"errors"
	"fmt"
	"slices"
)

// InstallAll installs the enabled installers into host (B1.1) and returns
// when all are Ready, or with an error after undoing everything.
//
// It runs in two phases. First it checks the whole list, before installing
// anything: every installer must be non-nil with a non-empty unique name
// (ErrValidation, ErrDuplicate); every requirement of an enabled installer
// must name an enabled installer (ErrMissingRequirement,
// ErrRequirementDisabled, naming both); the requirements must not form a
// cycle (ErrCycle, naming it); and Validate must pass for every enabled
// installer (ErrValidation, B1.2). A panic in Name, Requires, Enabled or
// Validate is such a problem too (ErrValidation and ErrPanic); an
// installer whose Enabled panics counts as enabled and is marked Failed. All problems found are returned together
// (errors.Join of [*Error]), and the installers concerned are marked Failed.
// Disabled installers are marked Disabled and otherwise ignored: they are
// neither validated nor installed (B1.4).
//
// Then it installs the enabled installers one at a time: each after its
// requirements, otherwise in config order. Once all are installed, it calls
// Start on those that implement [Starter], in install order. If ctx is done
// before an Install, or an Install or Start fails (or panics), the failing
// extension is marked Failed and every extension already installed is shut
// down in reverse install order (with the same ctx) before InstallAll
// returns, so nothing is left running.
//
// InstallAll runs once per registry; later calls fail with
// ErrAlreadyInstalled, and calls after ShutdownAll with ErrClosed. It blocks
// for as long as the installers do.
func (r *Registry[H]) InstallAll(ctx context.Context, host H, installers []Installer[H]) error {
	r.life.Lock()
	defer r.life.Unlock()
	r.mu.Lock()
	switch r.phase {
	case phaseUsed:
		r.mu.Unlock()
		return ErrAlreadyInstalled
	case phaseClosed:
		r.mu.Unlock()
		return ErrClosed
	}
	r.phase = phaseUsed
	r.mu.Unlock()

	names, err := checkNames(installers)
	if err != nil {
		return err
	}
	order, err := r.check(installers, names)
	if err != nil {
		return err
	}
	return r.install(ctx, host, installers, names, order)
}

// checkNames rejects nil installers, empty names and duplicates. Nothing is
// recorded: with ambiguous names there is no status to attach errors to.
func checkNames[H any](installers []Installer[H]) ([]string, error) {
	names := make([]string, len(installers))
	at := make(map[string]int, len(installers))
	var errs []error
	for i, in := range installers {
		label := fmt.Sprintf("#%d", i)
		if in == nil {
			errs = append(errs, &Error{Extension: label, Op: OpValidate, Err: fmt.Errorf("%w: installer %s is nil", ErrValidation, label)})
			continue
		}
		name, perr := protectValue(in.Name)
		names[i] = name
		if perr != nil {
			errs = append(errs, &Error{Extension: label, Op: OpValidate, Err: fmt.Errorf("%w: installer %s (%T): Name: %w", ErrValidation, label, in, perr)})
			continue
		}
		if name == "" {
			errs = append(errs, &Error{Extension: label, Op: OpValidate, Err: fmt.Errorf("%w: installer %s (%T) has an empty name", ErrValidation, label, in)})
			continue
		}
		if j, dup := at[name]; dup {
			errs = append(errs, &Error{Extension: name, Op: OpValidate, Err: fmt.Errorf("%w: installers #%d and #%d are both called %q", ErrDuplicate, j, i, name)})
			continue
		}
		at[name] = i
	}
	return names, errors.Join(errs...)
}

// check records the Disabled statuses, checks requirements, cycles and
// configs, and returns the install order as positions into installers.
func (r *Registry[H]) check(installers []Installer[H], names []string) ([]int, error) {
	at := make(map[string]int, len(names))
	enabled := make([]bool, len(installers))
	// A panic in Enabled or Requires fails the installer like one in
	// Validate: it counts as enabled, so it is marked Failed with the cause.
	queryFailed := make(map[int]error)
	for i, in := range installers {
		at[names[i]] = i
		on, perr := protectValue(in.Enabled)
		if perr != nil {
			on, queryFailed[i] = true, fmt.Errorf("Enabled: %w", perr)
		}
		enabled[i] = on
		if !enabled[i] {
			r.setStatus(names[i], Status{State: Disabled})
		}
	}

	// Build the graph over enabled installers only.
	var pos []int          // enabled installer positions, in config order
	local := map[int]int{} // installer position → index in pos
	for i := range installers {
		if enabled[i] {
			local[i] = len(pos)
			pos = append(pos, i)
		}
	}
	var errs []error
	failed := make(map[int][]error)
	fail := func(i int, e *Error) {
		errs = append(errs, e)
		failed[i] = append(failed[i], e)
	}
	for _, i := range pos {
		if perr := queryFailed[i]; perr != nil {
			fail(i, &Error{Extension: names[i], Op: OpValidate, Err: fmt.Errorf("%w: %w", ErrValidation, perr)})
		}
	}
	requires := make([][]int, len(pos))
	for li, i := range pos {
		reqs, perr := protectValue(installers[i].Requires)
		if perr != nil {
			fail(i, &Error{Extension: names[i], Op: OpValidate, Err: fmt.Errorf("%w: Requires: %w", ErrValidation, perr)})
		}
		for _, req := range reqs {
			j, ok := at[req]
			switch {
			case !ok:
				fail(i, &Error{Extension: names[i], Op: OpRequire,
					Err: fmt.Errorf("%w: %q requires %q, which no installer provides", ErrMissingRequirement, names[i], req)})
			case !enabled[j]:
				fail(i, &Error{Extension: names[i], Op: OpRequire,
					Err: fmt.Errorf("%w: %q requires %q, which is disabled", ErrRequirementDisabled, names[i], req)})
			case !slices.Contains(requires[li], local[j]):
				requires[li] = append(requires[li], local[j])
			}
		}
	}
	order, cycle := installOrder(requires)
	if cycle != nil {
		localNames := make([]string, len(pos))
		for li, i := range pos {
			localNames[li] = names[i]
		}
		desc := cycleString(cycle, localNames)
		for _, li := range cycle[:len(cycle)-1] {
			fail(pos[li], &Error{Extension: names[pos[li]], Op: OpRequire, Err: fmt.Errorf("%w: %s", ErrCycle, desc)})
		}
	}
	for _, i := range pos {
		if cause := protect(installers[i].Validate); cause != nil {
			fail(i, &Error{Extension: names[i], Op: OpValidate, Err: fmt.Errorf("%w: %w", ErrValidation, cause)})
		}
	}
	if len(errs) > 0 {
		for _, i := range pos {
			if fs := failed[i]; fs != nil {
				r.setStatus(names[i], Status{State: Failed, Cause: errors.Join(fs...)})
			}
		}
		return nil, errors.Join(errs...)
	}
	out := make([]int, len(order))
	for k, li := range order {
		out[k] = pos[li]
	}
	return out, nil
}

// install runs Install (then Start) in order and rolls back on failure.
func (r *Registry[H]) install(ctx context.Context, host H, installers []Installer[H], names []string, order []int) error {
	var starters []string
	for _, i := range order {
		in, name := installers[i], names[i]
		r.setStatus(name, Status{State: Installing})
		var ext Extension
		cause := ctx.Err()
		if cause == nil {
			cause = protect(func() error {
				var err error
				ext, err = in.Install(ctx, host)
				if err == nil && ext == nil {
					err = fmt.Errorf("%T.Install returned a nil Extension", in)
				}
				return err
			})
		}
		if cause != nil {
			return r.rollback(ctx, name, &Error{Extension: name, Op: OpInstall, Err: fmt.Errorf("%w: %w", ErrInstall, cause)})
		}
		r.addRunning(name, ext)
		if _, ok := ext.(Starter); ok {
			starters = append(starters, name)
			r.setStatus(name, Status{State: Starting})
		} else {
			r.setStatus(name, Status{State: Ready})
		}
	}
	for _, name := range starters {
		r.mu.RLock()
		s := r.running[name].(Starter)
		r.mu.RUnlock()
		cause := ctx.Err()
		if cause == nil {
			cause = protect(func() error { return s.Start(ctx) })
		}
		if cause != nil {
			return r.rollback(ctx, name, &Error{Extension: name, Op: OpStart, Err: fmt.Errorf("%w: %w", ErrInstall, cause)})
		}
		r.setStatus(name, Status{State: Ready})
	}
	return nil
}

// rollback marks name Failed with failure, shuts down everything running
// (name too, if its Install had succeeded) and returns failure joined with
// any shutdown errors.
func (r *Registry[H]) rollback(ctx context.Context, name string, failure *Error) error {
	r.setStatus(name, Status{State: Failed, Cause: failure})
	serr := r.shutdownRunning(ctx, map[string]bool{name: true})
	return errors.Join(failure, serr)
}
