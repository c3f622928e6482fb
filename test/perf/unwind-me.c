// SPDX-License-Identifier: GPL-2.0
/*
 * A program for guest stack unwinding (run-checks.sh, gen-guest-dwarf.py):
 * built without frame pointers, main calls outer, outer middle, middle
 * inner, which spins; so nearly every sample's stack is main, outer,
 * middle, inner, which only the program's CFI can unwind.
 */
volatile unsigned long sink;

__attribute__((noinline)) void inner(unsigned long n)
{
	for (unsigned long i = 0; i < n; i++)
		sink += i * i;
}

__attribute__((noinline)) void middle(unsigned long n)
{
	inner(n);
	sink++;
}

__attribute__((noinline)) void outer(unsigned long n)
{
	middle(n);
	sink++;
}

int main(void)
{
	for (int k = 0; k < 100; k++)
		outer(1000000);
	return 0;
}
