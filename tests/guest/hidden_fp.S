/* SPDX-License-Identifier: MIT */
/* tests/perf/hidden_rbp.S for the foreign architectures: functions that keep
 * GARBAGE in the frame-pointer register (and, where the ABI walks a back
 * chain, in the back-chain word) while they run, with correct CFI.  An
 * unwinder that walks frame records is lost at once; one that follows the
 * DWARF CFI (theirs, then the trampolines') is not.
 *
 *   long pt_hidden_spin(const long *spins)   spins *spins turns, calls nothing
 *   long pt_hidden_loop(long (*fn)(long), long arg, long n)
 *                                            calls fn(arg) n (>= 1) times
 *   long pt_return_arg(long x)               returns x at once
 *
 * Under TCG a cpu-clock sample lands where a translation block begins: the
 * entry of fn (a trampoline) is one, so pt_hidden_loop puts samples on the
 * trampoline's first instruction, where only its FDE unwinds it.
 * ABIs and DWARF register numbers: AAPCS64 and its DWARF supplement (x29 fp
 * = 29, x30 lr = 30); RISC-V psABI (s0/fp = 8, ra = 1); 64-bit ELFv2 ABI for
 * Power (r1 back chain, LR = 65); s390x ELF ABI supplement (r11 fp, r14
 * return address, r15 sp, CFA = r15 + 160, register save area in the
 * caller's frame, back chain at 0(r15)); i386 psABI (cdecl: arguments on
 * the stack, ebp frame pointer = 5, ebx 3, esi 6, edi 7, the stack 16-byte
 * aligned at calls; Intel SDM vol. 2 for the instructions); AAPCS and
 * AADWARF32 for 32-bit Arm (A32 code, r11 the fp an APCS frame walk reads,
 * lr = 14, sp 8-aligned at calls). */
	.text
#if defined(__aarch64__)
	.globl	pt_hidden_spin
	.type	pt_hidden_spin, %function
	.p2align 3
pt_hidden_spin:
	.cfi_startproc
	hint	34			/* bti c */
	stp	x29, x30, [sp, #-16]!
	.cfi_def_cfa_offset 16
	.cfi_offset 29, -16
	.cfi_offset 30, -8
	ldr	x1, [x0]
	movz	x29, #0x5a5a, lsl #48	/* garbage: not a stack address */
	movk	x29, #0xa5a5, lsl #32
	movk	x29, #0x5a5a, lsl #16
	mov	x0, #0
	cmp	x1, #0
	b.le	2f
1:	add	x0, x0, x29		/* the hot loop: x29 is data here */
	ror	x0, x0, #7
	eor	x29, x29, x1		/* ... and it changes every turn */
	subs	x1, x1, #1
	b.ne	1b
2:	ldp	x29, x30, [sp], #16
	.cfi_def_cfa_offset 0
	.cfi_restore 29
	.cfi_restore 30
	lsr	x0, x0, #1
	ret
	.cfi_endproc
	.size	pt_hidden_spin, .-pt_hidden_spin

	.globl	pt_hidden_loop
	.type	pt_hidden_loop, %function
	.p2align 3
pt_hidden_loop:
	.cfi_startproc
	hint	34
	stp	x29, x30, [sp, #-48]!
	.cfi_def_cfa_offset 48
	.cfi_offset 29, -48
	.cfi_offset 30, -40
	stp	x19, x20, [sp, #16]
	.cfi_offset 19, -32
	.cfi_offset 20, -24
	str	x21, [sp, #32]
	.cfi_offset 21, -16
	mov	x19, x0
	mov	x20, x1
	mov	x21, x2
	movz	x29, #0x5a5a, lsl #48
	movk	x29, #0xa5a5, lsl #32
1:	mov	x0, x20
	blr	x19
	add	x29, x29, #1, lsl #12	/* a different garbage each call */
	subs	x21, x21, #1
	b.gt	1b
	ldr	x21, [sp, #32]
	ldp	x19, x20, [sp, #16]
	ldp	x29, x30, [sp], #48
	.cfi_def_cfa_offset 0
	.cfi_restore 19
	.cfi_restore 20
	.cfi_restore 21
	.cfi_restore 29
	.cfi_restore 30
	ret
	.cfi_endproc
	.size	pt_hidden_loop, .-pt_hidden_loop

	.globl	pt_return_arg
	.type	pt_return_arg, %function
	.p2align 3
pt_return_arg:
	.cfi_startproc
	hint	34
	ret
	.cfi_endproc
	.size	pt_return_arg, .-pt_return_arg

#elif defined(__riscv) && __riscv_xlen == 64
	.globl	pt_hidden_spin
	.type	pt_hidden_spin, @function
	.p2align 2
pt_hidden_spin:
	.cfi_startproc
	addi	sp, sp, -16
	.cfi_def_cfa_offset 16
	sd	s0, 0(sp)
	.cfi_offset 8, -16
	ld	t0, 0(a0)
	li	s0, 0x5a5aa5a55a5aa5a5	/* garbage: not a stack address */
	li	a0, 0
	blez	t0, 2f
1:	add	a0, a0, s0		/* the hot loop: s0 is data here */
	srli	t1, a0, 7
	slli	t2, a0, 57
	or	a0, t1, t2
	xor	s0, s0, t0		/* ... and it changes every turn */
	addi	t0, t0, -1
	bnez	t0, 1b
2:	ld	s0, 0(sp)
	.cfi_restore 8
	addi	sp, sp, 16
	.cfi_def_cfa_offset 0
	srli	a0, a0, 1
	ret
	.cfi_endproc
	.size	pt_hidden_spin, .-pt_hidden_spin

	.globl	pt_hidden_loop
	.type	pt_hidden_loop, @function
	.p2align 2
pt_hidden_loop:
	.cfi_startproc
	addi	sp, sp, -48
	.cfi_def_cfa_offset 48
	sd	ra, 40(sp)
	.cfi_offset 1, -8
	sd	s0, 32(sp)
	.cfi_offset 8, -16
	sd	s1, 24(sp)
	.cfi_offset 9, -24
	sd	s2, 16(sp)
	.cfi_offset 18, -32
	sd	s3, 8(sp)
	.cfi_offset 19, -40
	mv	s1, a0
	mv	s2, a1
	mv	s3, a2
	li	s0, 0x5a5aa5a55a5aa5a5
1:	mv	a0, s2
	jalr	s1
	li	t0, 0x1001
	add	s0, s0, t0		/* a different garbage each call */
	addi	s3, s3, -1
	bgtz	s3, 1b
	ld	s3, 8(sp)
	.cfi_restore 19
	ld	s2, 16(sp)
	.cfi_restore 18
	ld	s1, 24(sp)
	.cfi_restore 9
	ld	s0, 32(sp)
	.cfi_restore 8
	ld	ra, 40(sp)
	.cfi_restore 1
	addi	sp, sp, 48
	.cfi_def_cfa_offset 0
	ret
	.cfi_endproc
	.size	pt_hidden_loop, .-pt_hidden_loop

	.globl	pt_return_arg
	.type	pt_return_arg, @function
	.p2align 2
pt_return_arg:
	.cfi_startproc
	ret
	.cfi_endproc
	.size	pt_return_arg, .-pt_return_arg

#elif defined(__powerpc64__) && defined(__LITTLE_ENDIAN__)
	.abiversion 2
/* The garbage: r31 (the frame pointer by convention) and the back-chain
 * word at 0(r1), which is what a frame walker on Power follows. */
#define GARBAGE(r) lis r, 0x5a5a; ori r, r, 0xa5a5; sldi r, r, 32; oris r, r, 0x5a5a; ori r, r, 0xa5a5
	.globl	pt_hidden_spin
	.type	pt_hidden_spin, @function
	.p2align 3
pt_hidden_spin:
	.cfi_startproc
	std	31, -8(1)
	.cfi_offset 31, -8
	ld	5, 0(3)
	GARBAGE(31)
	li	3, 0
	cmpdi	5, 0
	ble	2f
	mtctr	5
1:	add	3, 3, 31		/* the hot loop: r31 is data here */
	rotldi	3, 3, 57
	xor	31, 31, 5		/* ... and it changes every turn */
	addi	5, 5, -1
	bdnz	1b
2:	ld	31, -8(1)
	.cfi_restore 31
	srdi	3, 3, 1
	blr
	.cfi_endproc
	.size	pt_hidden_spin, .-pt_hidden_spin

/* Frame of 128 bytes: back chain, CR, LR and TOC words, a parameter save
 * area (64), r28-r31 at the top (CFA - 32 .. CFA - 1). */
	.globl	pt_hidden_loop
	.type	pt_hidden_loop, @function
	.p2align 3
pt_hidden_loop:
	.cfi_startproc
	mflr	0
	std	0, 16(1)
	.cfi_offset 65, 16
	std	31, -8(1)
	.cfi_offset 31, -8
	std	30, -16(1)
	.cfi_offset 30, -16
	std	29, -24(1)
	.cfi_offset 29, -24
	std	28, -32(1)
	.cfi_offset 28, -32
	addi	1, 1, -128		/* no stdu: the back chain is not stored */
	.cfi_def_cfa_offset 128
	mr	30, 3
	mr	29, 4
	mr	28, 5
	GARBAGE(31)
	std	31, 0(1)		/* a garbage back chain */
1:	mr	3, 29
	mr	12, 30			/* ELFv2: r12 = the callee's address */
	mtctr	30
	bctrl
	addi	31, 31, 0x1001		/* a different garbage each call */
	std	31, 0(1)
	addic.	28, 28, -1
	bgt	1b
	addi	1, 1, 128
	.cfi_def_cfa_offset 0
	ld	0, 16(1)
	mtlr	0
	.cfi_restore 65
	ld	31, -8(1)
	.cfi_restore 31
	ld	30, -16(1)
	.cfi_restore 30
	ld	29, -24(1)
	.cfi_restore 29
	ld	28, -32(1)
	.cfi_restore 28
	blr
	.cfi_endproc
	.size	pt_hidden_loop, .-pt_hidden_loop

	.globl	pt_return_arg
	.type	pt_return_arg, @function
	.p2align 3
pt_return_arg:
	.cfi_startproc
	blr
	.cfi_endproc
	.size	pt_return_arg, .-pt_return_arg

#elif defined(__s390x__)
	.globl	pt_hidden_spin
	.type	pt_hidden_spin, @function
	.p2align 3
pt_hidden_spin:
	.cfi_startproc
	stg	%r11, 88(%r15)		/* into the caller's register save area */
	.cfi_offset 11, -72
	lg	%r1, 0(%r2)
	llihf	%r11, 0x5a5aa5a5	/* garbage: not a stack address */
	oilf	%r11, 0x5a5aa5a5
	lghi	%r2, 0
	ltgr	%r1, %r1
	jle	2f
1:	agr	%r2, %r11		/* the hot loop: r11 is data here */
	rllg	%r2, %r2, 57
	xgr	%r11, %r1		/* ... and it changes every turn */
	brctg	%r1, 1b
2:	lg	%r11, 88(%r15)
	.cfi_restore 11
	srlg	%r2, %r2, 1
	br	%r14
	.cfi_endproc
	.size	pt_hidden_spin, .-pt_hidden_spin

	.globl	pt_hidden_loop
	.type	pt_hidden_loop, @function
	.p2align 3
pt_hidden_loop:
	.cfi_startproc
	stmg	%r10, %r15, 80(%r15)
	.cfi_offset 10, -80
	.cfi_offset 11, -72
	.cfi_offset 12, -64
	.cfi_offset 13, -56
	.cfi_offset 14, -48
	.cfi_offset 15, -40
	aghi	%r15, -160
	.cfi_def_cfa_offset 320
	lgr	%r12, %r2
	lgr	%r13, %r3
	lgr	%r10, %r4
	llihf	%r11, 0x5a5aa5a5
	oilf	%r11, 0x5a5aa5a5
	stg	%r11, 0(%r15)		/* a garbage back chain */
1:	lgr	%r2, %r13
	basr	%r14, %r12
	aghi	%r11, 0x1001		/* a different garbage each call */
	stg	%r11, 0(%r15)
	brctg	%r10, 1b
	lmg	%r10, %r15, 240(%r15)
	.cfi_restore 10
	.cfi_restore 11
	.cfi_restore 12
	.cfi_restore 13
	.cfi_restore 14
	.cfi_restore 15
	.cfi_def_cfa_offset 160
	br	%r14
	.cfi_endproc
	.size	pt_hidden_loop, .-pt_hidden_loop

	.globl	pt_return_arg
	.type	pt_return_arg, @function
	.p2align 3
pt_return_arg:
	.cfi_startproc
	br	%r14
	.cfi_endproc
	.size	pt_return_arg, .-pt_return_arg
#elif defined(__i386__)
/* long pt_hidden_spin(const long *spins): garbage in %ebp while it spins */
	.globl	pt_hidden_spin
	.type	pt_hidden_spin, @function
	.p2align 4
pt_hidden_spin:
	.cfi_startproc
	pushl	%ebp
	.cfi_adjust_cfa_offset 4
	.cfi_rel_offset %ebp, 0
	movl	8(%esp), %ecx		/* spins */
	movl	(%ecx), %ecx
	movl	$0x5a5aa5a5, %ebp	/* garbage: no stack address */
	xorl	%eax, %eax
	testl	%ecx, %ecx
	jle	2f
1:	addl	%ebp, %eax		/* the hot loop: %ebp is data here */
	rorl	$7, %eax
	xorl	%ecx, %ebp		/* ... and it changes every turn */
	decl	%ecx
	jnz	1b
2:	popl	%ebp
	.cfi_adjust_cfa_offset -4
	.cfi_restore %ebp
	shrl	$1, %eax
	ret
	.cfi_endproc
	.size	pt_hidden_spin, .-pt_hidden_spin

/* long pt_hidden_loop(long (*fn)(long), long arg, long n): calls fn(arg)
 * n (>= 1) times with garbage in %ebp at every call */
	.globl	pt_hidden_loop
	.type	pt_hidden_loop, @function
	.p2align 4
pt_hidden_loop:
	.cfi_startproc
	pushl	%ebp
	.cfi_adjust_cfa_offset 4
	.cfi_rel_offset %ebp, 0
	pushl	%ebx
	.cfi_adjust_cfa_offset 4
	.cfi_rel_offset %ebx, 0
	pushl	%esi
	.cfi_adjust_cfa_offset 4
	.cfi_rel_offset %esi, 0
	pushl	%edi
	.cfi_adjust_cfa_offset 4
	.cfi_rel_offset %edi, 0
	subl	$12, %esp		/* the argument slot; esp 16-aligned at the call */
	.cfi_adjust_cfa_offset 12
	movl	32(%esp), %ebx		/* fn */
	movl	36(%esp), %esi		/* arg */
	movl	40(%esp), %edi		/* n */
	movl	$0x5a5aa5a5, %ebp
1:	movl	%esi, (%esp)
	clflush	(%ebx)			/* fn's first line leaves the caches: samples land on fn+0 */
	call	*%ebx
	addl	$0x1001, %ebp		/* a different garbage each call */
	decl	%edi
	jg	1b
	addl	$12, %esp
	.cfi_adjust_cfa_offset -12
	popl	%edi
	.cfi_adjust_cfa_offset -4
	.cfi_restore %edi
	popl	%esi
	.cfi_adjust_cfa_offset -4
	.cfi_restore %esi
	popl	%ebx
	.cfi_adjust_cfa_offset -4
	.cfi_restore %ebx
	popl	%ebp
	.cfi_adjust_cfa_offset -4
	.cfi_restore %ebp
	ret
	.cfi_endproc
	.size	pt_hidden_loop, .-pt_hidden_loop

/* long pt_return_arg(long x) */
	.globl	pt_return_arg
	.type	pt_return_arg, @function
	.p2align 4
pt_return_arg:
	.cfi_startproc
	movl	4(%esp), %eax
	ret
	.cfi_endproc
	.size	pt_return_arg, .-pt_return_arg
#elif defined(__arm__)
	.syntax	unified
	.arm
	.cfi_sections .eh_frame
	.globl	pt_hidden_spin
	.type	pt_hidden_spin, %function
	.p2align 3
pt_hidden_spin:
	.cfi_startproc
	push	{r11, lr}
	.cfi_def_cfa_offset 8
	.cfi_offset 11, -8
	.cfi_offset 14, -4
	ldr	r1, [r0]
	movw	r11, #0x5a5a		/* garbage: not a stack address */
	movt	r11, #0xa5a5
	mov	r0, #0
	cmp	r1, #0
	ble	2f
1:	add	r0, r0, r11		/* the hot loop: r11 is data here */
	ror	r0, r0, #7
	eor	r11, r11, r1		/* ... and it changes every turn */
	subs	r1, r1, #1
	bne	1b
2:	pop	{r11, lr}
	.cfi_def_cfa_offset 0
	.cfi_restore 11
	.cfi_restore 14
	lsr	r0, r0, #1
	bx	lr
	.cfi_endproc
	.size	pt_hidden_spin, .-pt_hidden_spin

	.globl	pt_hidden_loop
	.type	pt_hidden_loop, %function
	.p2align 3
pt_hidden_loop:
	.cfi_startproc
	push	{r4, r5, r6, r10, r11, lr}	/* 24 bytes: sp stays 8-aligned */
	.cfi_def_cfa_offset 24
	.cfi_offset 4, -24
	.cfi_offset 5, -20
	.cfi_offset 6, -16
	.cfi_offset 10, -12
	.cfi_offset 11, -8
	.cfi_offset 14, -4
	mov	r4, r0
	mov	r5, r1
	mov	r6, r2
	movw	r11, #0x5a5a
	movt	r11, #0xa5a5
1:	mov	r0, r5
	blx	r4
	add	r11, r11, #0x1000	/* a different garbage each call */
	subs	r6, r6, #1
	bgt	1b
	pop	{r4, r5, r6, r10, r11, lr}
	.cfi_def_cfa_offset 0
	.cfi_restore 4
	.cfi_restore 5
	.cfi_restore 6
	.cfi_restore 10
	.cfi_restore 11
	.cfi_restore 14
	bx	lr
	.cfi_endproc
	.size	pt_hidden_loop, .-pt_hidden_loop

	.globl	pt_return_arg
	.type	pt_return_arg, %function
	.p2align 3
pt_return_arg:
	.cfi_startproc
	bx	lr
	.cfi_endproc
	.size	pt_return_arg, .-pt_return_arg
#endif
	.section .note.GNU-stack,"",%progbits
