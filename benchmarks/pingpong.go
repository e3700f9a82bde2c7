package benchmarks

import (
	"slices"
	"time"

	proto "github.com/asynkron/protoactor-go/actor"

	fraktor "github.com/fraktor-go/fraktor/actor"
)

// Ping-pong: a pinger actor sends ping to an echo actor (with itself as
// the sender), the echo responds pong, n times in sequence: the latency of
// an actor↔actor round trip. The pinger reads the clock once per round
// trip and stores the time since the previous reading in lat (which must
// hold n entries), so percentiles come from every round trip. The result
// is the number of pongs the pinger received.

// pingPongFraktor runs Ping-pong on a fraktor-go system.
func pingPongFraktor(sys *fraktor.System, n int, lat []time.Duration) (int, error) {
	if n < 1 || len(lat) < n {
		return 0, ErrBadSize
	}
	root := sys.Root()
	echo := root.Spawn(fraktor.PropsFromFunc(func(c fraktor.Context) {
		if _, ok := c.Message().(*ping); ok {
			c.Respond(pongMsg)
		}
	}))
	defer root.Stop(echo)
	done := make(chan struct{})
	got := 0
	var last time.Time
	pinger := root.Spawn(fraktor.PropsFromFunc(func(c fraktor.Context) {
		switch c.Message().(type) {
		case *start:
			last = time.Now()
			c.Request(echo, pingMsg)
		case *pong:
			now := time.Now()
			lat[got] = now.Sub(last)
			last = now
			got++
			if got == n {
				close(done)
				return
			}
			c.Request(echo, pingMsg)
		}
	}))
	defer root.Stop(pinger)
	root.Send(pinger, startMsg)
	if err := await(done); err != nil {
		return 0, err
	}
	return got, nil
}

// pingPongProto runs Ping-pong on a protoactor-go system.
func pingPongProto(sys *proto.ActorSystem, n int, lat []time.Duration) (int, error) {
	if n < 1 || len(lat) < n {
		return 0, ErrBadSize
	}
	root := sys.Root
	echo := root.Spawn(proto.PropsFromFunc(func(c proto.Context) {
		if _, ok := c.Message().(*ping); ok {
			c.Respond(pongMsg)
		}
	}))
	defer root.Stop(echo)
	done := make(chan struct{})
	got := 0
	var last time.Time
	pinger := root.Spawn(proto.PropsFromFunc(func(c proto.Context) {
		switch c.Message().(type) {
		case *start:
			last = time.Now()
			c.Request(echo, pingMsg)
		case *pong:
			now := time.Now()
			lat[got] = now.Sub(last)
			last = now
			got++
			if got == n {
				close(done)
				return
			}
			c.Request(echo, pingMsg)
		}
	}))
	defer root.Stop(pinger)
	root.Send(pinger, startMsg)
	if err := await(done); err != nil {
		return 0, err
	}
	return got, nil
}

// pingPongChan: the same between two goroutines over two channels of one
// slot each.
func pingPongChan(n int, lat []time.Duration) (int, error) {
	if n < 1 || len(lat) < n {
		return 0, ErrBadSize
	}
	pings, pongs := make(chan *ping, 1), make(chan *pong, 1)
	go func() {
		for range n {
			<-pings
			pongs <- pongMsg
		}
	}()
	got := 0
	last := time.Now()
	for range n {
		pings <- pingMsg
		if <-pongs != nil {
			now := time.Now()
			lat[got] = now.Sub(last)
			last = now
			got++
		}
	}
	return got, nil
}

// pingPongSPSC: the same over two lock-free SPSC rings: the machine's
// limit for a round trip between two goroutines on two cores.
func pingPongSPSC(n int, lat []time.Duration) (int, error) {
	if n < 1 || len(lat) < n {
		return 0, ErrBadSize
	}
	pings, pongs := newSPSC[*ping](2), newSPSC[*pong](2)
	go func() {
		for range n {
			pings.pop()
			pongs.push(pongMsg)
		}
	}()
	got := 0
	last := time.Now()
	for range n {
		pings.push(pingMsg)
		if pongs.pop() != nil {
			now := time.Now()
			lat[got] = now.Sub(last)
			last = now
			got++
		}
	}
	return got, nil
}

// percentiles sorts lat in place and returns its p50 and p99.
func percentiles(lat []time.Duration) (p50, p99 time.Duration) {
	if len(lat) == 0 {
		return 0, 0
	}
	slices.Sort(lat)
	return lat[len(lat)*50/100], lat[min(len(lat)-1, len(lat)*99/100)]
}
