package consul

import (
	"context"
	"fmt"

	"github.com/hashicorp/consul/api"

	"github.com/fraktor-go/fraktor/cluster"
)

var _ cluster.Evictor = (*Provider)(nil)

// Evict implements cluster.Evictor: it destroys the session that holds m's
// member key, as an operator's forced removal would. Consul then deletes the
// key, every member sees m gone in its next view, and m finds itself missing
// (its lease is revoked: the cluster runtime fences it). A member with no key
// (gone already) is not an error. The key is read in a transaction, where it
// travels in the body: in a URL path, the agent's router cleans the dot
// segments that the IDs "." and ".." leave in it, and the request would
// name another key (TestConsulEvictOddIDs). As in Join and Leave, each
// request is bounded by RequestTimeout and ctx, and errors wrap
// ErrUnreachable or ErrRequestFailed (TestEvictUnansweredIsBoundedAndUnreachable).
func (p *Provider) Evict(ctx context.Context, m cluster.Member) error {
	keys := newKeyspace(p.cfg.KeyPrefix, p.cfg.Cluster)
	rctx, cancel := context.WithTimeout(ctx, p.cfg.RequestTimeout)
	ok, resp, _, err := p.client.Txn().Txn(api.TxnOps{{KV: &api.KVTxnOp{Verb: api.KVGetOrEmpty, Key: keys.member(m)}}},
		(&api.QueryOptions{RequireConsistent: true}).WithContext(rctx))
	cancel()
	if err != nil {
		return fmt.Errorf("consul: evict %s: %w", m.Key(), classify(err))
	}
	if !ok || len(resp.Results) != 1 {
		return fmt.Errorf("consul: evict %s: %w: %s", m.Key(), ErrRequestFailed, txnErrors(resp))
	}
	pair := resp.Results[0].KV
	if pair == nil || pair.Session == "" {
		return nil
	}
	rctx, cancel = context.WithTimeout(ctx, p.cfg.RequestTimeout)
	defer cancel()
	if _, err := p.client.Session().Destroy(pair.Session, (&api.WriteOptions{}).WithContext(rctx)); err != nil {
		return fmt.Errorf("consul: evict %s: %w", m.Key(), classify(err))
	}
	return nil
}
