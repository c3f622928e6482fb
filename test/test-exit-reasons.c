// SPDX-License-Identifier: LGPL-2.1-only
/*
 * Exit-reason tables: names as Linux spells them, halt classification,
 * every code defined in the uapi headers named exactly once.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "vmctx.h"
#include "check.h"

static void names_match_linux_spelling(void)
{
	const char *n;

	n = vmctx_exit_reason_name(VMCTX_ISA_VMX, 12);
	CHECK(n && !strcmp(n, "HLT"), "VMX 12 is HLT, got %s", n ? n : "NULL");
	n = vmctx_exit_reason_name(VMCTX_ISA_VMX, 1);
	CHECK(n && !strcmp(n, "EXTERNAL_INTERRUPT"), "VMX 1 is EXTERNAL_INTERRUPT");
	n = vmctx_exit_reason_name(VMCTX_ISA_VMX, 44);
	CHECK(n && !strcmp(n, "APIC_ACCESS"), "VMX 44 is APIC_ACCESS");
	/* exit_reason.full of a failed VM entry: bit 31 plus basic reason 33 */
	n = vmctx_exit_reason_name(VMCTX_ISA_VMX, 0x80000021);
	CHECK(n && !strcmp(n, "INVALID_STATE"), "VMX full reason is reduced to its basic reason");
	n = vmctx_exit_reason_name(VMCTX_ISA_SVM, 0x78);
	CHECK(n && !strcmp(n, "hlt"), "SVM 0x78 is hlt");
	n = vmctx_exit_reason_name(VMCTX_ISA_SVM, 0x60);
	CHECK(n && !strcmp(n, "interrupt"), "SVM 0x60 is interrupt");
	n = vmctx_exit_reason_name(VMCTX_ISA_SVM, 0x400);
	CHECK(n && !strcmp(n, "npf"), "SVM 0x400 is npf");
	n = vmctx_exit_reason_name(VMCTX_ISA_SVM, 0xffffffffu);
	CHECK(n && !strcmp(n, "invalid_guest_state"), "32-bit SVM_EXIT_ERR is named");
	CHECK(!vmctx_exit_reason_name(VMCTX_ISA_VMX, 11), "VMX 11 (GETSEC) is not in 6.1");
	CHECK(!vmctx_exit_reason_name(VMCTX_ISA_SVM, 0x3ff), "unknown SVM code has no name");
	CHECK(!vmctx_exit_reason_name(VMCTX_ISA_NONE, 12), "no ISA, no name");
}

static void halt_is_vmx_12_and_svm_0x78_only(void)
{
	size_t i, n;
	uint64_t code;

	CHECK(vmctx_exit_reason_is_halt(VMCTX_ISA_VMX, 12), "VMX 12 halts");
	CHECK(vmctx_exit_reason_is_halt(VMCTX_ISA_SVM, 0x78), "SVM 0x78 halts");
	CHECK(!vmctx_exit_reason_is_halt(VMCTX_ISA_SVM, 12), "SVM 12 (read_cr12?) does not halt");
	CHECK(!vmctx_exit_reason_is_halt(VMCTX_ISA_NONE, 12), "no ISA never halts");
	for (n = 0, i = 0; i < vmctx_exit_reason_count(VMCTX_ISA_VMX); i++) {
		vmctx_exit_reason_at(VMCTX_ISA_VMX, i, &code, NULL);
		n += vmctx_exit_reason_is_halt(VMCTX_ISA_VMX, code);
	}
	CHECK_EQ(n, 1, "VMX codes classified as halt");
	for (n = 0, i = 0; i < vmctx_exit_reason_count(VMCTX_ISA_SVM); i++) {
		vmctx_exit_reason_at(VMCTX_ISA_SVM, i, &code, NULL);
		n += vmctx_exit_reason_is_halt(VMCTX_ISA_SVM, code);
	}
	CHECK_EQ(n, 1, "SVM codes classified as halt");
}

static void codes_unique_and_round_trip(enum vmctx_isa isa)
{
	size_t n = vmctx_exit_reason_count(isa), i, j;

	CHECK(n > 50, "isa %d has a full table (%zu entries)", isa, n);
	for (i = 0; i < n; i++) {
		uint64_t ci, cj;
		const char *name;

		CHECK(!vmctx_exit_reason_at(isa, i, &ci, &name) && name && *name,
		      "entry %zu has a name", i);
		CHECK(vmctx_exit_reason_name(isa, ci) == name, "code 0x%" PRIx64 " looks up to its entry",
		      ci);
		for (j = 0; j < i; j++) {
			vmctx_exit_reason_at(isa, j, &cj, NULL);
			CHECK(ci != cj, "code 0x%" PRIx64 " appears once", ci);
		}
	}
	CHECK(vmctx_exit_reason_at(isa, n, NULL, NULL) < 0, "index past the end is refused");
}

/*
 * Every "#define EXIT_REASON_x N" / "#define SVM_EXIT_x N" of the installed
 * uapi headers has a name (skipped when the headers are not installed).
 */
static int header_codes_all_named(const char *path, const char *prefix, enum vmctx_isa isa)
{
	char line[256], name[128], val[64];
	int seen = 0;
	FILE *f = fopen(path, "r");

	if (!f)
		return -1;
	while (fgets(line, sizeof(line), f)) {
		char *end;
		long long code;

		if (sscanf(line, "#define %127s %63s", name, val) != 2 ||
		    strncmp(name, prefix, strlen(prefix)))
			continue;
		/* range markers and sub-codes, not exit codes */
		if (strstr(name, "LAST_EXCP") || strstr(name, "_MASK"))
			continue;
		code = strtoll(val, &end, 0);
		if (*end)
			continue;
		seen++;
		CHECK(vmctx_exit_reason_name(isa, (uint64_t)code), "%s (%s) has a name", name, val);
	}
	fclose(f);
	CHECK(seen > 50, "%s: parsed %d codes", path, seen);
	return 0;
}

int main(void)
{
	names_match_linux_spelling();
	halt_is_vmx_12_and_svm_0x78_only();
	codes_unique_and_round_trip(VMCTX_ISA_VMX);
	codes_unique_and_round_trip(VMCTX_ISA_SVM);
	CHECK_EQ(vmctx_exit_reason_count(VMCTX_ISA_NONE), 0, "no-ISA table size");
	if (header_codes_all_named("/usr/include/x86_64-linux-gnu/asm/vmx.h", "EXIT_REASON_",
				   VMCTX_ISA_VMX) < 0 ||
	    header_codes_all_named("/usr/include/x86_64-linux-gnu/asm/svm.h", "SVM_EXIT_",
				   VMCTX_ISA_SVM) < 0)
		fprintf(stderr, "uapi headers not found: header completeness not checked\n");
	return check_result("test-exit-reasons");
}
