/* SPDX-License-Identifier: MIT */
/* The x86-64 trampoline with a direct call, written by hand with CFI
 * directives: the reference that tests/arch/check_reference.c compares
 * src/arch/x86_64_near.c with (bytes and rules), assembled by both gas and
 * clang.  The call goes to near_target, right after the trampoline: the
 * linker resolves its rel32, and the test writes the table's relocation
 * for the same distance and compares those bytes too. */
        .text
        .globl  perftramp_ref_x86_64_near
        .type   perftramp_ref_x86_64_near, @function
perftramp_ref_x86_64_near:
        .cfi_startproc
        endbr64
        push    %rbp
        .cfi_def_cfa_offset 16
        .cfi_offset %rbp, -16
        mov     %rsp, %rbp
        .cfi_def_cfa_register %rbp
        nop
        call    near_target
        pop     %rbp
        .cfi_def_cfa %rsp, 8
        .cfi_restore %rbp
        ret
        .balign 8, 0            /* zero padding, as the emitter writes */
target: .quad   0
tag:    .quad   0
        .cfi_endproc            /* the FDE covers the data words too, as the emitter's does */
        .size   perftramp_ref_x86_64_near, .-perftramp_ref_x86_64_near
near_target:                    /* local: the call needs no PLT */
        ret
        .section .note.GNU-stack,"",@progbits
