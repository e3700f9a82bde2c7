package cluster

import (
	"time"

	"github.com/fraktor-go/fraktor/actor"
)

// The cluster runtime publishes these events on the system's EventStream
// (V4.x, B4.4). Subscribe with actor.Subscribe or sys.EventStream(). Member
// fields hold member keys (Member.Key: "id#incarnation"). At is the time of
// the event on the publishing member's clock.

// ActivationStarted: this member activated Identity under Token (V4.1).
// It is published once the grain's Started handler returned; At is when the
// lease was granted (the earliest the grain could run).
type ActivationStarted struct {
	Identity Identity
	Member   string
	PID      *actor.PID
	Token    FencingToken
	At       time.Time
}

// ActivationTerminated: the activation of Identity on Member ended (V2.3,
// V4.2). Published on the hosting member and on every member that learns it
// from the hosting member's broadcast. On the hosting member At is when the
// grain handled its last message (Stopped).
type ActivationTerminated struct {
	Identity Identity
	Member   string
	PID      *actor.PID
	Token    FencingToken
	At       time.Time
}

// ActivationFailed: the activation of Identity failed on this member: an
// unknown kind, or a grain whose producer or Started handler failed (V2.2,
// B3.2). Its lease was released.
type ActivationFailed struct {
	Identity Identity
	Member   string
	Err      error
	At       time.Time
}

// OwnershipChanged: a new view moved an identity this member hosts to
// another member; the activation is being stopped (handover).
type OwnershipChanged struct {
	Identity Identity
	From, To string
	Epoch    uint64
	At       time.Time
}

// ViewSettled: this member's view at Epoch has settled (Cluster.Settled
// turned true, or stayed true into a new view).
type ViewSettled struct {
	Epoch uint64
	At    time.Time
}

// TopologyChanged: this member installed a new view.
type TopologyChanged struct {
	Joined, Left []Member
	Members      []Member
	Epoch        uint64
	Hash         uint64
	At           time.Time
}

// BlockListApplied: a member was blocked (remote's BlockList, here or on
// another member): the leases of Revoked local activations that the block
// moved away were revoked (they are being handed over), then Invalidated
// PidCache entries dropped, then this event published, in that order
// (B2.3, V1.4, V4.4).
type BlockListApplied struct {
	Member      string
	Revoked     int
	Invalidated int
	At          time.Time
}

// MemberUnreachable: the reachability vote (Config.Reachability) found
// Member, at Address, unreachable by Votes of the view's Members (this
// member's own report counted), and this member suspended it: out of
// owner selection until MemberReachable.
type MemberUnreachable struct {
	Member  string
	Address string
	Votes   int
	Members int
	At      time.Time
}

// MemberReachable: this member's link to Member, which the reachability
// vote had suspended, came up and the vote no longer holds: Member is
// eligible again.
type MemberReachable struct {
	Member  string
	Address string
	At      time.Time
}

// RetryThrottled: a request to Identity used up Retry.MaxAttempts, Attempts
// its own count, or the resolution of Identity for queued Sends did and
// dropped them (V3.2). Each request reports its own.
type RetryThrottled struct {
	Identity Identity
	Attempts int
	Err      error
	At       time.Time
}

// LeaseLost: this member's membership lease is lost or revoked.
type LeaseLost struct {
	Member string
	Err    error
	At     time.Time
}

// ViewWentStale: this member's view stream went stale (its provider stopped
// answering: a Consul agent out of reach); the runtime keeps the last
// view and goes on serving while its lease holds. ViewRestored follows
// when views flow again. Also logged at Warn; Cluster.ViewState reports
// the current state.
type ViewWentStale struct {
	Member string
	Err    error
	At     time.Time
}

// ViewRestored: this member's view stream is live again after
// ViewWentStale.
type ViewRestored struct {
	Member string
	At     time.Time
}

// Fenced: this member fenced itself (its membership lease could not be
// guaranteed past the stop budget): it stopped Stopped grains and refuses
// activations until it has rejoined.
type Fenced struct {
	Member  string
	Stopped int
	Err     error
	At      time.Time
}

// ClusterStatusChanged: the runtime's Status changed (B1.5).
type ClusterStatusChanged struct {
	From, To Status
	Member   string
	At       time.Time
}
