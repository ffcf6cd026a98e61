/* SPDX-License-Identifier: MIT */
/* Functions that keep GARBAGE in %rbp while they run, with correct CFI.
 *
 * perf's libunwind falls back to walking frame pointers when no FDE covers
 * a pc, and gdb's prologue analyser recognises `push %rbp; mov %rsp,%rbp`
 * by itself: a complete chain through code that keeps an rbp frame proves
 * nothing about the unwind info.  These functions use %rbp as an ordinary
 * register (a value that is not a stack address and changes as they loop),
 * so an unwinder that trusts %rbp is lost at once; one that follows the
 * DWARF CFI, theirs and that of the trampolines around them, is not.
 *
 * Written by hand with .cfi_* directives and assembled by the real
 * assembler (gas, or clang's integrated one).  x86-64 only: on other hosts
 * this file is empty and the tests that need it SKIP.
 * Instruction set: Intel SDM vol. 2; ABI and DWARF register numbers:
 * System V AMD64 psABI (%rbp is callee-saved, DWARF 6). */
#if defined(__x86_64__) && defined(__ELF__)

/* Garbage for %rbp: not canonical as an address, never near the stack. */
#define GARBAGE 0x5a5aa5a55a5aa5a5

	.text

/* long pt_hidden_spin(const long *spins)
 * Spins *spins iterations with garbage in %rbp; calls nothing.  (It takes
 * a pointer so the perf workload can wrap it like its evaluator, passing a
 * pointer to the frame's spin count.) */
	.globl	pt_hidden_spin
	.type	pt_hidden_spin, @function
	.p2align 4
pt_hidden_spin:
	.cfi_startproc
	endbr64
	pushq	%rbp
	.cfi_adjust_cfa_offset 8
	.cfi_rel_offset %rbp, 0
	movq	(%rdi), %rcx
	movabsq	$GARBAGE, %rbp
	xorl	%eax, %eax
	testq	%rcx, %rcx
	jle	2f
1:	addq	%rbp, %rax		/* the hot loop: %rbp is data here */
	rorq	$7, %rax
	xorq	%rcx, %rbp		/* ... and it changes every turn */
	decq	%rcx
	jnz	1b
2:	popq	%rbp
	.cfi_adjust_cfa_offset -8
	.cfi_restore %rbp
	shrq	$1, %rax
	ret
	.cfi_endproc
	.size	pt_hidden_spin, .-pt_hidden_spin

/* long pt_hidden_loop(long (*fn)(long), long arg, long n)
 * Calls fn(arg) n times (at least once) with garbage in %rbp at every call,
 * returns the last result.  With fn a trampoline, the trampoline's first
 * instructions (before its own `mov %rsp,%rbp`) and its `ret` run with the
 * caller's garbage in %rbp: only its FDE unwinds it there. */
	.globl	pt_hidden_loop
	.type	pt_hidden_loop, @function
	.p2align 4
pt_hidden_loop:
	.cfi_startproc
	endbr64
	pushq	%rbp
	.cfi_adjust_cfa_offset 8
	.cfi_rel_offset %rbp, 0
	pushq	%rbx
	.cfi_adjust_cfa_offset 8
	.cfi_rel_offset %rbx, 0
	pushq	%r12
	.cfi_adjust_cfa_offset 8
	.cfi_rel_offset %r12, 0
	pushq	%r13
	.cfi_adjust_cfa_offset 8
	.cfi_rel_offset %r13, 0
	subq	$8, %rsp		/* the call below lands fn at the ABI's alignment */
	.cfi_adjust_cfa_offset 8
	movq	%rdi, %rbx		/* fn */
	movq	%rsi, %r12		/* arg */
	movq	%rdx, %r13		/* n */
	movabsq	$GARBAGE, %rbp
1:	movq	%r12, %rdi
	clflush	(%rbx)			/* fn's first line leaves the caches: the call */
	call	*%rbx			/* waits on its fetch, so samples land on fn+0 */
	addq	$0x1001, %rbp		/* garbage, and a different garbage each call */
	decq	%r13
	jg	1b
	addq	$8, %rsp
	.cfi_adjust_cfa_offset -8
	popq	%r13
	.cfi_adjust_cfa_offset -8
	.cfi_restore %r13
	popq	%r12
	.cfi_adjust_cfa_offset -8
	.cfi_restore %r12
	popq	%rbx
	.cfi_adjust_cfa_offset -8
	.cfi_restore %rbx
	popq	%rbp
	.cfi_adjust_cfa_offset -8
	.cfi_restore %rbp
	ret
	.cfi_endproc
	.size	pt_hidden_loop, .-pt_hidden_loop

/* long pt_return_arg(long x): returns at once (a target for trampolines
 * that should spend their time in their own instructions). */
	.globl	pt_return_arg
	.type	pt_return_arg, @function
	.p2align 4
pt_return_arg:
	.cfi_startproc
	endbr64
	movq	%rdi, %rax
	ret
	.cfi_endproc
	.size	pt_return_arg, .-pt_return_arg

#endif

/* No executable stack (this object would otherwise make the linker ask for one). */
	.section .note.GNU-stack,"",%progbits
