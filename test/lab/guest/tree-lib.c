// SPDX-License-Identifier: GPL-2.0
/*
 * libtree.so: the shared-library frame of tree's call chains (tree.c):
 * tree_mix() calls its callback, and is no tail call, so that its frame
 * stays between the callback and its caller.
 */
extern volatile unsigned long tree_sink;

__attribute__((noinline)) void tree_mix(void (*fn)(unsigned long), unsigned long n)
{
	fn(n);
	tree_sink++;
}
