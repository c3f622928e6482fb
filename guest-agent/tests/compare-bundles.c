// SPDX-License-Identifier: GPL-2.0
/*
 * compare-bundles A B: for the lab, two bundles of one guest taken at the
 * same time by the two backends (vmctx-agent --backend=kmod and
 * --backend=bpf).  Each process of A alive at both ends of the overlap of
 * the two windows must be in B with the same pid, tgid and root.  Prints
 * the counts; exits 1 on any difference, 2 on a bundle that does not read.
 */
#include <stdio.h>
#include <string.h>

#include <vmctx.h>

static int same_in(const struct vmctx_bundle *b, int pid, uint64_t root, uint64_t s, uint64_t e)
{
	size_t i;

	for (i = 0; i < vmctx_bundle_ntasks(b); i++) {
		uint64_t r, s2, e2;
		int p;

		vmctx_bundle_task(b, i, &r, &p, NULL, NULL, &s2, &e2);
		if (p == pid && s2 < e && s < e2)
			return r == root ? 1 : -1;
	}
	return 0;
}

int main(int argc, char **argv)
{
	struct vmctx_bundle *a = NULL, *b = NULL;
	size_t i, same = 0, differ = 0, missing = 0;
	int err;

	if (argc != 3) {
		fprintf(stderr, "usage: compare-bundles A.vmctx B.vmctx\n");
		return 2;
	}
	err = vmctx_bundle_read_file(argv[1], NULL, &a);
	if (!err)
		err = vmctx_bundle_read_file(argv[2], NULL, &b);
	if (err) {
		fprintf(stderr, "compare-bundles: %s\n", vmctx_strerror(err));
		return 2;
	}
	for (i = 0; i < vmctx_bundle_ntasks(a); i++) {
		uint64_t r, s, e;
		int p, t;

		vmctx_bundle_task(a, i, &r, &p, &t, NULL, &s, &e);
		if (p != t || e != VMCTX_TIME_NONE || r == UINT64_MAX)
			continue;
		switch (same_in(b, p, r, s, VMCTX_TIME_NONE)) {
		case 1:
			same++;
			break;
		case -1:
			differ++;
			printf("pid %d: root %#llx in %s, another in %s\n", p,
			       (unsigned long long)r, argv[1], argv[2]);
			break;
		default:
			missing++;
			printf("pid %d: in %s, not in %s\n", p, argv[1], argv[2]);
		}
	}
	printf("processes alive at the end: %zu same root, %zu another root, %zu missing\n",
	       same, differ, missing);
	vmctx_bundle_free(a);
	vmctx_bundle_free(b);
	return differ || missing;
}
