# SPDX-License-Identifier: MIT
# make python-demo: a CPU-bound script with recursion and a hot helper.
def fib(n):
    return n if n < 2 else fib(n - 1) + fib(n - 2)


def digits(n):
    s = 0
    while n:
        s += n % 10
        n //= 10
    return s


def main():
    total = 0
    for i in range(1500):
        total += fib(15) + digits(i ** 40)
    return total


print("total:", main())
