// SPDX-License-Identifier: LGPL-2.1-only
/*
 * A program built against the installed libvmctx-dev (test/pkg/check-debian.sh):
 * it writes a bundle with one guest task, reads it back, and names the
 * task's page-table root and an exit reason through the library.  The
 * bundle is then the plugin's -O vmctx:maps=FILE in trace-cmd report.
 *
 * Usage: use-libvmctx BUNDLE
 */
#include <stdio.h>
#include <stdlib.h>

#include <vmctx.h>

#define ROOT	0x12346000ULL	/* the root make-trace-dat.pl puts in its kvm_exit */

int main(int argc, char **argv)
{
	struct vmctx_bundle *b, *r = NULL;
	const char *hlt;
	int err, t;

	if (argc != 2) {
		fprintf(stderr, "usage: use-libvmctx BUNDLE\n");
		return 2;
	}
	b = vmctx_bundle_new();
	if (!b)
		return 1;
	err = vmctx_bundle_add_task(b, ROOT, 42, 42, "proc_b", 0, VMCTX_TIME_NONE);
	if (err >= 0)
		err = vmctx_bundle_seal(b);
	if (!err)
		err = vmctx_bundle_write_file(b, argv[1]);
	vmctx_bundle_free(b);
	if (!err)
		err = vmctx_bundle_read_file(argv[1], NULL, &r);
	if (err) {
		fprintf(stderr, "use-libvmctx: %s\n", vmctx_strerror(err));
		return 1;
	}
	t = vmctx_bundle_find_task(r, ROOT | 0x801, VMCTX_TIME_NONE);
	hlt = vmctx_exit_reason_name(VMCTX_ISA_VMX, 12);
	printf("tasks %zu root-owner %d exit-12 %s\n", vmctx_bundle_ntasks(r), t, hlt ? hlt : "?");
	vmctx_bundle_free(r);
	return t == 0 ? 0 : 1;
}
