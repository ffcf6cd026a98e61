/* SPDX-License-Identifier: MIT */
/* Reference for src/arch/arm.c: the same trampoline written with .cfi_*
 * directives, and with the EHABI directives a compiler writes for it
 * (.fnstart ... .fnend: gcc -marm -mapcs-frame writes the same .movsp,
 * .pad, .save and .setfp for this prologue).  tests/arch/check_reference
 * assembles it with clang and with the cross gas and compares the code
 * bytes, the CFI rows at every instruction boundary and the unwind
 * opcodes of its .ARM.exidx entry with the table's. */
	.syntax	unified
	.arm
	.text
	.balign 8
	.globl	perftramp_ref
	.type	perftramp_ref, %function
perftramp_ref:
	.fnstart
	.cfi_startproc
	mov	ip, sp
	.movsp	ip
	push	{fp, ip, lr, pc}
	.pad	#4
	.save	{fp, ip, lr}
	.cfi_def_cfa_offset 16
	.cfi_offset 11, -16
	.cfi_offset 13, -12
	.cfi_offset 14, -8
	sub	fp, ip, #4
	.setfp	fp, ip, #-4
	.cfi_def_cfa 11, 4
	ldr	ip, .Ltarget
	blx	ip
	ldm	sp, {fp, sp, lr}
	.cfi_def_cfa 13, 0
	.cfi_restore 11
	.cfi_restore 13
	.cfi_restore 14
	bx	lr
	.balign	4, 0
.Ltarget:
	.long	0
.Ltag:
	.long	0
	.cfi_endproc		/* the FDE covers the data words too, as the emitter's does */
	.fnend
	.size	perftramp_ref, . - perftramp_ref
	.section .note.GNU-stack, "", %progbits
