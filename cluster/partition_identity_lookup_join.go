package cluster

import (
	"encoding/binary"
	"math/bits"
)

// joinScan appends to hits the positions i at which the candidate of lane
// c scores at least best[i] (scoreFinish(c^lanes[i]) >= best[i]): the
// records of a kind that a joining member may take. It reads every record
// of the kind on each join, so it is the lookup's one loop over all
// records; joinScanWide does it eight records at a time where the CPU
// allows (amd64 with AVX-512), and joinScanScalar is the reference.
// best must be at least as long as lanes.
func joinScan(lanes, best []uint64, c uint64, hits []int32, mask []byte) ([]int32, []byte) {
	best = best[:len(lanes)]
	done := 0
	if n := len(lanes) &^ 7; n > 0 && hasJoinScanWide {
		if cap(mask) < n/8 {
			mask = make([]byte, n/8)
		}
		mask = mask[:n/8]
		joinScanWide(lanes[:n], best[:n], c, mask)
		// Bit j of mask[b] is record 8b+j, so bit k of the little-endian
		// word at mask[8w:] is record 64w+k. Hits are about one record in
		// members+1: most words are zero.
		for w := 0; w < len(mask); w += 8 {
			var m uint64
			if w+8 <= len(mask) {
				m = binary.LittleEndian.Uint64(mask[w:])
			} else {
				for j, b := range mask[w:] {
					m |= uint64(b) << (8 * j)
				}
			}
			for ; m != 0; m &= m - 1 {
				hits = append(hits, int32(8*w+bits.TrailingZeros64(m)))
			}
		}
		done = n
	}
	return joinScanScalar(lanes, best, c, hits, done), mask
}

// joinScanScalar is joinScan over lanes[from:], one record at a time.
func joinScanScalar(lanes, best []uint64, c uint64, hits []int32, from int) []int32 {
	best = best[:len(lanes)]
	for i := from; i < len(lanes); i++ {
		if scoreFinish(c^lanes[i]) >= best[i] {
			hits = append(hits, int32(i))
		}
	}
	return hits
}
