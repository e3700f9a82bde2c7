package testkit

import (
	"fmt"
	"reflect"
	"strings"

	"github.com/fraktor-go/fraktor/actor"
)

// Received is one message a probe got, with its sender (nil for events and
// for messages sent without a sender).
type Received struct {
	Msg    any
	Sender *actor.PID
}

// String renders the message with its type and value, and its sender when
// there is one: `*app.Order &{ID:7} from local/$3`.
func (r Received) String() string {
	if r.Sender == nil {
		return describe(r.Msg)
	}
	return describe(r.Msg) + " from " + r.Sender.String()
}

// describe renders a value with its dynamic type, so that a failure says
// both what arrived and what it was: `string "x"`, `int 42`,
// `*app.Order &{ID:7}`, `*errors.errorString boom`.
func describe(v any) string {
	switch x := v.(type) {
	case nil:
		return "<nil>"
	case string:
		return fmt.Sprintf("string %q", x)
	}
	// %+v uses Error and String methods; fmt recovers their panics.
	return fmt.Sprintf("%T %+v", v, v)
}

func describeAll(rs []Received) string {
	if len(rs) == 0 {
		return "nothing"
	}
	const show = 20
	parts := make([]string, 0, min(len(rs), show)+1)
	for _, r := range rs[:min(len(rs), show)] {
		parts = append(parts, r.String())
	}
	if len(rs) > show {
		parts = append(parts, fmt.Sprintf("… %d more", len(rs)-show))
	}
	return "[" + strings.Join(parts, "; ") + "]"
}

func typeName[T any]() string { return reflect.TypeFor[T]().String() }
