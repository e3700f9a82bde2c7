package benchmarks

import (
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestWorkloads runs every workload of every implementation once at a tiny
// size and checks its result (message counts, sums, meetings), so a
// benchmark that silently does nothing, or loses messages, fails here.
func TestWorkloads(t *testing.T) {
	const n = 1000
	const depth = 3
	const idleN = 10000
	// Each case returns what the workload returned and what it must
	// return; checked by the subtest that ran it.
	type result struct {
		got, want int64
		err       error
		latencies bool    // the ping-pong latencies in lat must be recorded
		perActor  float64 // bytes per idle actor, for IdleActor
	}
	expect := func(want int) func(int, error) result {
		return func(got int, err error) result { return result{got: int64(got), want: int64(want), err: err} }
	}
	cnt := expect(n)
	lat := make([]time.Duration, n)
	pp := func(got int, err error) result {
		r := cnt(got, err)
		r.latencies = true
		return r
	}
	sky := func(got int64, err error) result { return result{got: got, want: skynetSum(depth), err: err} }
	idle := func(got int, per float64, err error) result {
		return result{got: int64(got), want: idleN, err: err, perActor: per}
	}
	cases := []struct {
		name string
		run  func(t *testing.T) result
	}{
		{"Tell/fraktor", func(t *testing.T) result { return cnt(tellFraktor(fraktorSys(t), n)) }},
		{"Tell/protoactor", func(t *testing.T) result { return cnt(tellProto(protoSys(t), n)) }},
		{"Tell/raw-chan", func(t *testing.T) result { return cnt(tellChan(n)) }},
		{"Tell/raw-spsc", func(t *testing.T) result { return cnt(tellSPSC(n)) }},
		{"TellPairs/fraktor", func(t *testing.T) result { return cnt(tellPairsFraktor(fraktorSys(t), n)) }},
		{"TellPairs/protoactor", func(t *testing.T) result { return cnt(tellPairsProto(protoSys(t), n)) }},
		{"TellPairs/raw-chan", func(t *testing.T) result { return cnt(tellPairsChan(n)) }},
		{"PingPong/fraktor", func(t *testing.T) result { return pp(pingPongFraktor(fraktorSys(t), n, lat)) }},
		{"PingPong/protoactor", func(t *testing.T) result { return pp(pingPongProto(protoSys(t), n, lat)) }},
		{"PingPong/raw-chan", func(t *testing.T) result { return pp(pingPongChan(n, lat)) }},
		{"PingPong/raw-spsc", func(t *testing.T) result { return pp(pingPongSPSC(n, lat)) }},
		{"Request/fraktor", func(t *testing.T) result { return cnt(requestFraktor(fraktorSys(t), n)) }},
		{"Request/protoactor", func(t *testing.T) result { return cnt(requestProto(protoSys(t), n)) }},
		{"Request/raw-chan", func(t *testing.T) result { return cnt(requestChan(n)) }},
		{"RequestFuture/fraktor", func(t *testing.T) result { return cnt(requestFutureFraktor(fraktorSys(t), n)) }},
		{"FanOut/fraktor", func(t *testing.T) result { return pp(fanOutFraktor(fraktorSys(t), 64, n, lat)) }},
		{"FanOut/protoactor", func(t *testing.T) result { return pp(fanOutProto(protoSys(t), 64, n, lat)) }},
		{"FanOut/raw-go", func(t *testing.T) result { return pp(fanOutGo(64, n, lat)) }},
		{"SpawnStop/fraktor", func(t *testing.T) result { return cnt(spawnStopFraktor(fraktorSys(t), n)) }},
		{"SpawnStop/protoactor", func(t *testing.T) result { return cnt(spawnStopProto(protoSys(t), n)) }},
		{"SpawnStop/raw-go", func(t *testing.T) result { return cnt(spawnStopGo(n)) }},
		{"SpawnStopSync/fraktor", func(t *testing.T) result { return cnt(spawnStopSyncFraktor(fraktorSys(t), n)) }},
		{"SpawnStopSync/protoactor", func(t *testing.T) result { return cnt(spawnStopSyncProto(protoSys(t), n)) }},
		{"SpawnStopSync/raw-go", func(t *testing.T) result { return cnt(spawnStopSyncGo(n)) }},
		{"SkyNet/fraktor", func(t *testing.T) result { return sky(skynetFraktor(fraktorSys(t), depth)) }},
		{"SkyNet/protoactor", func(t *testing.T) result { return sky(skynetProto(protoSys(t), depth)) }},
		{"SkyNet/raw-go", func(t *testing.T) result { return sky(skynetGo(depth)) }},
		// Idle actors at a size whose memory (several MB) stands clear of
		// what the GC frees between the readings.
		{"IdleActor/fraktor", func(t *testing.T) result { return idle(idleFraktor(fraktorSys(t), idleN)) }},
		{"IdleActor/protoactor", func(t *testing.T) result { return idle(idleProto(protoSys(t), idleN)) }},
		{"IdleActor/raw-go", func(t *testing.T) result { return idle(idleGo(idleN)) }},
		{"SavinaCounting/fraktor", func(t *testing.T) result { return cnt(countingFraktor(fraktorSys(t), n)) }},
		{"SavinaCounting/protoactor", func(t *testing.T) result { return cnt(countingProto(protoSys(t), n)) }},
		{"SavinaCounting/raw-chan", func(t *testing.T) result { return cnt(countingChan(n)) }},
		{"SavinaForkJoin/fraktor", func(t *testing.T) result { return cnt(forkJoinFraktor(fraktorSys(t), n)) }},
		{"SavinaForkJoin/protoactor", func(t *testing.T) result { return cnt(forkJoinProto(protoSys(t), n)) }},
		{"SavinaForkJoin/raw-chan", func(t *testing.T) result { return cnt(forkJoinChan(n)) }},
		{"SavinaThreadRing/fraktor", func(t *testing.T) result { return cnt(threadRingFraktor(fraktorSys(t), n)) }},
		{"SavinaThreadRing/protoactor", func(t *testing.T) result { return cnt(threadRingProto(protoSys(t), n)) }},
		{"SavinaThreadRing/raw-chan", func(t *testing.T) result { return cnt(threadRingChan(n)) }},
		{"SavinaChameneos/fraktor", func(t *testing.T) result { return expect(2 * n)(chameneosFraktor(fraktorSys(t), n)) }},
		{"SavinaChameneos/protoactor", func(t *testing.T) result { return expect(2 * n)(chameneosProto(protoSys(t), n)) }},
		{"SavinaChameneos/raw-chan", func(t *testing.T) result { return expect(2 * n)(chameneosChan(n)) }},
		{"SavinaBig/fraktor", func(t *testing.T) result { return cnt(bigFraktor(fraktorSys(t), n)) }},
		{"SavinaBig/protoactor", func(t *testing.T) result { return cnt(bigProto(protoSys(t), n)) }},
		{"SavinaBig/raw-chan", func(t *testing.T) result { return cnt(bigChan(n)) }},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			clear(lat)
			r := tc.run(t)
			require.NoError(t, r.err)
			assert.Equal(t, r.want, r.got)
			if r.latencies {
				p50, p99 := percentiles(lat)
				assert.Positive(t, p50, "p50 of the recorded round trips")
				assert.GreaterOrEqual(t, p99, p50)
			}
			if strings.HasPrefix(tc.name, "IdleActor/") {
				assert.Positive(t, r.perActor, "bytes per idle actor")
			}
		})
	}
}
