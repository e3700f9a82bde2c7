package benchmarks

import (
	proto "github.com/asynkron/protoactor-go/actor"

	fraktor "github.com/fraktor-go/fraktor/actor"
)

// SkyNet: an actor spawns skyFanout children, each of which does the same,
// down to `depth` levels; the 10^depth leaves send their number (0 …
// 10^depth-1) to their parent, every inner actor sends the sum of its
// children's sums to its parent, and every actor stops itself once it has
// reported. Depth 6 is the classic 1,111,111 actors. The result is the
// root's sum, which must be skynetSum(depth).

const skyFanout = 10

type skyResult struct{ sum int64 }

// skynetSize returns skyFanout^depth.
func skynetSize(depth int) int64 {
	s := int64(1)
	for range depth {
		s *= skyFanout
	}
	return s
}

// skynetSum is the expected result at depth: 0 + 1 + … + (10^depth - 1).
func skynetSum(depth int) int64 {
	s := skynetSize(depth)
	return s * (s - 1) / 2
}

// skynetFraktor runs SkyNet on a fraktor-go system.
func skynetFraktor(sys *fraktor.System, depth int) (int64, error) {
	if depth < 0 || depth > 7 {
		return 0, ErrBadSize
	}
	res := make(chan int64, 1)
	toParent := func(c fraktor.Context, sum int64) { c.Send(c.Parent(), &skyResult{sum}) }
	toCaller := func(_ fraktor.Context, sum int64) { res <- sum }
	sys.Root().Spawn(skyPropsFraktor(0, skynetSize(depth), toCaller, toParent))
	return awaitValue(res)
}

func skyPropsFraktor(num, size int64, report, toParent func(fraktor.Context, int64)) *fraktor.Props {
	var sum int64
	pending := 0
	return fraktor.PropsFromFunc(func(c fraktor.Context) {
		switch m := c.Message().(type) {
		case *fraktor.Started:
			if size == 1 {
				report(c, num)
				c.Stop(c.Self())
				return
			}
			pending = skyFanout
			child := size / skyFanout
			for i := range int64(skyFanout) {
				c.Spawn(skyPropsFraktor(num+i*child, child, toParent, toParent))
			}
		case *skyResult:
			sum += m.sum
			if pending--; pending == 0 {
				report(c, sum)
				c.Stop(c.Self())
			}
		}
	})
}

// skynetProto runs SkyNet on a protoactor-go system.
func skynetProto(sys *proto.ActorSystem, depth int) (int64, error) {
	if depth < 0 || depth > 7 {
		return 0, ErrBadSize
	}
	res := make(chan int64, 1)
	toParent := func(c proto.Context, sum int64) { c.Send(c.Parent(), &skyResult{sum}) }
	toCaller := func(_ proto.Context, sum int64) { res <- sum }
	sys.Root.Spawn(skyPropsProto(0, skynetSize(depth), toCaller, toParent))
	return awaitValue(res)
}

func skyPropsProto(num, size int64, report, toParent func(proto.Context, int64)) *proto.Props {
	var sum int64
	pending := 0
	return proto.PropsFromFunc(func(c proto.Context) {
		switch m := c.Message().(type) {
		case *proto.Started:
			if size == 1 {
				report(c, num)
				c.Stop(c.Self())
				return
			}
			pending = skyFanout
			child := size / skyFanout
			for i := range int64(skyFanout) {
				c.Spawn(skyPropsProto(num+i*child, child, toParent, toParent))
			}
		case *skyResult:
			sum += m.sum
			if pending--; pending == 0 {
				report(c, sum)
				c.Stop(c.Self())
			}
		}
	})
}

// skynetGo: the same tree of goroutines, each reporting on its parent's
// channel.
func skynetGo(depth int) (int64, error) {
	if depth < 0 || depth > 7 {
		return 0, ErrBadSize
	}
	res := make(chan int64, 1)
	go skyGo(0, skynetSize(depth), res)
	return <-res, nil
}

func skyGo(num, size int64, out chan<- int64) {
	if size == 1 {
		out <- num
		return
	}
	in := make(chan int64, skyFanout)
	child := size / skyFanout
	for i := range int64(skyFanout) {
		go skyGo(num+i*child, child, in)
	}
	var sum int64
	for range skyFanout {
		sum += <-in
	}
	out <- sum
}
