package benchmarks

import (
	"time"

	proto "github.com/asynkron/protoactor-go/actor"

	fraktor "github.com/fraktor-go/fraktor/actor"
)

// Fan-out/fan-in under load: a driver actor sends one request to each of
// `actors` actors at once (10,000 in the benchmark, on two workers), each
// answers it, and the driver starts the next round when every answer of the
// round is in; n messages in all. Every message carries the time it was
// sent; the driver records, per answer, how long the round trip took while
// the other 9,999 were queued with it: the latency a user sees when one
// request joins a burst. The result is the number of answers.

// FanOutActors is the number of actors the benchmark fans out to.
const FanOutActors = 10_000

// fanMsg is one request; actor i answers msgs[i] with itself, so a round
// reuses the messages of the round before (nothing is allocated per message).
type fanMsg struct{ sent time.Duration }

// fanRound sizes the rounds of n messages over `actors` actors: the number
// of actors addressed in round r.
func fanRound(n, actors, r int) int { return min(actors, n-r*actors) }

// fanOutFraktor runs the workload on a fraktor-go system.
func fanOutFraktor(sys *fraktor.System, actors, n int, lat []time.Duration) (int, error) {
	if actors < 1 || n < 1 || len(lat) < n {
		return 0, ErrBadSize
	}
	root := sys.Root()
	echo := fraktor.PropsFromFunc(func(c fraktor.Context) {
		if m, ok := c.Message().(*fanMsg); ok {
			c.Respond(m)
		}
	})
	pids := make([]*fraktor.PID, actors)
	for i := range pids {
		pids[i] = root.Spawn(echo)
	}
	defer func() {
		for _, p := range pids {
			root.Stop(p)
		}
	}()
	msgs := make([]fanMsg, actors)
	start := time.Now()
	done := make(chan struct{})
	got, round, pending := 0, 0, 0
	send := func(c fraktor.Context) {
		k := fanRound(n, actors, round)
		pending = k
		for i := range k {
			msgs[i].sent = time.Since(start)
			c.Request(pids[i], &msgs[i])
		}
	}
	driver := root.Spawn(fraktor.PropsFromFunc(func(c fraktor.Context) {
		switch m := c.Message().(type) {
		case *ping: // start
			send(c)
		case *fanMsg:
			lat[got] = time.Since(start) - m.sent
			got++
			if pending--; pending > 0 {
				return
			}
			if got == n {
				close(done)
				return
			}
			round++
			send(c)
		}
	}))
	defer root.Stop(driver)
	root.Send(driver, pingMsg)
	if err := await(done); err != nil {
		return got, err
	}
	return got, nil
}

// fanOutProto runs the workload on a protoactor-go system.
func fanOutProto(sys *proto.ActorSystem, actors, n int, lat []time.Duration) (int, error) {
	if actors < 1 || n < 1 || len(lat) < n {
		return 0, ErrBadSize
	}
	root := sys.Root
	echo := proto.PropsFromFunc(func(c proto.Context) {
		if m, ok := c.Message().(*fanMsg); ok {
			c.Respond(m)
		}
	})
	pids := make([]*proto.PID, actors)
	for i := range pids {
		pids[i] = root.Spawn(echo)
	}
	defer func() {
		for _, p := range pids {
			root.Stop(p)
		}
	}()
	msgs := make([]fanMsg, actors)
	start := time.Now()
	done := make(chan struct{})
	got, round, pending := 0, 0, 0
	send := func(c proto.Context) {
		k := fanRound(n, actors, round)
		pending = k
		for i := range k {
			msgs[i].sent = time.Since(start)
			c.Request(pids[i], &msgs[i])
		}
	}
	driver := root.Spawn(proto.PropsFromFunc(func(c proto.Context) {
		switch m := c.Message().(type) {
		case *ping:
			send(c)
		case *fanMsg:
			lat[got] = time.Since(start) - m.sent
			got++
			if pending--; pending > 0 {
				return
			}
			if got == n {
				close(done)
				return
			}
			round++
			send(c)
		}
	}))
	defer root.Stop(driver)
	root.Send(driver, pingMsg)
	if err := await(done); err != nil {
		return got, err
	}
	return got, nil
}

// fanOutGo: the same with a goroutine per actor, each reading its own
// channel (capacity 1: one request per round) and answering on the driver's
// channel, which holds a whole round.
func fanOutGo(actors, n int, lat []time.Duration) (int, error) {
	if actors < 1 || n < 1 || len(lat) < n {
		return 0, ErrBadSize
	}
	replies := make(chan *fanMsg, actors)
	ins := make([]chan *fanMsg, actors)
	for i := range ins {
		ins[i] = make(chan *fanMsg, 1)
		go func(in <-chan *fanMsg) {
			for m := range in {
				replies <- m
			}
		}(ins[i])
	}
	defer func() {
		for _, in := range ins {
			close(in)
		}
	}()
	msgs := make([]fanMsg, actors)
	start := time.Now()
	got := 0
	for round := 0; got < n; round++ {
		k := fanRound(n, actors, round)
		for i := range k {
			msgs[i].sent = time.Since(start)
			ins[i] <- &msgs[i]
		}
		for range k {
			m := <-replies
			lat[got] = time.Since(start) - m.sent
			got++
		}
	}
	return got, nil
}
