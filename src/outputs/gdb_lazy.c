/* SPDX-License-Identifier: MIT */
/* Outputs layer, PERFTRAMP_GDB: the stub a trampoline calls first under a
 * debugger, so gdb re-reads its chunk then (x86-64 only; elsewhere none). */
#include "config.h"

#include "outputs/gdb_lazy.h"

#if defined(__x86_64__) && defined(__ELF__)
/* System V x86-64 ABI: arguments in rdi rsi rdx rcx r8 r9 and xmm0-7, al =
 * vector registers used by a variadic call, r10 = static chain: all saved
 * around pt_gdb_first_call.  At entry rsp = 8 mod 16 (the trampoline's
 * call); 8 pushes and 136 bytes make it 0 mod 16 for the call.  Upper
 * halves of ymm/zmm arguments are not saved: pt_gdb_first_call runs no
 * AVX code (a mutex, two calls of __jit_debug_register_code, stores). */
__asm__(".text\n"
        ".globl pt_gdb_lazy_stub\n"
        ".hidden pt_gdb_lazy_stub\n"
        ".type pt_gdb_lazy_stub,@function\n"
        ".p2align 4\n"
        "pt_gdb_lazy_stub:\n"
        ".cfi_startproc\n"
        "endbr64\n"
        "push %rax\n .cfi_adjust_cfa_offset 8\n"
        "push %rdi\n .cfi_adjust_cfa_offset 8\n"
        "push %rsi\n .cfi_adjust_cfa_offset 8\n"
        "push %rdx\n .cfi_adjust_cfa_offset 8\n"
        "push %rcx\n .cfi_adjust_cfa_offset 8\n"
        "push %r8\n .cfi_adjust_cfa_offset 8\n"
        "push %r9\n .cfi_adjust_cfa_offset 8\n"
        "push %r10\n .cfi_adjust_cfa_offset 8\n"
        "sub $136, %rsp\n .cfi_adjust_cfa_offset 136\n"
        "movdqu %xmm0, 0(%rsp)\n movdqu %xmm1, 16(%rsp)\n movdqu %xmm2, 32(%rsp)\n movdqu %xmm3, 48(%rsp)\n"
        "movdqu %xmm4, 64(%rsp)\n movdqu %xmm5, 80(%rsp)\n movdqu %xmm6, 96(%rsp)\n movdqu %xmm7, 112(%rsp)\n"
        "mov 200(%rsp), %rdi\n" /* 136 + 8 pushes: the return address into the trampoline */
        "call pt_gdb_first_call\n"
        "mov %rax, %r11\n"
        "movdqu 0(%rsp), %xmm0\n movdqu 16(%rsp), %xmm1\n movdqu 32(%rsp), %xmm2\n movdqu 48(%rsp), %xmm3\n"
        "movdqu 64(%rsp), %xmm4\n movdqu 80(%rsp), %xmm5\n movdqu 96(%rsp), %xmm6\n movdqu 112(%rsp), %xmm7\n"
        "add $136, %rsp\n .cfi_adjust_cfa_offset -136\n"
        "pop %r10\n .cfi_adjust_cfa_offset -8\n"
        "pop %r9\n .cfi_adjust_cfa_offset -8\n"
        "pop %r8\n .cfi_adjust_cfa_offset -8\n"
        "pop %rcx\n .cfi_adjust_cfa_offset -8\n"
        "pop %rdx\n .cfi_adjust_cfa_offset -8\n"
        "pop %rsi\n .cfi_adjust_cfa_offset -8\n"
        "pop %rdi\n .cfi_adjust_cfa_offset -8\n"
        "pop %rax\n .cfi_adjust_cfa_offset -8\n"
        "jmp *%r11\n"
        ".cfi_endproc\n"
        ".size pt_gdb_lazy_stub, .-pt_gdb_lazy_stub\n");

void pt_gdb_lazy_stub(void) __attribute__((visibility("hidden")));

uintptr_t pt_gdb_lazy_stub_addr(void)
{
    return (uintptr_t)pt_gdb_lazy_stub;
}

/* The trampoline must hold `ff 15 disp32` (call *disp32(%rip), Intel SDM
 * vol. 2, CALL: FF /2 with ModRM 0x15 = RIP-relative) whose operand is the
 * target word: then its return address is the next instruction. */
bool pt_gdb_lazy_layout(const struct pt_layout *l, size_t *ret_off)
{
    size_t word = l->word_off[PT_WORD_TARGET];
    for (size_t k = 0; k + 6 <= l->code_len; k++) {
        if (l->bytes[k] != 0xff || l->bytes[k + 1] != 0x15)
            continue;
        /* disp32 is a fixup: zero in the template, resolved per slot as
         * word - (k + 6); lay one out to read it */
        uint8_t one[PT_LAYOUT_MAX_BYTES];
        pt_layout_write(l, one, 0, 0);
        int32_t disp = (int32_t)((uint32_t)one[k + 2] | (uint32_t)one[k + 3] << 8 | (uint32_t)one[k + 4] << 16 |
                                 (uint32_t)one[k + 5] << 24);
        if ((int64_t)(k + 6) + disp == (int64_t)word) {
            *ret_off = k + 6;
            return true;
        }
    }
    return false;
}

bool pt_gdb_lazy_slot_calls(const uint8_t *slot, size_t ret_off)
{
    return ret_off >= 6 && slot[ret_off - 6] == 0xff && slot[ret_off - 5] == 0x15;
}
#else
uintptr_t pt_gdb_lazy_stub_addr(void)
{
    return 0;
}

bool pt_gdb_lazy_layout(const struct pt_layout *l, size_t *ret_off)
{
    (void)l;
    (void)ret_off;
    return false;
}

bool pt_gdb_lazy_slot_calls(const uint8_t *slot, size_t ret_off)
{
    (void)slot;
    (void)ret_off;
    return false;
}
#endif
