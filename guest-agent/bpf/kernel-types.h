/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The few kernel types and fields that agent.bpf.c reads, for CO-RE:
 * libbpf relocates each access against the running kernel's BTF, so the
 * layout here need not match any kernel; only names and field types do.
 * Written by hand, not generated from the build machine's kernel, so that
 * the build is reproducible.
 */
#ifndef VMCTX_BPF_KERNEL_TYPES_H
#define VMCTX_BPF_KERNEL_TYPES_H

typedef unsigned char __u8;
typedef unsigned short __u16;
typedef unsigned int __u32;
typedef unsigned long long __u64;
typedef int __s32;
typedef long long __s64;
typedef __u32 __wsum;
typedef __u16 __be16;
typedef __u32 __be32;
typedef _Bool bool;
#define true 1
#define false 0

enum bpf_map_type {
	BPF_MAP_TYPE_ARRAY = 2,
	BPF_MAP_TYPE_PERCPU_ARRAY = 6,
	BPF_MAP_TYPE_RINGBUF = 27,
};

enum {
	BPF_ANY = 0,
};

enum {
	BPF_F_MMAPABLE = (1U << 10),
};

#pragma clang attribute push(__attribute__((preserve_access_index)), apply_to = record)

struct mm_struct {
	void *pgd;
};

struct qstr {
	union {
		struct {
			__u32 hash;
			__u32 len;
		};
		__u64 hash_len;
	};
	const unsigned char *name;
};

struct dentry {
	struct dentry *d_parent;
	struct qstr d_name;
};

struct vfsmount {
	struct dentry *mnt_root;
};

struct mount {
	struct mount *mnt_parent;
	struct dentry *mnt_mountpoint;
	struct vfsmount mnt;
};

struct path {
	struct vfsmount *mnt;
	struct dentry *dentry;
};

struct file {
	struct path f_path;
};

struct vm_area_struct {
	unsigned long vm_start;
	unsigned long vm_end;
	struct mm_struct *vm_mm;
	unsigned long vm_flags;
	unsigned long vm_pgoff;
	struct file *vm_file;
};

struct task_struct {
	unsigned int flags;
	int pid;
	int tgid;
	__u64 start_time;
	struct mm_struct *mm;
	struct task_struct *group_leader;
	char comm[16];
};

struct linux_binprm;

struct seq_file;

struct bpf_iter_meta {
	struct seq_file *seq;
	__u64 session_id;
	__u64 seq_num;
};

struct bpf_iter__task {
	struct bpf_iter_meta *meta;
	struct task_struct *task;
};

#pragma clang attribute pop

/*
 * A kprobe's context: x86-64's pt_regs, whose layout is ABI (the same as
 * struct user_regs_struct), under the names bpf_tracing.h gives it outside
 * the kernel.  Read directly, so outside preserve_access_index.
 */
struct pt_regs {
	unsigned long r15, r14, r13, r12, rbp, rbx, r11, r10, r9, r8;
	unsigned long rax, rcx, rdx, rsi, rdi, orig_rax, rip, cs, eflags, rsp, ss;
};

#endif
