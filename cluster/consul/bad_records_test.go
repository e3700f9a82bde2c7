package consul

import (
	"context"
	"log/slog"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/hashicorp/consul/api"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/fraktor-go/fraktor/cluster"
	"github.com/fraktor-go/fraktor/internal/testconsul"
)

// A well-formed member record that no session holds (an operator's put, a
// KV import) is not a member: it appears in no view, and the incarnation
// it names can still join (taking the key over).
func TestConsulSessionlessRecordIsNotAMember(t *testing.T) {
	agent := testconsul.Start(t)
	cfg := testConfig(t, agent)
	p := newProvider(t, cfg)
	a := joinMember(t, p, testMember("a", 1))
	waitView(t, a, "a", hasMembers("a#1"))

	ks := newKeyspace(cfg.KeyPrefix, cfg.Cluster)
	idx := putRecord(t, apiClient(t, agent), ks.member(testMember("c", 1)), testMember("c", 1))
	top := waitView(t, a, "the put seen", func(top cluster.Topology) bool { return top.Epoch >= idx })
	assert.Equal(t, []string{"a#1"}, memberKeys(top), "a record without a session is not a member")

	c := joinMember(t, p, testMember("c", 1))
	waitView(t, a, "c joined", hasMembers("a#1", "c#1"))
	require.NoError(t, c.Leave(context.Background()))
	waitView(t, a, "c left", hasMembers("a#1"))
}

// A released marker of a member the view holds was written by someone
// else: Leave writes the marker and deletes the member key in one
// transaction, and Join refuses an incarnation that has one. It is skipped
// as a bad record. Before, the members reported the live member as released
// (Released, MembershipEventMemberReleased), and the cluster runtime's
// placement barrier stops waiting for a released member's acknowledgement
// although it still runs its grains.
func TestConsulReleasedMarkerOfLiveMemberIgnored(t *testing.T) {
	agent := testconsul.Start(t)
	cfg := testConfig(t, agent)
	p := newProvider(t, cfg)
	a := joinMember(t, p, testMember("a", 1))
	b := joinMember(t, p, testMember("b", 1))
	waitView(t, b, "a and b", hasMembers("a#1", "b#1"))

	ks := newKeyspace(cfg.KeyPrefix, cfg.Cluster)
	idx := putRecord(t, apiClient(t, agent), ks.releasedKey(testMember("a", 1)), testMember("a", 1))
	top := waitView(t, b, "the marker seen", func(top cluster.Topology) bool { return top.Epoch >= idx })
	require.Equal(t, []string{"a#1", "b#1"}, memberKeys(top))
	// Publish emits a view's released events before it delivers the view.
	for range len(b.Events()) {
		ev := <-b.Events()
		assert.NotEqual(t, cluster.MembershipEventMemberReleased, ev.Kind, "event %v", ev)
	}
	assert.Empty(t, b.Released(), "a live member reported released")

	require.NoError(t, a.Leave(context.Background()))
	waitView(t, b, "a left", hasMembers("b#1"))
}

// Each bad record is logged once, not once per view: three bad keys and a
// run of membership changes give three warnings.
func TestConsulBadRecordLoggedOnce(t *testing.T) {
	agent := testconsul.Start(t)
	cfg := testConfig(t, agent)
	logs := &logCapture{}
	cfg.Logger = slog.New(logs)
	p := newProvider(t, cfg)
	a := joinMember(t, p, testMember("a", 1))
	client := apiClient(t, agent)
	ks := newKeyspace(cfg.KeyPrefix, cfg.Cluster)
	bad := []string{ks.members() + "x/1", ks.members() + "y/notanumber", ks.released() + "z/1"}
	for _, k := range bad {
		_, err := client.KV().Put(&api.KVPair{Key: k, Value: []byte("{")}, nil)
		require.NoError(t, err)
	}
	for i := uint64(1); i <= 4; i++ {
		b := joinMember(t, p, testMember("b", i))
		waitView(t, a, "b joined", hasMembers("a#1", b.Self().Key()))
		require.NoError(t, b.Leave(context.Background()))
		waitView(t, a, "b left", hasMembers("a#1"))
	}
	for _, k := range bad {
		assert.Equal(t, 1, logs.count("skipping record", k), "warnings for %s:\n%s", k, logs.String())
	}
}

// A member or released key in another spelling than the one the keyspace
// writes (an escaped letter, a leading zero) decodes to a member too, but
// it is a bad record: skipped and logged. Before, "%61/1" held by a live
// session put a#1 in the view twice, "c/01" made c#1 a member that no Join
// of c#1 ever checks or takes, and "%64/1" reported d#1 released, so a
// later d#1 (whose Join checks only the canonical marker) would have been
// live and released at once.
func TestConsulNonCanonicalKeysAreBadRecords(t *testing.T) {
	agent := testconsul.Start(t)
	cfg := testConfig(t, agent)
	logs := &logCapture{}
	cfg.Logger = slog.New(logs)
	p := newProvider(t, cfg)
	a := joinMember(t, p, testMember("a", 1))
	waitView(t, a, "a", hasMembers("a#1"))

	client := apiClient(t, agent)
	session, _, err := client.Session().CreateNoChecks(&api.SessionEntry{TTL: "10s", Behavior: api.SessionBehaviorDelete}, nil)
	require.NoError(t, err)
	t.Cleanup(func() { _, _ = client.Session().Destroy(session, nil) })
	ks := newKeyspace(cfg.KeyPrefix, cfg.Cluster)
	write := func(key string, m cluster.Member, session string, releasedAt time.Time) string {
		value, err := encodeRecord(m, releasedAt)
		require.NoError(t, err)
		ok := true
		if session != "" {
			ok, _, err = client.KV().Acquire(&api.KVPair{Key: key, Value: value, Session: session}, nil)
		} else {
			_, err = client.KV().Put(&api.KVPair{Key: key, Value: value}, nil)
		}
		require.NoError(t, err)
		require.True(t, ok, "%s not taken", key)
		return key
	}
	bad := []string{
		write(ks.members()+"%61/1", testMember("a", 1), session, time.Time{}),
		write(ks.members()+"c/01", testMember("c", 1), session, time.Time{}),
		write(ks.released()+"%64/1", testMember("d", 1), "", time.Now()),
	}
	_, meta, err := client.KV().List(ks.root, &api.QueryOptions{RequireConsistent: true})
	require.NoError(t, err)
	top := waitView(t, a, "the writes seen", func(top cluster.Topology) bool { return top.Epoch >= meta.LastIndex })
	assert.Equal(t, []string{"a#1"}, memberKeys(top), "non-canonical member keys are not members")
	assert.Empty(t, a.Released(), "a non-canonical marker is no release")
	for _, k := range bad {
		assert.Equal(t, 1, logs.count("skipping record", k, "canonical"), "warnings for %s:\n%s", k, logs.String())
	}

	// The canonical records of the same IDs still work. Incarnation records
	// are read only at their canonical key: another spelling refuses nothing.
	_, err = client.KV().Put(&api.KVPair{Key: ks.incarnations() + "%62", Value: []byte("9")}, nil)
	require.NoError(t, err)
	b := joinMember(t, p, testMember("b", 1))
	c := joinMember(t, p, testMember("c", 1))
	waitView(t, a, "b and c joined", hasMembers("a#1", "b#1", "c#1"))
	require.NoError(t, b.Leave(context.Background()))
	waitView(t, a, "b left", hasMembers("a#1", "c#1"))
	assert.Equal(t, []string{"b#1"}, memberKeys(cluster.Topology{Members: a.Released()}))
	require.NoError(t, c.Leave(context.Background()))
}

// putRecord writes m's record at key without a session and returns the
// key's ModifyIndex.
func putRecord(t *testing.T, client *api.Client, key string, m cluster.Member) uint64 {
	t.Helper()
	value, err := encodeRecord(m, time.Time{})
	require.NoError(t, err)
	_, err = client.KV().Put(&api.KVPair{Key: key, Value: value}, nil)
	require.NoError(t, err)
	kv, _, err := client.KV().Get(key, &api.QueryOptions{RequireConsistent: true})
	require.NoError(t, err)
	require.NotNil(t, kv)
	return kv.ModifyIndex
}

// logCapture is a slog.Handler that keeps every record's text.
type logCapture struct {
	mu    sync.Mutex
	lines []string
}

func (l *logCapture) Enabled(context.Context, slog.Level) bool { return true }

func (l *logCapture) Handle(_ context.Context, r slog.Record) error {
	var b strings.Builder
	b.WriteString(r.Level.String() + " " + r.Message)
	r.Attrs(func(a slog.Attr) bool {
		b.WriteString(" " + a.String())
		return true
	})
	l.mu.Lock()
	l.lines = append(l.lines, b.String())
	l.mu.Unlock()
	return nil
}

func (l *logCapture) WithAttrs([]slog.Attr) slog.Handler { return l }
func (l *logCapture) WithGroup(string) slog.Handler      { return l }

// count returns how many lines contain every one of parts.
func (l *logCapture) count(parts ...string) int {
	l.mu.Lock()
	defer l.mu.Unlock()
	n := 0
	for _, line := range l.lines {
		all := true
		for _, p := range parts {
			all = all && strings.Contains(line, p)
		}
		if all {
			n++
		}
	}
	return n
}

func (l *logCapture) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return strings.Join(l.lines, "\n")
}
