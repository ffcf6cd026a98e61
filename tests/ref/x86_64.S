/* SPDX-License-Identifier: MIT */
/* The x86-64 trampoline, written by hand with CFI directives: the
 * reference that tests/arch/check_reference.c compares src/arch/x86_64.c with
 * (bytes and rules), assembled by both gas and clang. */
        .text
        .globl  perftramp_ref_x86_64
        .type   perftramp_ref_x86_64, @function
perftramp_ref_x86_64:
        .cfi_startproc
        endbr64
        push    %rbp
        .cfi_def_cfa_offset 16
        .cfi_offset %rbp, -16
        mov     %rsp, %rbp
        .cfi_def_cfa_register %rbp
        call    *target(%rip)
        pop     %rbp
        .cfi_def_cfa %rsp, 8
        .cfi_restore %rbp
        ret
        .balign 8, 0            /* zero padding, as the emitter writes */
target: .quad   0
tag:    .quad   0
        .cfi_endproc            /* the FDE covers the data words too, as the emitter's does */
        .size   perftramp_ref_x86_64, .-perftramp_ref_x86_64
        .section .note.GNU-stack,"",@progbits
