package actor

// Header is metadata that travels with one message, beside it: trace
// context, for example. Keys are case-sensitive. It implements the
// OpenTelemetry propagation.TextMapCarrier contract (Get, Set, Keys), so a
// propagator can inject into and extract from it directly; Set needs a
// non-nil Header.
type Header map[string]string

// Get returns the value of key, or "".
func (h Header) Get(key string) string { return h[key] }

// Set stores value under key.
func (h Header) Set(key, value string) { h[key] = value }

// Keys returns the keys, in no particular order.
func (h Header) Keys() []string {
	keys := make([]string, 0, len(h))
	for k := range h {
		keys = append(keys, k)
	}
	return keys
}

// MessageEnvelope carries a message with a Header. Send it like any
// message; it exists only where something puts a header on a message (the
// tracing middleware), so a message sent without one costs nothing more.
//
// The runtime unwraps it before the receiver sees it: an actor's
// Context.Message is Message and Context.MessageHeader is Header (receive
// middleware sees the same); a future completes with Message; a dead letter
// reports Message; a priority mailbox ranks by Message. Across nodes the
// remote transport sends Header in the wire envelope and the receiving node
// wraps the message again. Stash and Forward keep the header.
//
// An envelope and its Header must not change once sent: the runtime may
// read them on other goroutines and deliver them more than once (a cluster
// request's retries resend the same message).
type MessageEnvelope struct {
	Header  Header
	Message any
}

// UnwrapEnvelope returns the message and header msg carries: a
// *MessageEnvelope's fields, or msg itself and nil.
func UnwrapEnvelope(msg any) (any, Header) {
	if e, ok := msg.(*MessageEnvelope); ok && e != nil {
		return e.Message, e.Header
	}
	return msg, nil
}
