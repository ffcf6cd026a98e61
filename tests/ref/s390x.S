/* SPDX-License-Identifier: MIT */
/* Reference for src/arch/s390x.c: the same trampoline written by hand
 * with .cfi_* directives.  tests/arch/check_reference assembles it with clang
 * and with the cross gas and compares code bytes (data words masked) and
 * the CFI rows at every instruction boundary with the table's FDE. */
	.text
	.balign 8
	.globl	pt_ref_s390x
	.type	pt_ref_s390x, @function
pt_ref_s390x:
	.cfi_startproc
	stmg	%r14, %r15, 112(%r15)	/* RA and SP into the caller's save area */
	.cfi_offset %r14, -48
	.cfi_offset %r15, -40
	lgr	%r1, %r15
	aghi	%r15, -160		/* our 160-byte register save area */
	.cfi_def_cfa_offset 320
	stg	%r1, 0(%r15)		/* back chain */
	lgrl	%r1, .Ltarget
	basr	%r14, %r1
	lmg	%r14, %r15, 272(%r15)
	.cfi_def_cfa_offset 160
	.cfi_restore %r14
	.cfi_restore %r15
	br	%r14
	.balign 8, 0		/* zero padding, as the emitter writes */
.Ltarget:
	.quad	0
.Ltag:
	.quad	0
	.cfi_endproc		/* the FDE covers the data words too, as the emitter's does */
	.size	pt_ref_s390x, . - pt_ref_s390x
	.section .note.GNU-stack, "", @progbits
