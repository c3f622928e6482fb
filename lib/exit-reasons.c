// SPDX-License-Identifier: LGPL-2.1-only
/*
 * VM-exit reason names.  The tables are Linux's own VMX_EXIT_REASONS and
 * SVM_EXIT_REASONS from the uapi headers (linux-libc-dev), so vmctx keeps
 * exactly one copy and it tracks the kernel's spelling.  The libtraceevent
 * plugin uses these through the library.
 */
#include <errno.h>
#include <asm/kvm.h>	/* exception vectors used by SVM_EXIT_REASONS */
#include <asm/svm.h>
#include <asm/vmx.h>

#include "util.h"

struct exit_name {
	uint64_t code;
	const char *name;
};

static const struct exit_name vmx_reasons[] = { VMX_EXIT_REASONS };
/*
 * svm.h defines a few codes that SVM_EXIT_REASONS leaves unnamed (KVM does
 * not intercept them); name them in the same spelling so that every code
 * svm.h defines has a name.
 */
static const struct exit_name svm_reasons[] = {
	SVM_EXIT_REASONS,
	{ SVM_EXIT_MWAIT_COND,		"mwait_cond" },
	{ SVM_EXIT_RDPRU,		"rdpru" },
	{ SVM_EXIT_CR1_WRITE_TRAP,	"write_cr1_trap" },
	{ SVM_EXIT_CR2_WRITE_TRAP,	"write_cr2_trap" },
	{ SVM_EXIT_CR3_WRITE_TRAP,	"write_cr3_trap" },
	{ SVM_EXIT_CR5_WRITE_TRAP,	"write_cr5_trap" },
	{ SVM_EXIT_CR6_WRITE_TRAP,	"write_cr6_trap" },
	{ SVM_EXIT_CR7_WRITE_TRAP,	"write_cr7_trap" },
	{ SVM_EXIT_CR9_WRITE_TRAP,	"write_cr9_trap" },
	{ SVM_EXIT_CR10_WRITE_TRAP,	"write_cr10_trap" },
	{ SVM_EXIT_CR11_WRITE_TRAP,	"write_cr11_trap" },
	{ SVM_EXIT_CR12_WRITE_TRAP,	"write_cr12_trap" },
	{ SVM_EXIT_CR13_WRITE_TRAP,	"write_cr13_trap" },
	{ SVM_EXIT_CR14_WRITE_TRAP,	"write_cr14_trap" },
	{ SVM_EXIT_CR15_WRITE_TRAP,	"write_cr15_trap" },
	{ SVM_EXIT_SW,			"sw" },
};

static const struct exit_name *table(enum vmctx_isa isa, size_t *n)
{
	switch (isa) {
	case VMCTX_ISA_VMX:
		*n = ARRAY_SIZE(vmx_reasons);
		return vmx_reasons;
	case VMCTX_ISA_SVM:
		*n = ARRAY_SIZE(svm_reasons);
		return svm_reasons;
	default:
		*n = 0;
		return NULL;
	}
}

/*
 * VMX packs flags above the basic reason (failed VM entry is bit 31).  SVM's
 * exit code is 64 bits; a 32-bit copy of SVM_EXIT_ERR (-1) is the same code.
 */
static uint64_t basic_reason(enum vmctx_isa isa, uint64_t reason)
{
	if (isa == VMCTX_ISA_VMX)
		return reason & 0xffff;
	if (reason == UINT32_MAX)
		return (uint64_t)(int64_t)SVM_EXIT_ERR;
	return reason;
}

const char *vmctx_exit_reason_name(enum vmctx_isa isa, uint64_t reason)
{
	const struct exit_name *t;
	size_t n, i;

	t = table(isa, &n);
	reason = basic_reason(isa, reason);
	for (i = 0; i < n; i++)
		if (t[i].code == reason)
			return t[i].name;
	return NULL;
}

bool vmctx_exit_reason_is_halt(enum vmctx_isa isa, uint64_t reason)
{
	if (isa == VMCTX_ISA_VMX)
		return basic_reason(isa, reason) == EXIT_REASON_HLT;
	if (isa == VMCTX_ISA_SVM)
		return reason == SVM_EXIT_HLT;
	return false;
}

size_t vmctx_exit_reason_count(enum vmctx_isa isa)
{
	size_t n;

	table(isa, &n);
	return n;
}

int vmctx_exit_reason_at(enum vmctx_isa isa, size_t i, uint64_t *reason, const char **name)
{
	const struct exit_name *t;
	size_t n;

	t = table(isa, &n);
	if (i >= n)
		return -ENOENT;
	if (reason)
		*reason = t[i].code;
	if (name)
		*name = t[i].name;
	return 0;
}
