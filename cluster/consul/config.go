package consul

import (
	"fmt"
	"io"
	"log/slog"
	"regexp"
	"strings"
	"time"

	"github.com/hashicorp/consul/api"

	"github.com/fraktor-go/fraktor/cluster"
)

// Config configures the Consul provider. Build it with DefaultConfig and
// change what you need; New calls Validate.
//
// Timing. A member is guaranteed its membership until the send time of its
// last successful renewal plus FencePeriod. Validate enforces
//
//	RenewInterval + RequestTimeout < FencePeriod < SessionTTL
//
// The left relation lets a healthy member renew (or learn that it failed)
// before its deadline; the right one keeps the servers from invalidating the
// session, and others from seeing the member gone, before that deadline.
// Consul invalidates an unrenewed session between SessionTTL and twice
// SessionTTL after the last renewal, so a crashed member disappears within
// 2×SessionTTL. SessionTTL must also be at least the servers'
// session_ttl_min (10 s unless configured).
type Config struct {
	// API is the Consul client configuration: address, scheme, datacenter,
	// ACL token, TLS, and optionally the HTTP client. A custom
	// API.HttpClient (for instance one whose Transport can fail requests on
	// demand, as the tests do to cut renewals) is used as given.
	API api.Config
	// Cluster is the cluster name: members of the same cluster see each
	// other. It must equal cluster.Config.Name (which defaults to remote's
	// SystemName): cluster.Install refuses the provider otherwise, since
	// two clusters sharing one name here would see each other's members.
	// Letters, digits, '.', '_' and '-'; not "." or "..".
	Cluster string
	// KeyPrefix is the KV root; keys live under KeyPrefix/Cluster/. It is
	// '/'-separated segments, none empty, "." or "..".
	KeyPrefix string
	// ServiceName is the name of the service registration; empty means
	// "fraktor-" + Cluster. Letters, digits, '.', '_' and '-'; not "." or
	// "..".
	ServiceName string
	// SessionTTL is the session's TTL on the servers.
	SessionTTL time.Duration
	// RenewInterval is the time between renewals.
	RenewInterval time.Duration
	// RequestTimeout bounds every request except the blocking query.
	RequestTimeout time.Duration
	// FencePeriod is added to a successful renewal's send time to give the
	// lease deadline.
	FencePeriod time.Duration
	// WaitTime is the view query's blocking wait. The wait actually used is
	// shortened where needed so that a query (wait, Consul's jitter of up
	// to wait/16, and RequestTimeout) lasts at most FencePeriod: an agent
	// that stops answering is reported (ViewStale) within FencePeriod.
	WaitTime time.Duration
	// BackoffBase and BackoffMax bound the exponential backoff (with
	// jitter) after failed requests; BackoffMax is at most 24 h. Renewal
	// retries never wait longer than RenewInterval.
	BackoffBase, BackoffMax time.Duration
	// ReleasedRetention is how long released markers are kept; members
	// delete older ones. 0 keeps them forever.
	ReleasedRetention time.Duration
	// DeregisterCriticalAfter lets the agent remove the service registration
	// of a member that stopped without leaving (its TTL check is critical).
	// Consul reaps at most every 30 s and not before one minute.
	DeregisterCriticalAfter time.Duration
	// Logger receives lifecycle and health changes; nil discards. Tokens
	// are never logged.
	Logger *slog.Logger
	// EventBuffer is each membership's event buffer; 0 means
	// cluster.DefaultMembershipEventBuffer. At most 65536.
	EventBuffer int
}

// maxEventBuffer bounds Config.EventBuffer, which Join allocates up front.
const maxEventBuffer = cluster.MaxMembershipEventBuffer

// DefaultConfig returns the Consul client defaults (api.DefaultConfig, which
// honours CONSUL_HTTP_ADDR, CONSUL_HTTP_TOKEN and the other CONSUL_*
// variables), cluster "fraktor" under KV prefix "fraktor", a 15 s session
// TTL renewed every 2 s with a 3 s request timeout, a 10 s fence period, a
// 6 s blocking wait, backoff from 100 ms to 5 s, released markers kept for
// 10 minutes and service registrations reaped one minute after their member
// vanished.
func DefaultConfig() Config {
	return Config{
		API:                     *api.DefaultConfig(),
		Cluster:                 "fraktor",
		KeyPrefix:               "fraktor",
		SessionTTL:              15 * time.Second,
		RenewInterval:           2 * time.Second,
		RequestTimeout:          3 * time.Second,
		FencePeriod:             10 * time.Second,
		WaitTime:                6 * time.Second,
		BackoffBase:             100 * time.Millisecond,
		BackoffMax:              5 * time.Second,
		ReleasedRetention:       10 * time.Minute,
		DeregisterCriticalAfter: time.Minute,
	}
}

var namePattern = regexp.MustCompile(`^[A-Za-z0-9._-]+$`)

// Validate reports the first invalid field or unsafe timing relation with an
// error matching ErrInvalidConfig and cluster.ErrInvalidProviderConfig.
func (c Config) Validate() error {
	switch {
	case c.Cluster == "":
		return invalid("Cluster is empty: members find each other by cluster name")
	case !namePattern.MatchString(c.Cluster) || c.Cluster == "." || c.Cluster == "..":
		return invalid("Cluster %q may contain only letters, digits, '.', '_' and '-', and may not be \".\" or \"..\"", c.Cluster)
	case !validKeyPrefix(c.KeyPrefix):
		return invalid("KeyPrefix %q must be non-empty without a leading or trailing '/', an empty segment (\"//\"), or a \".\" or \"..\" segment", c.KeyPrefix)
	case c.ServiceName != "" && (!namePattern.MatchString(c.ServiceName) || c.ServiceName == "." || c.ServiceName == ".."):
		// Discovery asks for the name in a URL path (/v1/health/service/<name>),
		// where "." and ".." are dot segments: nobody could look it up.
		return invalid("ServiceName %q may contain only letters, digits, '.', '_' and '-', and may not be \".\" or \"..\"", c.ServiceName)
	case c.SessionTTL < time.Second || c.SessionTTL > 24*time.Hour:
		return invalid("SessionTTL %v must be between 1s and 24h (and at least the servers' session_ttl_min)", c.SessionTTL)
	case c.RenewInterval <= 0:
		return invalid("RenewInterval %v must be positive", c.RenewInterval)
	case c.RequestTimeout <= 0:
		return invalid("RequestTimeout %v must be positive", c.RequestTimeout)
	case c.FencePeriod <= 0:
		return invalid("FencePeriod %v must be positive", c.FencePeriod)
	case c.RenewInterval >= c.FencePeriod-c.RequestTimeout: // the sum could overflow
		return invalid("RenewInterval %v + RequestTimeout %v must be shorter than FencePeriod %v, or a healthy member can pass its lease deadline before a renewal returns",
			c.RenewInterval, c.RequestTimeout, c.FencePeriod)
	case c.FencePeriod >= c.SessionTTL:
		return invalid("FencePeriod %v must be shorter than SessionTTL %v, or the servers may drop a member that still believes it holds its lease",
			c.FencePeriod, c.SessionTTL)
	case c.WaitTime <= 0 || c.WaitTime > 10*time.Minute:
		return invalid("WaitTime %v must be positive and at most 10m", c.WaitTime)
	case c.BackoffBase <= 0 || c.BackoffMax < c.BackoffBase || c.BackoffMax > 24*time.Hour:
		// The backoff doubles its step up to BackoffMax: beyond about 146
		// years the double overflows (a negative wait, a panic).
		return invalid("BackoffBase %v must be positive and BackoffMax %v at least BackoffBase and at most 24h", c.BackoffBase, c.BackoffMax)
	case c.ReleasedRetention < 0:
		return invalid("ReleasedRetention %v must not be negative", c.ReleasedRetention)
	case c.DeregisterCriticalAfter < time.Minute:
		return invalid("DeregisterCriticalAfter %v must be at least 1m (Consul's minimum)", c.DeregisterCriticalAfter)
	case c.EventBuffer < 0 || c.EventBuffer > maxEventBuffer:
		// Join allocates it as a channel: math.MaxInt made Join panic.
		return invalid("EventBuffer %d must be between 0 and %d", c.EventBuffer, maxEventBuffer)
	}
	return nil
}

// validKeyPrefix reports whether prefix is a usable KV root: '/'-separated
// segments, none empty, "." or "..". The view query sends the prefix in a
// URL path, which the agent's router cleans ("a//b" becomes "a/b"), while
// the member keys travel in transaction bodies as written: with such a
// prefix the view lists other keys and no member ever sees itself.
func validKeyPrefix(prefix string) bool {
	if prefix == "" {
		return false
	}
	for seg := range strings.SplitSeq(prefix, "/") {
		if seg == "" || seg == "." || seg == ".." {
			return false
		}
	}
	return true
}

// LogValue implements slog.LogValuer: the settings without the ACL token or
// TLS key material.
func (c Config) LogValue() slog.Value {
	return slog.GroupValue(
		slog.String("address", c.API.Address),
		slog.String("scheme", c.API.Scheme),
		slog.String("datacenter", c.API.Datacenter),
		slog.Bool("token_set", c.API.Token != "" || c.API.TokenFile != ""),
		slog.String("cluster", c.Cluster),
		slog.String("key_prefix", c.KeyPrefix),
		slog.Duration("session_ttl", c.SessionTTL),
		slog.Duration("renew_interval", c.RenewInterval),
		slog.Duration("request_timeout", c.RequestTimeout),
		slog.Duration("fence_period", c.FencePeriod),
		slog.Duration("wait_time", c.WaitTime),
	)
}

// String is LogValue's text, so that printing a Config never shows a token.
func (c Config) String() string { return c.LogValue().String() }

// viewTiming returns the view query's blocking wait and the timeout of one
// query: WaitTime plus Consul's jitter (up to wait/16) plus RequestTimeout,
// shortened to FencePeriod (which Validate keeps above RequestTimeout) with
// the wait reduced to match.
func (c Config) viewTiming() (wait, timeout time.Duration) {
	wait = c.WaitTime
	timeout = wait + wait/16 + c.RequestTimeout
	if timeout > c.FencePeriod {
		timeout = c.FencePeriod
		wait = (timeout - c.RequestTimeout) * 16 / 17
	}
	return wait, timeout
}

func (c Config) serviceName() string {
	if c.ServiceName != "" {
		return c.ServiceName
	}
	return "fraktor-" + c.Cluster
}

func (c Config) logger() *slog.Logger {
	if c.Logger == nil {
		return slog.New(slog.NewTextHandler(io.Discard, nil))
	}
	return c.Logger
}

// configError matches ErrInvalidConfig and cluster.ErrInvalidProviderConfig.
type configError struct{ msg string }

func (e *configError) Error() string { return "consul: invalid config: " + e.msg }

func (e *configError) Is(target error) bool {
	return target == ErrInvalidConfig || target == cluster.ErrInvalidProviderConfig
}

func invalid(format string, args ...any) error {
	return &configError{msg: fmt.Sprintf(format, args...)}
}
