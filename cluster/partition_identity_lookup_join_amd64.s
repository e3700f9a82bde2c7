#include "textflag.h"

// func joinScanWide(lanes, best []uint64, c uint64, mask []byte)
//
// Per 8 records: h = lanes ^ c; scoreFinish(h) (XXH64's last rotate,
// multiply-add and avalanche, as in rendezvous.go); compare unsigned with
// best (predicate 5, not less than) into K1; store K1 as one mask byte.
TEXT ·joinScanWide(SB), NOSPLIT, $0-80
	MOVQ lanes_base+0(FP), SI
	MOVQ best_base+24(FP), DI
	MOVQ mask_base+56(FP), DX
	MOVQ mask_len+64(FP), CX
	MOVQ c+48(FP), AX
	VPBROADCASTQ AX, Z0
	MOVQ $0x9E3779B185EBCA87, AX // xxPrime1
	VPBROADCASTQ AX, Z1
	MOVQ $0x85EBCA77C2B2AE63, AX // xxPrime4
	VPBROADCASTQ AX, Z2
	MOVQ $0xC2B2AE3D27D4EB4F, AX // xxPrime2
	VPBROADCASTQ AX, Z3
	MOVQ $0x165667B19E3779F9, AX // xxPrime3
	VPBROADCASTQ AX, Z4
	TESTQ CX, CX
	JZ done

loop:
	VPXORQ (SI), Z0, Z5
	VPROLQ $27, Z5, Z5
	VPMULLQ Z1, Z5, Z5
	VPADDQ Z2, Z5, Z5
	VPSRLQ $33, Z5, Z6
	VPXORQ Z6, Z5, Z5
	VPMULLQ Z3, Z5, Z5
	VPSRLQ $29, Z5, Z6
	VPXORQ Z6, Z5, Z5
	VPMULLQ Z4, Z5, Z5
	VPSRLQ $32, Z5, Z6
	VPXORQ Z6, Z5, Z5
	VPCMPUQ $5, (DI), Z5, K1
	KMOVB K1, AX
	MOVB AX, (DX)
	ADDQ $64, SI
	ADDQ $64, DI
	INCQ DX
	DECQ CX
	JNZ loop

done:
	VZEROUPPER
	RET
