package benchmarks

import (
	proto "github.com/asynkron/protoactor-go/actor"

	fraktor "github.com/fraktor-go/fraktor/actor"
)

// Savina Chameneos: chameneosCount creatures repeatedly ask a mall actor
// for a meeting. The mall keeps the first asker waiting and forwards the
// next asker's request to it; the waiting creature takes the complementary
// colour, counts the meeting and tells its partner, which does the same.
// After n meetings the mall answers every request with exit; each creature
// then reports how many meetings it took part in and stops. The result is
// the sum of those reports, which must be 2n.

const chameneosCount = 100

type (
	meet struct {
		color int
		from  any
	} // from: *fraktor.PID, *proto.PID or chan any
	change    struct{ color int }
	exitMall  struct{}
	meetCount struct{ n int }
)

// complement is the colour two creatures of colours a and b take after
// meeting (three colours: 0, 1, 2).
func complement(a, b int) int {
	if a == b {
		return a
	}
	return 3 - a - b
}

// mallState is the mall's protocol, shared by every implementation; reply
// delivers a message to a creature.
type mallState struct {
	left, reported, sum int
	waiting             *meet
	res                 chan int
}

func (s *mallState) receive(msg any, reply func(to any, msg any)) {
	switch m := msg.(type) {
	case *meet:
		switch {
		case s.left == 0:
			reply(m.from, &exitMall{})
		case s.waiting == nil:
			s.waiting = m
		default:
			s.left--
			reply(s.waiting.from, m)
			s.waiting = nil
		}
	case *meetCount:
		s.sum += m.n
		if s.reported++; s.reported == chameneosCount {
			s.res <- s.sum
		}
	}
}

// creature is one chameneo's protocol; send delivers a message to the mall
// (to == nil) or to a partner, stop stops the creature.
type creature struct {
	color, meetings int
	self            any
}

func (k *creature) receive(msg any, send func(to any, msg any), stop func()) {
	switch m := msg.(type) {
	case *start:
		send(nil, &meet{k.color, k.self})
	case *meet:
		k.color = complement(k.color, m.color)
		k.meetings++
		send(m.from, &change{k.color})
		send(nil, &meet{k.color, k.self})
	case *change:
		k.color = m.color
		k.meetings++
		send(nil, &meet{k.color, k.self})
	case *exitMall:
		send(nil, &meetCount{k.meetings})
		stop()
	}
}

// chameneosFraktor runs Chameneos on a fraktor-go system.
func chameneosFraktor(sys *fraktor.System, n int) (int, error) {
	if n < 1 {
		return 0, ErrBadSize
	}
	root := sys.Root()
	mall := &mallState{left: n, res: make(chan int, 1)}
	mallPID := root.Spawn(fraktor.PropsFromFunc(func(c fraktor.Context) {
		mall.receive(c.Message(), func(to, msg any) { c.Send(to.(*fraktor.PID), msg) })
	}))
	defer root.Stop(mallPID)
	for i := range chameneosCount {
		k := &creature{color: i % 3}
		pid := root.Spawn(fraktor.PropsFromFunc(func(c fraktor.Context) {
			k.receive(c.Message(), func(to, msg any) {
				if to == nil {
					c.Send(mallPID, msg)
				} else {
					c.Send(to.(*fraktor.PID), msg)
				}
			}, func() { c.Stop(c.Self()) })
		}))
		k.self = pid
		root.Send(pid, startMsg)
	}
	return awaitValue(mall.res)
}

// chameneosProto runs Chameneos on a protoactor-go system.
func chameneosProto(sys *proto.ActorSystem, n int) (int, error) {
	if n < 1 {
		return 0, ErrBadSize
	}
	root := sys.Root
	mall := &mallState{left: n, res: make(chan int, 1)}
	mallPID := root.Spawn(proto.PropsFromFunc(func(c proto.Context) {
		mall.receive(c.Message(), func(to, msg any) { c.Send(to.(*proto.PID), msg) })
	}))
	defer root.Stop(mallPID)
	for i := range chameneosCount {
		k := &creature{color: i % 3}
		pid := root.Spawn(proto.PropsFromFunc(func(c proto.Context) {
			k.receive(c.Message(), func(to, msg any) {
				if to == nil {
					c.Send(mallPID, msg)
				} else {
					c.Send(to.(*proto.PID), msg)
				}
			}, func() { c.Stop(c.Self()) })
		}))
		k.self = pid
		root.Send(pid, startMsg)
	}
	return awaitValue(mall.res)
}

// chameneosChan: the same protocol with a goroutine per creature and one
// for the mall, each reading its own buffered channel.
func chameneosChan(n int) (int, error) {
	if n < 1 {
		return 0, ErrBadSize
	}
	mall := &mallState{left: n, res: make(chan int, 1)}
	mallIn := make(chan any, 2*chameneosCount)
	send := func(to, msg any) { to.(chan any) <- msg }
	go func() {
		for msg := range mallIn {
			mall.receive(msg, send)
			if mall.reported == chameneosCount {
				return
			}
		}
	}()
	for i := range chameneosCount {
		in := make(chan any, 2)
		k := &creature{color: i % 3, self: in}
		go func() {
			stopped := false
			for !stopped {
				k.receive(<-in, func(to, msg any) {
					if to == nil {
						mallIn <- msg
					} else {
						send(to, msg)
					}
				}, func() { stopped = true })
			}
		}()
		in <- startMsg
	}
	return <-mall.res, nil
}
