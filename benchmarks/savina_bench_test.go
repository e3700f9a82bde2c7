package benchmarks

import "testing"

// Savina subset: ns/op is per message (Counting, Fork-Join), per hop
// (Thread Ring), per meeting (Chameneos) or per ping (Big).

func BenchmarkSavinaCounting(b *testing.B) {
	benchImpls(b,
		impl{implFraktor, func(b *testing.B) {
			sys := fraktorSys(b)
			benchMessages(b, func(n int) (int, error) { return countingFraktor(sys, n) })
		}},
		impl{implProto, func(b *testing.B) {
			sys := protoSys(b)
			benchMessages(b, func(n int) (int, error) { return countingProto(sys, n) })
		}},
		impl{implChan, func(b *testing.B) { benchMessages(b, countingChan) }},
	)
}

// atLeast runs run at a size of at least min, as the workloads that spread
// n over several actors need one per actor; benchMessages checks the
// result against b.N, so below min the benchmark reports min.
func atLeast(minimum int, run func(n int) (int, error)) func(n int) (int, error) {
	return func(n int) (int, error) {
		if n >= minimum {
			return run(n)
		}
		got, err := run(minimum)
		if got == minimum {
			got = n
		}
		return got, err
	}
}

func BenchmarkSavinaForkJoin(b *testing.B) {
	benchImpls(b,
		impl{implFraktor, func(b *testing.B) {
			sys := fraktorSys(b)
			benchMessages(b, atLeast(forkJoinWorkers, func(n int) (int, error) { return forkJoinFraktor(sys, n) }))
		}},
		impl{implProto, func(b *testing.B) {
			sys := protoSys(b)
			benchMessages(b, atLeast(forkJoinWorkers, func(n int) (int, error) { return forkJoinProto(sys, n) }))
		}},
		impl{implChan, func(b *testing.B) { benchMessages(b, atLeast(forkJoinWorkers, forkJoinChan)) }},
	)
}

func BenchmarkSavinaThreadRing(b *testing.B) {
	benchImpls(b,
		impl{implFraktor, func(b *testing.B) {
			sys := fraktorSys(b)
			benchMessages(b, func(n int) (int, error) { return threadRingFraktor(sys, n) })
		}},
		impl{implProto, func(b *testing.B) {
			sys := protoSys(b)
			benchMessages(b, func(n int) (int, error) { return threadRingProto(sys, n) })
		}},
		impl{implChan, func(b *testing.B) { benchMessages(b, threadRingChan) }},
	)
}

// chameneosResult adapts Chameneos (whose result is 2n) to benchMessages.
func chameneosResult(run func(n int) (int, error)) func(n int) (int, error) {
	return func(n int) (int, error) {
		got, err := run(n)
		if got == 2*n {
			return n, err
		}
		return got, err
	}
}

func BenchmarkSavinaChameneos(b *testing.B) {
	benchImpls(b,
		impl{implFraktor, func(b *testing.B) {
			sys := fraktorSys(b)
			benchMessages(b, chameneosResult(func(n int) (int, error) { return chameneosFraktor(sys, n) }))
		}},
		impl{implProto, func(b *testing.B) {
			sys := protoSys(b)
			benchMessages(b, chameneosResult(func(n int) (int, error) { return chameneosProto(sys, n) }))
		}},
		impl{implChan, func(b *testing.B) { benchMessages(b, chameneosResult(chameneosChan)) }},
	)
}

func BenchmarkSavinaBig(b *testing.B) {
	benchImpls(b,
		impl{implFraktor, func(b *testing.B) {
			sys := fraktorSys(b)
			benchMessages(b, atLeast(bigActors, func(n int) (int, error) { return bigFraktor(sys, n) }))
		}},
		impl{implProto, func(b *testing.B) {
			sys := protoSys(b)
			benchMessages(b, atLeast(bigActors, func(n int) (int, error) { return bigProto(sys, n) }))
		}},
		impl{implChan, func(b *testing.B) { benchMessages(b, atLeast(bigActors, bigChan)) }},
	)
}
