// SPDX-License-Identifier: LGPL-2.1-only
/*
 * Resolution: a raw guest CR3 to the task that owned the root at that
 * time, a guest CPU and time to the task the switch log says ran, and a
 * guest IP to a symbol through the task's maps or the guest kernel's
 * symbols.  Lookups read sealed bundles only: bundle-seal.c has
 * sorted them and bundle-index.c built the index by root.
 */
#include <errno.h>
#include <stdint.h>
#include <string.h>

#include "bundle.h"

/* Descend from @node to the leftmost (or rightmost) leaf above @t. */
static size_t tree_descend(const uint64_t *tr, size_t base, size_t node, uint64_t t, bool last)
{
	while (node < base) {
		node *= 2;
		if (last ? tr[node + 1] > t : tr[node] <= t)
			node++;
	}
	return node - base;
}

/*
 * The first (or @last) position in [l, r) whose leaf in the max-tree @tr
 * is above @t, or SIZE_MAX: O(log n).  The walk up meets the range's
 * nodes from both ends inwards; the far side's are kept to check after.
 */
static size_t tree_find(const uint64_t *tr, size_t base, size_t l, size_t r, uint64_t t,
			bool last)
{
	size_t far[2 * sizeof(size_t) * 8], nfar = 0;

	for (l += base, r += base; l < r; l >>= 1, r >>= 1) {
		if (l & 1) {
			if (!last && tr[l] > t)
				return tree_descend(tr, base, l, t, last);
			if (last)
				far[nfar++] = l;
			l++;
		}
		if (r & 1) {
			r--;
			if (last && tr[r] > t)
				return tree_descend(tr, base, r, t, last);
			if (!last)
				far[nfar++] = r;
		}
	}
	while (nfar--)
		if (tr[far[nfar]] > t)
			return tree_descend(tr, base, far[nfar], t, last);
	return SIZE_MAX;
}

/*
 * Of the tasks that own the root at @guest_ns, the last process leader in
 * start order, else the first task (threads share the root).  The last
 * task of the root to start by then is most often the answer, and costs
 * one search; the trees are for the others.  @iv (may be NULL) is
 * narrowed to times with the same answer: until the answer exits or the
 * root's next task starts, from the last task's start (the trees': from
 * @guest_ns).
 */
static int find_task_in(const struct vmctx_bundle *b, uint64_t cr3, uint64_t guest_ns,
			uint64_t *iv)
{
	uint64_t root, next, exit;
	size_t lo, hi, pos;

	root = vmctx_cr3_normalize(cr3, b->cr3_mask);
	/* [lo, hi): the root's tasks that started by guest_ns (all, if unknown) */
	hi = key_index_upper(&b->root_index, root, guest_ns);
	next = hi < b->ntasks && bundle_root_at(b, hi) == root ? b->keys[hi].start : UINT64_MAX;
	if (!hi || bundle_root_at(b, hi - 1) != root) {
		util_range_clip(iv, 0, next);
		return -ENOENT;
	}
	/* Time unknown: only a root that one process ever owned resolves. */
	if (guest_ns == VMCTX_TIME_NONE)
		return b->untimed[hi - 1];
	exit = b->live_leader[b->live_base + hi - 1];
	if (exit > guest_ns) {
		util_range_clip(iv, b->keys[hi - 1].start, exit < next ? exit : next);
		return b->by_root[hi - 1];
	}
	lo = bundle_root_first(b, root);
	pos = tree_find(b->live_leader, b->live_base, lo, hi, guest_ns, true);
	exit = pos != SIZE_MAX ? b->live_leader[b->live_base + pos] : 0;
	if (pos == SIZE_MAX) {
		pos = tree_find(b->live_all, b->live_base, lo, hi, guest_ns, false);
		exit = pos != SIZE_MAX ? b->live_all[b->live_base + pos] : next;
	}
	/*
	 * Later, the tasks that had exited stay gone, so the answer holds
	 * until it exits or the next task starts; earlier, one of them may
	 * have lived: from @guest_ns on only.
	 */
	util_range_clip(iv, guest_ns, exit < next ? exit : next);
	return pos == SIZE_MAX ? -ENOENT : (int)b->by_root[pos];
}

/*
 * Outside the bundle's window, when it has one, nobody: a root's owner
 * then is a guess (a task alive at the end may have exited, and its root
 * gone to a process the agent never saw).
 */
static bool outside_window(const struct vmctx_bundle *b, uint64_t ns)
{
	return ns != VMCTX_TIME_NONE && b->has_window &&
	       (ns < b->window_start || ns > b->window_end);
}

int vmctx_bundle_find_task(const struct vmctx_bundle *b, uint64_t cr3, uint64_t guest_ns)
{
	int err = bundle_check_sealed(b);

	if (err)
		return err;
	if (outside_window(b, guest_ns))
		return -ENOENT;
	return find_task_in(b, cr3, guest_ns, NULL);
}

const char *vmctx_bundle_task_label(const struct vmctx_bundle *b, int task)
{
	int err = bundle_check_sealed(b);

	if (err) {
		errno = -err;
		return NULL;
	}
	if (task < 0 || (size_t)task >= b->ntasks) {
		errno = ENOENT;
		return NULL;
	}
	return b->tasks[task].label;
}

static const struct vmctx_sym *find_sym(const struct vmctx_object *o, uint64_t addr)
{
	size_t lo;

	if (o->sym_index.n)
		lo = key_index_upper(&o->sym_index, addr, 0);
	else
		lo = util_upper_bound(o->syms, o->nsyms, sizeof(*o->syms),
				 offsetof(struct vmctx_sym, start), addr);
	if (!lo || addr >= o->syms[lo - 1].end)
		return NULL;
	return &o->syms[lo - 1];
}

int bundle_resolve_user(const struct vmctx_bundle *b, int task, uint64_t ip,
			const char **sym, const char **dso, struct resolve_hint *h)
{
	const struct vmctx_task *t;
	const struct vmctx_map *m = h->map;
	size_t lo;

	if (task < 0 || (size_t)task >= b->ntasks)
		return -ENOENT;
	/* maps are sorted and apart: one that holds ip is the search's answer */
	if (!m || ip < m->start || ip >= m->end) {
		t = &b->tasks[b->tasks[task].maps_from];
		lo = util_upper_bound(t->maps, t->nmaps, sizeof(*t->maps),
				      offsetof(struct vmctx_map, start), ip);
		if (!lo || ip >= t->maps[lo - 1].end)
			return -ENOENT;
		m = &t->maps[lo - 1];
		h->map = m;
		h->sym = NULL;
	}
	if (dso)
		*dso = m->base;
	if (sym) {
		const struct vmctx_sym *s = h->sym;
		uint64_t addr = ip - m->bias;

		/* so are symbols, ends cut at the next start (bundle-seal.c) */
		if (!s || addr < s->start || addr >= s->end) {
			s = NULL;
			if (m->object >= 0 && (size_t)m->object < b->nobjects)
				s = find_sym(&b->objects[m->object], addr);
			h->sym = s;
		}
		*sym = s ? s->name : NULL;
	}
	return 0;
}

int vmctx_bundle_resolve_user(const struct vmctx_bundle *b, int task, uint64_t ip,
			      const char **sym, const char **dso)
{
	struct resolve_hint h = { NULL, NULL };
	int err = bundle_check_sealed(b);

	return err ?: bundle_resolve_user(b, task, ip, sym, dso, &h);
}

int vmctx_bundle_resolve_kernel(const struct vmctx_bundle *b, uint64_t ip, const char **sym,
				const char **module)
{
	const struct vmctx_kmod *km = NULL;
	const struct vmctx_ksym *ks = NULL;
	size_t lo;
	int err;

	err = bundle_check_sealed(b);
	if (err)
		return err;
	lo = key_index_upper(&b->kseg_index, ip, 0);
	if (lo && b->kseg_mod[lo - 1] >= 0)
		km = &b->kmods[b->kseg_mod[lo - 1]];
	/*
	 * Below the kernel's first symbol and every module: the guest is not
	 * running its kernel yet (the decompressor, at identity-mapped
	 * physical addresses, or the firmware), which no symbol describes.
	 */
	if (!lo && b->nksyms && ip < b->ksyms[0].addr) {
		if (sym)
			*sym = NULL;
		if (module)
			*module = VMCTX_EARLY_BOOT;
		return 0;
	}

	lo = key_index_upper(&b->ksym_index, ip, 0);
	if (lo)
		ks = &b->ksyms[lo - 1];
	/* A symbol of another module, or of vmlinux below a module, does not cover ip. */
	if (ks && km && (ks->module < 0 || &b->kmods[ks->module] != km))
		ks = NULL;
	if (ks && !km && ks->module >= 0)
		ks = NULL;
	if (sym)
		*sym = ks ? ks->name : NULL;
	if (module)
		*module = km ? km->name : "vmlinux";
	return 0;
}

/*
 * The switch log's answer, within the window: a switch or gap outside it
 * was refused, and after it a CPU may have run anything.
 */
int vmctx_bundle_running(const struct vmctx_bundle *b, unsigned int cpu, uint64_t ns, int *pid,
			 int *tgid, enum vmctx_task_kind *kind, const char **comm)
{
	const struct switch_task *t;
	const struct switch_rec *r;
	int err;

	err = bundle_check_sealed(b);
	if (err)
		return err;
	if (b->has_window && (ns < b->window_start || ns > b->window_end))
		return -ENOENT;
	err = switch_log_find(&b->switches, cpu, ns, &r, NULL);
	if (err)
		return err;
	t = &b->switches.tasks[r->task];
	if (pid)
		*pid = t->pid;
	if (tgid)
		*tgid = t->tgid;
	if (kind)
		*kind = t->kind;
	if (comm)
		*comm = b->switches.comms[t->comm];
	return 0;
}

/* @o as the root's owner @task says (by ROOT), or nobody (-1). */
static void owner_of_root(const struct vmctx_bundle *b, int task, struct vmctx_owner *o)
{
	const struct vmctx_task *t;

	o->task = task;
	if (task < 0) {
		o->by = VMCTX_OWNER_NONE;
		o->task = -1;
		return;
	}
	t = &b->tasks[task];
	o->by = VMCTX_OWNER_ROOT;
	o->pid = t->pid;
	o->tgid = t->tgid;
	o->kind = VMCTX_TASK_USER;
	o->comm = t->comm;
}

int vmctx_bundle_owner(const struct vmctx_bundle *b, int cpu, uint64_t cr3, uint64_t ns,
		       bool user, struct vmctx_owner *o)
{
	uint64_t iv[2] = { 0, UINT64_MAX }, *piv = NULL;
	size_t sz = o ? o->sz : 0;
	struct vmctx_owner a = { .sz = sz, .task = -1 };
	const struct switch_task *t;
	const struct switch_rec *r;
	bool outside;
	int err, root = -1;

	err = bundle_check_sealed(b);
	if (err)
		return err;
	if (sz < offsetofend(struct vmctx_owner, disagree))
		return -EINVAL;
	/* the times of the same answer: within the window, or out of it */
	outside = outside_window(b, ns);
	if (ns != VMCTX_TIME_NONE)
		piv = iv;
	if (piv && b->has_window) {
		uint64_t end = b->window_end < UINT64_MAX ? b->window_end + 1 : UINT64_MAX;

		if (ns < b->window_start)
			util_range_clip(iv, 0, b->window_start);
		else if (ns >= end)
			util_range_clip(iv, end, UINT64_MAX);
		else
			util_range_clip(iv, b->window_start, end);
	}
	if (cr3 && !outside) {
		root = find_task_in(b, cr3, ns, piv);
		if (root < 0)
			root = -1;
	}
	err = -ENOENT;
	if (cpu >= 0 && ns != VMCTX_TIME_NONE && !outside) {
		err = switch_log_find(&b->switches, (unsigned int)cpu, ns, &r, piv);
		/* where switches were lost, this time alone */
		if (err == -VMCTX_E_GAP)
			util_range_clip(piv, ns, ns + 1);
	}
	if (err) {
		owner_of_root(b, root, &a);
		a.log_err = err == -VMCTX_E_GAP ? err : -ENOENT;
		goto out;
	}
	t = &b->switches.tasks[r->task];
	if (user && (t->kind != VMCTX_TASK_USER || (root >= 0 && b->tasks[root].tgid != t->tgid))) {
		/* the address space decides a user-mode sample's process */
		owner_of_root(b, root, &a);
		a.disagree = true;
		goto out;
	}
	a.by = VMCTX_OWNER_SWITCH;
	a.pid = t->pid;
	a.tgid = t->tgid;
	a.kind = t->kind;
	a.comm = b->switches.comms[t->comm];
	/* the address space that ran is that process's, if the root is its */
	if (root >= 0 && b->tasks[root].tgid == t->tgid) {
		a.task = root;
		/*
		 * The log took the comm at the switch: an exec since (a fork's
		 * child runs as its parent's comm until it execs) renamed the
		 * task without a switch, and the bundle's task has the new one.
		 */
		if (b->tasks[root].pid == t->pid)
			a.comm = b->tasks[root].comm;
	}
out:
	if (piv) {
		a.valid_from = iv[0];
		a.valid_until = iv[1];
	}
	/* a caller's older, shorter structure gets what it has room for */
	memcpy(o, &a, sz < sizeof(a) ? sz : sizeof(a));
	return 0;
}
