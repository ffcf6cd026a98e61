/* SPDX-License-Identifier: MIT */
/* Reference for src/arch/riscv64.c: the same trampoline written with .cfi_*
 * directives.  tests/arch/check_reference assembles it with clang and with the
 * cross gas and compares the code bytes and the CFI rows at every
 * instruction boundary with the table's.  No compressed instructions and
 * no linker relaxation: the table uses the 4-byte forms. */
	.option	norvc
	.option	norelax
	.text
	.balign 16
	.globl	perftramp_ref
	.type	perftramp_ref, @function
perftramp_ref:
	.cfi_startproc
	addi	sp, sp, -16
	.cfi_def_cfa_offset 16
	sd	ra, 8(sp)
	.cfi_offset 1, -8
	sd	s0, 0(sp)
	.cfi_offset 8, -16
	addi	s0, sp, 16
	.cfi_def_cfa 8, 0
.Lhi:
	auipc	t1, %pcrel_hi(.Ltarget)
	ld	t1, %pcrel_lo(.Lhi)(t1)
	jalr	ra, 0(t1)
	ld	ra, 8(sp)
	.cfi_restore 1
	ld	s0, 0(sp)
	.cfi_def_cfa 2, 16
	.cfi_restore 8
	addi	sp, sp, 16
	.cfi_def_cfa_offset 0
	ret
	.balign	8, 0
.Ltarget:
	.quad	0
.Ltag:
	.quad	0
	.cfi_endproc		/* the FDE covers the data words too, as the emitter's does */
	.size	perftramp_ref, . - perftramp_ref
	.section .note.GNU-stack, "", @progbits
