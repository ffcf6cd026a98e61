/* SPDX-License-Identifier: MIT */
/* Reference for src/arch/ppc64le.c: the same trampoline written by hand
 * with .cfi_* directives.  tests/arch/check_reference assembles it with clang
 * and with the cross gas and compares code bytes (data words masked) and
 * the CFI rows at every instruction boundary with the table's FDE. */
	.abiversion 2
	.text
	.balign 16
	.globl	pt_ref_ppc64le
	.type	pt_ref_ppc64le, @function
pt_ref_ppc64le:
	.cfi_startproc
	mflr	0
	std	0, 16(1)		/* LR into the caller's LR save slot (LR itself unchanged) */
	stdu	1, -96(1)		/* 32-byte header + 64-byte parameter save area, back chain */
	.cfi_def_cfa_offset 96
	.cfi_offset lr, 16		/* after stdu, as GCC 12 and clang 14 do */
	std	2, 24(1)		/* TOC into our TOC save slot */
	bcl	20, 31, 1f		/* LR = address of 1 */
1:	mflr	12
	ld	12, .Ltarget - 1b(12)	/* r12 = target: its global entry wants it */
	mtctr	12
	bctrl
	ld	2, 24(1)
	addi	1, 1, 96
	.cfi_def_cfa_offset 0
	ld	0, 16(1)
	mtlr	0
	.cfi_restore lr
	blr
	.balign 8, 0		/* zero padding, as the emitter writes */
.Ltarget:
	.quad	0
.Ltag:
	.quad	0
	.cfi_endproc		/* the FDE covers the data words too, as the emitter's does */
	.size	pt_ref_ppc64le, . - pt_ref_ppc64le
	.section .note.GNU-stack, "", @progbits
