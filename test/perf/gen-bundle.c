// SPDX-License-Identifier: GPL-2.0
/*
 * The guest-map bundle matching gen-perfdata.py's guest: gen-bundle OUT
 * [hostile].  "hostile" gives the host name, the process and its function
 * terminal control bytes (ESC, BEL, CR, LF), as a guest's tenant could.
 */
#include <stdio.h>
#include <string.h>
#include <vmctx.h>

int main(int argc, char **argv)
{
	struct vmctx_bundle *b = vmctx_bundle_new();
	int hostile = argc == 3 && !strcmp(argv[2], "hostile");
	int task, obj, err;

	if (argc < 2 || argc > 3 || (argc == 3 && !hostile) || !b)
		return 2;
	err = vmctx_bundle_set_identity(b, hostile ? "g\x1b]0;owned\x07" : "guest1",
					"6.1.0-test", "boot-1");
	task = vmctx_bundle_add_task(b, 0x1234000, 321, 321, hostile ? "be\x1b[2Jnch" : "bench",
				     0, VMCTX_TIME_NONE);
	obj = vmctx_bundle_add_object(b, "/usr/bin/bench", NULL);
	err |= vmctx_bundle_add_symbol(b, obj, 0x401000, 0x100, hostile ? "wo\r\nrk" : "work");
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
