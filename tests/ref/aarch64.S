/* SPDX-License-Identifier: MIT */
/* Reference for src/arch/aarch64.c: the same trampoline written with .cfi_*
 * directives.  tests/arch/check_reference assembles it with clang and with the
 * cross gas and compares the code bytes and the CFI rows at every
 * instruction boundary with the table's. */
	.text
	.balign 16
	.globl	perftramp_ref
	.type	perftramp_ref, %function
perftramp_ref:
	.cfi_startproc
	bti	c
	stp	x29, x30, [sp, #-16]!
	.cfi_def_cfa_offset 16
	.cfi_offset 29, -16
	.cfi_offset 30, -8
	mov	x29, sp
	.cfi_def_cfa_register 29
	ldr	x16, .Ltarget
	blr	x16
	ldp	x29, x30, [sp], #16
	.cfi_def_cfa 31, 0
	.cfi_restore 29
	.cfi_restore 30
	ret
	.balign	8, 0
.Ltarget:
	.quad	0
.Ltag:
	.quad	0
	.cfi_endproc		/* the FDE covers the data words too, as the emitter's does */
	.size	perftramp_ref, . - perftramp_ref
	.section .note.GNU-stack, "", %progbits
