// SPDX-License-Identifier: LGPL-2.1-only
/*
 * vmctx-scenarios: push the paper's scenarios (Yamamoto et al., IJNC 2016,
 * section 4) through libvmctx as synthetic host event streams, and print
 * the guest-level, host-level, unified and per-vCPU tables, or export one
 * scenario as pprof or folded stacks.
 */
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "scenarios.h"

static void usage(FILE *f)
{
	fputs("Usage: vmctx-scenarios [OPTION]... [SCENARIO]...\n"
	      "Run the paper's scenarios as synthetic host event streams through libvmctx\n"
	      "and print the resulting tables.  No kernel, VM or root is needed.\n"
	      "\n"
	      "Scenarios (default: all):\n"
	      "  fig9       2 pCPUs, guestA with 1 vCPU, guestB with 2 (Figure 9)\n"
	      "  procs      two identical processes in one VM (Table 7)\n"
	      "  vcpus      two vCPUs on one pCPU (Tables 8/9)\n"
	      "  vms        three VMs on one pCPU (Tables 12/13)\n"
	      "  halt       busy for 1/3 of the window, then halted (Tables 14/15)\n"
	      "\n"
	      "Options:\n"
	      "  -n, --rows=N   print at most N rows per table (default 12, 0: all)\n"
	      "  -x, --export=FORMAT:FILE\n"
	      "                 write the scenario as FORMAT (pprof or folded) to FILE\n"
	      "                 (- for standard output) instead of printing tables;\n"
	      "                 needs one scenario; may be given twice\n"
	      "  -h, --help     show this help and exit\n", f);
}

static int rows = 12;

/* --export=FORMAT:FILE */
struct export_arg {
	enum vmctx_export_format format;
	const char *path;
};

static struct export_arg exports[2];
static int nexports;

static int parse_export(const char *arg)
{
	struct export_arg *e = &exports[nexports];
	const char *colon = strchr(arg, ':');

	if (nexports == 2 || !colon || !colon[1]) {
		fprintf(stderr, "vmctx-scenarios: --export: want pprof:FILE or folded:FILE, not '%s'\n",
			arg);
		return -1;
	}
	if (colon - arg == 5 && !strncmp(arg, "pprof", 5)) {
		e->format = VMCTX_EXPORT_PPROF;
	} else if (colon - arg == 6 && !strncmp(arg, "folded", 6)) {
		e->format = VMCTX_EXPORT_FOLDED;
	} else {
		fprintf(stderr, "vmctx-scenarios: --export: unknown format in '%s'\n", arg);
		return -1;
	}
	e->path = colon + 1;
	nexports++;
	return 0;
}

/* Write every --export of the session; as perf would, after the report pass. */
static int export_all(struct vmctx_session *s)
{
	struct vmctx_export *x = vmctx_export_new(s, NULL);
	int i, ret = 0;

	if (!x) {
		fprintf(stderr, "vmctx-scenarios: export: %s\n", vmctx_strerror(errno));
		return -1;
	}
	for (i = 0; i < nexports; i++) {
		bool out = !strcmp(exports[i].path, "-");
		int fd = out ? STDOUT_FILENO :
			 open(exports[i].path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
		int err = fd < 0 ? -errno : vmctx_export_write_fd(x, exports[i].format, fd);

		if (!out && fd >= 0 && close(fd) && !err)
			err = -errno;
		if (err) {
			fprintf(stderr, "vmctx-scenarios: %s: %s\n", exports[i].path, vmctx_strerror(err));
			ret = -1;
		}
	}
	vmctx_export_free(x);
	return ret;
}

static int print_table(struct vmctx_session *s, const char *title, enum vmctx_view view,
		       int vm_tgid, int vcpu)
{
	VMCTX_OPTS(vmctx_format_opts, o, .max_rows = rows);
	struct vmctx_table *t = vmctx_table_new(s, view, vm_tgid, vcpu);
	char *text;
	int err;

	if (!t) {
		fprintf(stderr, "vmctx-scenarios: %s: cannot build table\n", title);
		return -1;
	}
	err = vmctx_table_format(t, &o, &text);
	vmctx_table_free(t);
	if (err) {
		fprintf(stderr, "vmctx-scenarios: %s: %s\n", title, vmctx_strerror(err));
		return -1;
	}
	printf("--- %s\n%s\n", title, text);
	free(text);
	return 0;
}

/* Guest level per VM, then per vCPU, then host level and unified. */
static int print_all(struct vmctx_session *s)
{
	size_t nvms = vmctx_session_nvms(s), i;
	int vm_nr, ret = 0;
	char title[128];

	for (vm_nr = 1; (size_t)vm_nr <= nvms; vm_nr++) {
		int vm_tgid = vmctx_session_vm_tgid(s, vm_nr);
		size_t n = vmctx_session_vm_nvcpus(s, vm_tgid);
		char name[64];

		/* a VM's name may be its guest's host name */
		vmctx_escape(name, sizeof(name), vmctx_session_vm_name(s, vm_tgid));

		snprintf(title, sizeof(title), "guest level: %s (VM%d), all vCPUs", name, vm_nr);
		ret |= print_table(s, title, VMCTX_VIEW_GUEST, vm_tgid, -1);
		if (n > 1) {
			snprintf(title, sizeof(title), "per vCPU: %s (VM%d)", name, vm_nr);
			ret |= print_table(s, title, VMCTX_VIEW_VCPUS, vm_tgid, -1);
		}
		for (i = 0; n > 1 && i < n; i++) {
			int id = vmctx_session_vm_vcpu(s, vm_tgid, i);

			snprintf(title, sizeof(title), "guest level: %s (VM%d), vcpu%d", name, vm_nr,
				 id);
			ret |= print_table(s, title, VMCTX_VIEW_GUEST, vm_tgid, id);
		}
	}
	ret |= print_table(s, "host level", VMCTX_VIEW_HOST, -1, -1);
	ret |= print_table(s, "unified", VMCTX_VIEW_UNIFIED, -1, -1);
	return ret;
}

/* In the order run() knows them. */
static const struct {
	const char *name;
	const char *title;
} scenarios[] = {
	{ "fig9", "Figure 9: 2 pCPUs, 3 vCPUs in 2 VMs" },
	{ "procs", "Table 7: two libquantum processes in one VM" },
	{ "vcpus", "Tables 8/9: two vCPUs on one pCPU" },
	{ "vms", "Tables 12/13: three VMs on one pCPU" },
	{ "halt", "Tables 14/15: busy 1/3, then halted" },
};

static int run(struct scen *sc, int which)
{
	switch (which) {
	case 0:
		return scen_fig9(sc, 1000, 10);
	case 1:
		return scen_two_procs(sc, 750, 20);
	case 2:
		return scen_two_vcpus(sc, 750, 20);
	case 3:
		return scen_three_vms(sc, 500, 20);
	default:
		return scen_halt(sc, 30000, 100, false);
	}
}

int main(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "rows", required_argument, NULL, 'n' },
		{ "export", required_argument, NULL, 'x' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	bool want[5] = { false };
	int c, i, ret = 0, any = 0;

	while ((c = getopt_long(argc, argv, "n:x:h", opts, NULL)) != -1) {
		char *end;

		switch (c) {
		case 'n':
			rows = strtol(optarg, &end, 10);
			if (*end || rows < 0) {
				fprintf(stderr, "vmctx-scenarios: --rows: not a count: '%s'\n",
					optarg);
				return 2;
			}
			break;
		case 'x':
			if (parse_export(optarg))
				return 2;
			break;
		case 'h':
			usage(stdout);
			return 0;
		default:
			usage(stderr);
			return 2;
		}
	}
	for (; optind < argc; optind++) {
		for (i = 0; i < 5; i++)
			if (!strcmp(argv[optind], scenarios[i].name))
				break;
		if (i == 5) {
			fprintf(stderr, "vmctx-scenarios: unknown scenario '%s' (try --help)\n",
				argv[optind]);
			return 2;
		}
		want[i] = true;
		any++;
	}
	if (nexports && any != 1) {
		fputs("vmctx-scenarios: --export needs exactly one scenario\n", stderr);
		return 2;
	}
	for (i = 0; i < 5; i++) {
		struct scen sc;
		int err;

		if (any && !want[i])
			continue;
		err = scen_init(&sc, SCEN_TICK_NS);
		if (!err)
			err = run(&sc, i);
		if (!nexports)
			printf("===== %s\n\n", scenarios[i].title);
		if (err) {
			fprintf(stderr, "vmctx-scenarios: %s: %s\n", scenarios[i].name,
				vmctx_strerror(err));
			ret = 1;
		} else if (nexports ? export_all(sc.s) : print_all(sc.s)) {
			ret = 1;
		}
		scen_fini(&sc);
	}
	return ret;
}
