// SPDX-License-Identifier: GPL-2.0
/*
 * The guest-map bundle matching gen-perfdata.py's guest: gen-bundle OUT
 * [hostile|reused|window].  "hostile" gives the host name, the process and its
 * function terminal control bytes (ESC, BEL, CR, LF), as a guest's tenant
 * could.  "reused" gives the guest process's page-table root to "bench"
 * (pid 321) until host time 2.0005 s and then to "late" (pid 322), in a
 * guest clock related to host time only through the TSC: with
 * gen-perfdata.py's 'vms' recording (host TSC = host ns, KVM TSC offset
 * 5e9), guest TSC = host ns + 5e9, and the guest's clock runs 500 ppm fast
 * against its TSC from guest TSC 2e9 = 0 ns, as its clock pairs say.
 * "window" is "reused" with a window from host 1.2005 s to 2.5005 s.
 * "switches" is "reused" with a switch log (host times): guest CPU 0 runs
 * bench's thread 323 ("bench-w") from 0.5 s, a kernel thread
 * "kworker/0:1" (pid 78) from 1.2005 s to 1.3005 s, bench-w again, and
 * late from the owner change at 2.0005 s; guest CPU 1 runs "kworker/1:0"
 * (pid 77) from 0.5 s, the idle task from 1.5005 s, loses its switches
 * from 2.5005 s to 2.6005 s, and runs a kernel thread "kworker/1:1" from
 * 2.7005 s whose pid, 323, was bench's thread's.
 *
 * "tenant PATH [BUILD-ID [COUNT]]" is a hostile tenant's: bench is mapped
 * at PATH (perf syntax such as "[evilmod]" or "//anon", or a host file),
 * its object claims BUILD-ID (a host object's, say) and names its work
 * TENANT_work, the guest kernel has modules "evilmod" and
 * "guest.kernel.kallsyms.1000", and COUNT more objects (default 0) with a
 * symbol each are mapped in a process that no sample hits.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <vmctx.h>

/* The "reused" guest's clock: 500 ppm fast against its TSC, 0 at TSC 2e9. */
static uint64_t guest_ns(uint64_t tsc)
{
	return (tsc - 2000000000ULL) + (tsc - 2000000000ULL) / 2000;
}

int main(int argc, char **argv)
{
	struct vmctx_bundle *b = vmctx_bundle_new();
	int hostile = argc == 3 && !strcmp(argv[2], "hostile");
	int window = argc == 3 && !strcmp(argv[2], "window");
	int switches = argc == 3 && !strcmp(argv[2], "switches");
	int reused = window || switches || (argc == 3 && !strcmp(argv[2], "reused"));
	int tenant = argc >= 4 && argc <= 6 && !strcmp(argv[2], "tenant");
	const char *path = tenant ? argv[3] : "/usr/bin/bench";
	int task, obj, err, i;

	if (argc < 2 || (argc > 3 && !tenant) || (argc == 3 && !hostile && !reused) || !b)
		return 2;
	err = vmctx_bundle_set_identity(b, hostile ? "g\x1b]0;owned\x07" : "guest1",
					"6.1.0-test", "boot-1");
	if (reused) {
		/* the owner changes at host 2.0005 s: between two samples */
		uint64_t change = guest_ns(2000500000ULL + 5000000000ULL);

		task = vmctx_bundle_add_task(b, 0x1234000, 322, 322, "late", change,
					     VMCTX_TIME_NONE);
		if (task >= 0)
			err |= vmctx_bundle_add_map(b, task, 0x400000, 0x500000, 0, 0, -1,
						    "/usr/bin/late");
		/* pairs every 100 ms of guest TSC over guest TSC 5.5 s .. 8.5 s */
		for (i = 0; i <= 30; i++) {
			uint64_t tsc = 5500000000ULL + i * 100000000ULL;

			err |= vmctx_bundle_add_clock_pair(b, tsc, guest_ns(tsc));
		}
		task = vmctx_bundle_add_task(b, 0x1234000, 321, 321, "bench", 0, change);
		if (window)
			err |= vmctx_bundle_set_window(b, guest_ns(1200500000ULL + 5000000000ULL),
						       guest_ns(2500500000ULL + 5000000000ULL));
		if (switches) {
			/* host ns + 5e9 is the guest TSC (gen-perfdata.py vms) */
#define AT(host_ns)	guest_ns((host_ns) + 5000000000ULL)
			err |= vmctx_bundle_add_switch(b, 0, AT(500000000ULL), 323, 321,
						       VMCTX_TASK_USER, "bench-w");
			err |= vmctx_bundle_add_switch(b, 0, AT(1200500000ULL), 78, 78,
						       VMCTX_TASK_KTHREAD, "kworker/0:1");
			err |= vmctx_bundle_add_switch(b, 0, AT(1300500000ULL), 323, 321,
						       VMCTX_TASK_USER, "bench-w");
			err |= vmctx_bundle_add_switch(b, 0, change, 322, 322, VMCTX_TASK_USER,
						       "late");
			err |= vmctx_bundle_add_switch(b, 1, AT(500000000ULL), 77, 77,
						       VMCTX_TASK_KTHREAD, "kworker/1:0");
			err |= vmctx_bundle_add_switch(b, 1, AT(1500500000ULL), 0, 0,
						       VMCTX_TASK_IDLE, "swapper/1");
			err |= vmctx_bundle_add_switch_gap(b, 1, AT(2500500000ULL),
							   AT(2600500000ULL));
			err |= vmctx_bundle_add_switch(b, 1, AT(2700500000ULL), 323, 323,
						       VMCTX_TASK_KTHREAD, "kworker/1:1");
#undef AT
		}
	} else {
		task = vmctx_bundle_add_task(b, 0x1234000, 321, 321,
					     hostile ? "be\x1b[2Jnch" : "bench", 0, VMCTX_TIME_NONE);
	}
	obj = vmctx_bundle_add_object(b, path, tenant && argc >= 5 && *argv[4] ? argv[4] : NULL);
	err |= vmctx_bundle_add_symbol(b, obj, 0x401000, 0x100,
				       hostile ? "wo\r\nrk" : tenant ? "TENANT_work" : "work");
	err |= vmctx_bundle_add_symbol(b, obj, 0x402000, 0x100, "other");
	err |= vmctx_bundle_add_map(b, task, 0x400000, 0x500000, 0, 0, obj, path);
	if (tenant) {
		int n = argc == 6 ? atoi(argv[5]) : 0, idle, o;
		char name[64];

		err |= vmctx_bundle_add_kmodule(b, "evilmod", 0xffffffffc0000000ULL, 0x1000) < 0;
		err |= vmctx_bundle_add_ksym(b, 0xffffffffc0000100ULL, "evil_fn", "evilmod");
		err |= vmctx_bundle_add_kmodule(b, "guest.kernel.kallsyms.1000",
						0xffffffffc0010000ULL, 0x1000) < 0;
		err |= vmctx_bundle_add_ksym(b, 0xffffffffc0010100ULL, "kallsyms_fn",
					     "guest.kernel.kallsyms.1000");
		idle = vmctx_bundle_add_task(b, 0x9990000, 999, 999, "many", 0, VMCTX_TIME_NONE);
		for (i = 0; i < n && idle >= 0 && !err; i++) {
			uint64_t at = 0x10000000ULL + i * 0x10000ULL;

			snprintf(name, sizeof(name), "/usr/lib/many/lib%d.so", i);
			o = vmctx_bundle_add_object(b, name, NULL);
			err |= o < 0 || vmctx_bundle_add_symbol(b, o, 0x1000, 0x100, "f");
			err |= vmctx_bundle_add_map(b, idle, at, at + 0x2000, 0, at, o, name);
		}
	}
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
