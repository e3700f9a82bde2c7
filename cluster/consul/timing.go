package consul

import "github.com/fraktor-go/fraktor/cluster"

var _ cluster.LeaseTimer = (*Provider)(nil)

// LeaseTiming implements cluster.LeaseTimer, so cluster.Config.Validate
// checks the single-activation relations against this provider and a zero
// WaitOut is computed from its fence period. The lease TTL is SessionTTL:
// Consul never invalidates a session sooner than its TTL after the last
// renewal (it may take up to twice as long, see docs/membership.md), so it
// is the bound the relations need.
func (p *Provider) LeaseTiming() cluster.LeaseTiming {
	return cluster.LeaseTiming{
		RenewInterval: p.cfg.RenewInterval,
		RenewTimeout:  p.cfg.RequestTimeout,
		FencePeriod:   p.cfg.FencePeriod,
		LeaseTTL:      p.cfg.SessionTTL,
	}
}
