package cluster

import "golang.org/x/sys/cpu"

// hasJoinScanWide: the CPU and OS support the AVX-512 instructions of
// joinScanWide (F for the 512-bit registers and VPROLQ; DQ for VPMULLQ and
// KMOVB).
var hasJoinScanWide = cpu.X86.HasAVX512F && cpu.X86.HasAVX512DQ

// joinScanWide sets bit j of mask[i/8] for each record i = 8*(i/8)+j of
// lanes at which scoreFinish(c^lanes[i]) >= best[i], eight records (one
// 512-bit vector) at a time. len(lanes) == len(best) == 8*len(mask).
//
//go:noescape
func joinScanWide(lanes, best []uint64, c uint64, mask []byte)
