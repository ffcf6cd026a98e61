/* SPDX-License-Identifier: MIT */
/* The i686 trampoline, written by hand with CFI directives: the reference
 * that tests/arch/check_reference.c compares src/arch/i686.c with (bytes and
 * rules), assembled by both gas and clang.  The target word is reached from
 * the pc a call to the thunk at the end leaves in %ebx; the data words are
 * 4-byte addresses. */
        .text
        .globl  perftramp_ref_i686
        .type   perftramp_ref_i686, @function
perftramp_ref_i686:
        .cfi_startproc
        push    %ebp
        .cfi_def_cfa_offset 8
        .cfi_offset %ebp, -8
        mov     %esp, %ebp
        .cfi_def_cfa_register %ebp
        push    %ebx
        .cfi_offset %ebx, -12
        pushl   24(%ebp)
        pushl   20(%ebp)
        pushl   16(%ebp)
        pushl   12(%ebp)
        pushl   8(%ebp)
        call    .Lthunk
.Lpc:
        call    *(.Ltarget - .Lpc)(%ebx)
        mov     -4(%ebp), %ebx
        .cfi_restore %ebx
        lea     -24(%ebp), %ecx
        cmp     %ecx, %esp
        leave
        .cfi_def_cfa %esp, 4
        .cfi_restore %ebp
        jne     1f
        ret
1:      ret     $4
.Lthunk:
        mov     (%esp), %ebx
        ret
        .balign 4, 0            /* zero padding, as the emitter writes */
.Ltarget:
        .long   0
.Ltag:  .long   0
        .cfi_endproc            /* the FDE covers the data words too, as the emitter's does */
        .size   perftramp_ref_i686, .-perftramp_ref_i686
        .section .note.GNU-stack,"",@progbits
