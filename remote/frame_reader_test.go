package remote

import (
	"bytes"
	"testing"
)

// loopReader reads data over and over, without allocating: an endless
// stream of the frames in data.
type loopReader struct {
	data []byte
	off  int
}

func (l *loopReader) Read(p []byte) (int, error) {
	n := copy(p, l.data[l.off:])
	l.off = (l.off + n) % len(l.data)
	return n, nil
}

// BenchmarkFrameReader reads frames from memory: small ones only (the
// common case), and large ones alternating with small ones.
//
//	go test ./remote -run '^$' -bench FrameReader -benchmem
func BenchmarkFrameReader(b *testing.B) {
	large := bytes.Repeat([]byte{7}, 1<<20)
	cases := []struct {
		name   string
		frames [][]byte
	}{
		{"small-1KiB", [][]byte{large[:1<<10]}},
		{"alternating-1MiB-100B", [][]byte{large, large[:100]}},
	}
	for _, tc := range cases {
		b.Run(tc.name, func(b *testing.B) {
			var stream []byte
			for _, f := range tc.frames {
				stream = appendFrame(stream, kindEnvelopes, f)
			}
			fr := newFrameReader(&loopReader{data: stream}, 4<<20)
			b.ReportAllocs()
			b.SetBytes(int64(len(stream)))
			for b.Loop() {
				for range tc.frames {
					if _, _, err := fr.next(); err != nil {
						b.Fatal(err)
					}
				}
			}
		})
	}
}

// TestFrameReaderAlternatingBuildsLargeBufferOnce pins dropLargeAfter's
// reason: frames of 1 MiB, each followed by a small one, are read into one
// large buffer, built for the first of them; reading a large and a small
// frame then allocates nothing. Before, the small frame dropped the buffer
// and each large frame built it again in doubling steps (6 allocations,
// 2 MiB, per pair).
func TestFrameReaderAlternatingBuildsLargeBufferOnce(t *testing.T) {
	large := bytes.Repeat([]byte{7}, 1<<20)
	small := large[:100]
	stream := appendFrame(appendFrame(nil, kindEnvelopes, large), kindEnvelopes, small)
	fr := newFrameReader(&loopReader{data: stream}, 4<<20)
	var built *byte
	pair := func() {
		for _, want := range [][]byte{large, small} {
			_, got, err := fr.next()
			if err != nil {
				t.Fatal(err)
			}
			if len(got) != len(want) {
				t.Fatalf("frame of %d bytes, want %d", len(got), len(want))
			}
			if len(got) == len(large) {
				if built == nil {
					built = &got[0]
				} else if &got[0] != built {
					t.Fatal("the large buffer was built again")
				}
			}
		}
	}
	allocs := testing.AllocsPerRun(4*dropLargeAfter, pair)
	if allocs != 0 {
		t.Errorf("%v allocations per large and small frame, want 0", allocs)
	}
}
