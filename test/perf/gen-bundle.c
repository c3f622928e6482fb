// SPDX-License-Identifier: GPL-2.0
/* The guest-map bundle matching gen-perfdata.py's guest: gen-bundle OUT */
#include <stdio.h>
#include <vmctx.h>

int main(int argc, char **argv)
{
	struct vmctx_bundle *b = vmctx_bundle_new();
	int task, obj, err;

	if (argc != 2 || !b)
		return 2;
	err = vmctx_bundle_set_identity(b, "guest1", "6.1.0-test", "boot-1");
	task = vmctx_bundle_add_task(b, 0x1234000, 321, 321, "bench", 0, VMCTX_TIME_NONE);
	obj = vmctx_bundle_add_object(b, "/usr/bin/bench", NULL);
	err |= vmctx_bundle_add_symbol(b, obj, 0x401000, 0x100, "work");
	err |= vmctx_bundle_add_symbol(b, obj, 0x402000, 0x100, "other");
	err |= vmctx_bundle_add_map(b, task, 0x400000, 0x500000, 0, 0, obj, "/usr/bin/bench");
	err |= vmctx_bundle_add_ksym(b, 0xffffffff81001000, "guest_kfunc", NULL);
	err |= vmctx_bundle_add_ksym(b, 0xffffffff81002000, "guest_kfunc_end", NULL);
	if (task < 0 || obj < 0 || err) {
		fprintf(stderr, "building the bundle failed: %d/%d/%d\n", task, obj, err);
		return 1;
	}
	err = vmctx_bundle_seal(b);
	if (!err)
		err = vmctx_bundle_write_file(b, argv[1]);
	if (err) {
		fprintf(stderr, "%s: %s\n", argv[1], vmctx_strerror(err));
		return 1;
	}
	vmctx_bundle_free(b);
	return 0;
}
