package main

import (
	"encoding/json"
	"errors"
	"fmt"
	"strings"

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
	// Carried is the sum of the applied requests that compact removed:
	// Balance = Carried + Σ Applied.
	Carried int64 `json:",omitempty"`
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
	return s.rewrite(s.prefix+id, func(rec *kvRecord) (bool, error) {
		if tok.Less(rec.Token) {
			return false, errStale
		}
		rec.Token = tok
		if rec.Applied == nil {
			rec.Applied = map[string]int64{}
		}
		if rec.Refused == nil {
			rec.Refused = map[string]bool{}
		}
		fn(rec)
		return true, nil
	})
}

// rewrite applies change to the record at key (a zero record when there is
// none) and writes it back with check-and-set, reading it again after each
// lost race. change returns false to leave the record as it is, or an error
// to give up.
func (s *kvStore) rewrite(key string, change func(*kvRecord) (bool, error)) (kvRecord, error) {
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
		if write, err := change(&rec); err != nil || !write {
			return rec, err
		}
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
	st := accountState{token: tok, balance: rec.Balance, applied: rec.Applied, refused: map[string]struct{}{}, carried: rec.Carried}
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

// compact removes the ledger entries whose request ID starts with own from
// every account, adding the applied amounts to Carried, and returns how many
// it removed. A process calls it when its check is done: the entries are
// kept only so that the check can find its requests, and the records stay
// in Consul across runs, so without it they grew with every request of
// every run (Consul refuses a value over 512 KiB; each write rewrites the
// whole record) (TestDemoWithConsul/join). Balance and the token stay as
// they are, and check-and-set keeps the writes of live activations, which
// read the record afresh for each change; an activation that loaded the
// entries keeps them in memory, with its own carried, so its audit still
// adds up. Entries of a run that never got to compact (a process killed)
// stay.
func (s *kvStore) compact(own string) (int, error) {
	if own == "" {
		return 0, errors.New("demo: store: compact needs a request prefix")
	}
	keys, _, err := s.kv.Keys(s.prefix, "", nil)
	if err != nil {
		return 0, fmt.Errorf("demo: store: compact: %w", err)
	}
	removed := 0
	for _, key := range keys {
		n := 0
		_, err := s.rewrite(key, func(rec *kvRecord) (bool, error) {
			n = 0
			for req, d := range rec.Applied {
				if strings.HasPrefix(req, own) {
					rec.Carried += d
					delete(rec.Applied, req)
					n++
				}
			}
			for req := range rec.Refused {
				if strings.HasPrefix(req, own) {
					delete(rec.Refused, req)
					n++
				}
			}
			return n > 0, nil
		})
		if err != nil {
			return removed, fmt.Errorf("compact %s: %w", key, err)
		}
		removed += n
	}
	return removed, nil
}
