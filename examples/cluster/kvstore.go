package main

import (
	"encoding/json"
	"errors"
	"fmt"

	"github.com/hashicorp/consul/api"

	"github.com/fraktor-go/fraktor/cluster"
)

// kvStore is the accountStore of --join mode: the accounts live in Consul's
// KV store, where every process reaches them. Each change is a
// read-check-write with check-and-set on the key's modify index, so
// concurrent writers (a stale activation and its successor) cannot both
// win. Token epochs come from Consul's raft index, so they grow across runs
// and records left by an earlier run never refuse a later one.
type kvStore struct {
	kv     *api.KV
	prefix string
}

type kvRecord struct {
	Token   cluster.FencingToken
	Balance int64
	Applied map[string]int64
	Refused map[string]bool
}

func newKVStore(addr, clusterName string) (*kvStore, error) {
	c, err := api.NewClient(&api.Config{Address: addr})
	if err != nil {
		return nil, fmt.Errorf("demo: consul client: %w", err)
	}
	return &kvStore{kv: c.KV(), prefix: "fraktor-demo/" + clusterName + "/accounts/"}, nil
}

var errContention = errors.New("demo: store: too many concurrent writers")

func (s *kvStore) update(id string, tok cluster.FencingToken, fn func(*kvRecord)) (kvRecord, error) {
	key := s.prefix + id
	for range 50 {
		pair, _, err := s.kv.Get(key, nil)
		if err != nil {
			return kvRecord{}, fmt.Errorf("demo: store: %w", err)
		}
		rec, idx := kvRecord{}, uint64(0)
		if pair != nil {
			if err := json.Unmarshal(pair.Value, &rec); err != nil {
				return kvRecord{}, fmt.Errorf("demo: store: %s: %w", key, err)
			}
			idx = pair.ModifyIndex
		}
		if tok.Less(rec.Token) {
			return kvRecord{}, errStale
		}
		rec.Token = tok
		if rec.Applied == nil {
			rec.Applied = map[string]int64{}
		}
		if rec.Refused == nil {
			rec.Refused = map[string]bool{}
		}
		fn(&rec)
		b, err := json.Marshal(&rec)
		if err != nil {
			return kvRecord{}, fmt.Errorf("demo: store: %w", err)
		}
		ok, _, err := s.kv.CAS(&api.KVPair{Key: key, Value: b, ModifyIndex: idx}, nil)
		if err != nil {
			return kvRecord{}, fmt.Errorf("demo: store: %w", err)
		}
		if ok {
			return rec, nil
		}
	}
	return kvRecord{}, errContention
}

func (s *kvStore) load(id string, tok cluster.FencingToken) (accountState, error) {
	rec, err := s.update(id, tok, func(*kvRecord) {})
	if err != nil {
		return accountState{}, err
	}
	st := accountState{token: tok, balance: rec.Balance, applied: rec.Applied, refused: map[string]struct{}{}}
	for k := range rec.Refused {
		st.refused[k] = struct{}{}
	}
	return st, nil
}

func (s *kvStore) commit(id string, tok cluster.FencingToken, req string, delta int64, applied bool) error {
	_, err := s.update(id, tok, func(r *kvRecord) {
		if applied {
			r.Applied[req] = delta
			r.Balance += delta
		} else {
			r.Refused[req] = true
		}
	})
	return err
}
