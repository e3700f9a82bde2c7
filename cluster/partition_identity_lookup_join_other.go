//go:build !amd64

package cluster

const hasJoinScanWide = false

// joinScanWide is not used without a wide implementation
// (hasJoinScanWide is false); this one keeps its contract.
func joinScanWide(lanes, best []uint64, c uint64, mask []byte) {
	for i := range mask {
		mask[i] = 0
		for j := range 8 {
			if k := 8*i + j; scoreFinish(c^lanes[k]) >= best[k] {
				mask[i] |= 1 << j
			}
		}
	}
}
