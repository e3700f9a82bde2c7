package extension

import (
	"errors"
	"strconv"
)

// Sentinel errors. Every error returned by this package wraps one of them, and
// the errors that concern one installer are an [*Error] naming it.
var (
	// ErrMissingRequirement: an installer requires a name no installer has.
	ErrMissingRequirement = errors.New("extension: missing requirement")
	// ErrRequirementDisabled: an enabled installer requires a disabled one.
	ErrRequirementDisabled = errors.New("extension: requirement is disabled")
	// ErrCycle: the requirements form a cycle; the message names it.
	ErrCycle = errors.New("extension: requirement cycle")
	// ErrDuplicate: two installers have the same name.
	ErrDuplicate = errors.New("extension: duplicate name")
	// ErrValidation: an installer's Validate failed, or the installer itself
	// is unusable (nil, empty name).
	ErrValidation = errors.New("extension: invalid config")
	// ErrInstall: an installer's Install (or a Starter's Start) failed.
	ErrInstall = errors.New("extension: install failed")
	// ErrShutdown: an extension's Shutdown failed.
	ErrShutdown = errors.New("extension: shutdown failed")
	// ErrNotInstalled: no extension of that name is installed and running.
	ErrNotInstalled = errors.New("extension: not installed")
	// ErrWrongType: the installed extension is not of the requested type.
	ErrWrongType = errors.New("extension: wrong type")
	// ErrPanic: an installer or extension method panicked; the panic was
	// recovered and turned into this error.
	ErrPanic = errors.New("extension: panic")
	// ErrAlreadyInstalled: InstallAll runs once per Registry.
	ErrAlreadyInstalled = errors.New("extension: InstallAll already called")
	// ErrClosed: the registry has been shut down.
	ErrClosed = errors.New("extension: registry shut down")
)

// Operations named in [Error.Op].
const (
	OpValidate = "validate"
	OpRequire  = "require"
	OpInstall  = "install"
	OpStart    = "start"
	OpShutdown = "shutdown"
	OpLookup   = "lookup"
)

// Error is the error about one named extension. Err wraps one of the package
// sentinels (and, where there is one, the cause returned by the installer),
// so both errors.Is(err, ErrValidation) and errors.Is(err, cause) hold.
type Error struct {
	Extension string // the installer's name
	Op        string // one of the Op constants
	Err       error
}

func (e *Error) Error() string {
	return e.Op + " " + strconv.Quote(e.Extension) + ": " + e.Err.Error()
}

// Unwrap returns Err.
func (e *Error) Unwrap() error { return e.Err }
