package extension_test

import (
	"context"
	"errors"
	"fmt"

	"github.com/fraktor-go/fraktor/extension"
)

// App is a trivial host. A real host is *actor.System.
type App struct {
	Name string
	Reg  *extension.Registry[*App]
}

// greeterInstaller installs the "greeter" extension from its config.
type greeterInstaller struct{ greeting string }

func (greeterInstaller) Name() string       { return "greeter" }
func (greeterInstaller) Requires() []string { return nil }
func (greeterInstaller) Enabled() bool      { return true }
func (g greeterInstaller) Validate() error {
	if g.greeting == "" {
		return errors.New("greeter: empty greeting")
	}
	return nil
}
func (g greeterInstaller) Install(_ context.Context, app *App) (extension.Extension, error) {
	return &Greeter{line: g.greeting + ", " + app.Name}, nil
}

// Greeter is the running extension.
type Greeter struct{ line string }

func (g *Greeter) Greet() string                  { return g.line }
func (g *Greeter) Shutdown(context.Context) error { return nil }

// GetGreeter is the typed accessor an extension package offers.
func GetGreeter(app *App) (*Greeter, bool) { return extension.Get[*Greeter](app.Reg, "greeter") }

func Example() {
	ctx := context.Background()
	app := &App{Name: "shop"}
	app.Reg = extension.NewRegistry[*App](extension.Options{
		OnStatus: func(name string, s extension.Status) { fmt.Println(name, s) },
	})
	if err := app.Reg.InstallAll(ctx, app, []extension.Installer[*App]{greeterInstaller{greeting: "hello"}}); err != nil {
		fmt.Println(err)
		return
	}
	g, _ := GetGreeter(app)
	fmt.Println(g.Greet())
	_ = app.Reg.ShutdownAll(ctx)

	// A bad config fails before anything is installed.
	bad := &App{Name: "shop", Reg: extension.NewRegistry[*App](extension.Options{})}
	err := bad.Reg.InstallAll(ctx, bad, []extension.Installer[*App]{greeterInstaller{}})
	fmt.Println(errors.Is(err, extension.ErrValidation), err)
	// Output:
	// greeter Installing
	// greeter Ready
	// hello, shop
	// greeter Stopped
	// true validate "greeter": extension: invalid config: greeter: empty greeting
}
