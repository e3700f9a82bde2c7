package remotebench

import (
	"errors"
	"time"
)

// The mixed workload: a local actor↔actor ping-pong of n round trips runs
// in the measuring process while the same process streams n one-way
// messages to the peer (OneWay); the run ends when both have finished. It
// shows what remote traffic does to local latency on the same two cores:
// the latencies recorded are the local round trips'.

// localPinger is the local half of the mixed workload, implemented by every
// client: n sequential round trips between two local actors (goroutines for
// the raw baseline), each one's duration stored in lat.
type localPinger interface {
	LocalPingPong(n int, lat []time.Duration) (int, error)
}

// Mixed runs the mixed workload on c: n local round trips (durations in
// lat) alongside n remote one-way messages. It returns the smaller of the
// two counts.
func Mixed(c Client, n int, lat []time.Duration) (int, error) {
	lp, ok := c.(localPinger)
	if !ok {
		return 0, ErrUnknownImpl
	}
	if n < 1 || len(lat) < n {
		return 0, ErrBadSize
	}
	type res struct {
		got int
		err error
	}
	remote := make(chan res, 1)
	go func() {
		got, err := c.OneWay(n)
		remote <- res{got, err}
	}()
	local, lerr := lp.LocalPingPong(n, lat)
	r := <-remote
	return min(local, r.got), errors.Join(lerr, r.err)
}

// rawLocalPingPong is the raw baseline's local half: two goroutines over
// 1-slot channels.
func rawLocalPingPong(n int, lat []time.Duration) (int, error) {
	if n < 1 || len(lat) < n {
		return 0, ErrBadSize
	}
	pings, pongs := make(chan struct{}, 1), make(chan struct{}, 1)
	go func() {
		for range pings {
			pongs <- struct{}{}
		}
	}()
	defer close(pings)
	last := time.Now()
	for i := range n {
		pings <- struct{}{}
		<-pongs
		now := time.Now()
		lat[i] = now.Sub(last)
		last = now
	}
	return n, nil
}

// LocalPingPong implements localPinger.
func (c *rawClient) LocalPingPong(n int, lat []time.Duration) (int, error) {
	return rawLocalPingPong(n, lat)
}
