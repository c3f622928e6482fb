// SPDX-License-Identifier: LGPL-2.1-only
/*
 * Session: the VMs and vCPUs of one recording, and the entry points that
 * take the host's event stream.  Samples are resolved here (guest CR3 and
 * IP through the VM's bundle) and handed to the timeline, whose output,
 * runs of each vCPU's virtual stream, the timeline counts (aggregate.c)
 * and hands to its sink: here, named (labels.c) for the caller's stream.
 *
 * A VM is named by its host tgid in every call and must be declared first;
 * it is numbered vm_nr for its "(VMk)" labels, and kept at s->vms[vm_idx].
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bundle.h"
#include "clock.h"
#include "labels.h"
#include "session.h"
#include "timeline.h"

/* Default bounds on what a (possibly corrupt) event stream can make us allocate. */
#define DEFAULT_MAX_PCPUS	1024
#define DEFAULT_MAX_VCPUS	4096
/* KVM's largest vCPU id on x86 (KVM_MAX_VCPU_IDS) is well below this. */
#define MAX_VCPU_ID		(1 << 20)

struct vmctx_session *vmctx_session_new(const struct vmctx_session_opts *opts)
{
	struct vmctx_session *s;

	uint64_t tick_ns = OPTS_GET(opts, tick_ns, 0);
	uint32_t flags = OPTS_GET(opts, flags, 0);

	if (!OPTS_VALID(opts, struct vmctx_session_opts, tick_ns) ||
	    flags & ~(VMCTX_SESSION_WEIGHT_BY_TIME | VMCTX_SESSION_NO_TABLE |
		      VMCTX_SESSION_BLANK_STREAM) ||
	    (flags & VMCTX_SESSION_WEIGHT_BY_TIME && !tick_ns)) {
		errno = EINVAL;
		return NULL;
	}
	s = calloc(1, sizeof(*s));
	if (!s)
		return NULL;
	s->tl.tick_ns = tick_ns;
	s->tl.max_pcpus = OPTS_GET(opts, max_pcpus, 0) ?: DEFAULT_MAX_PCPUS;
	s->max_vcpus = OPTS_GET(opts, max_vcpus, 0) ?: DEFAULT_MAX_VCPUS;
	s->tl.weight_by_time = flags & VMCTX_SESSION_WEIGHT_BY_TIME;
	s->tl.agg.off = flags & VMCTX_SESSION_NO_TABLE;
	s->tl.sink_blank_only = flags & VMCTX_SESSION_BLANK_STREAM;
	return s;
}

void vmctx_session_free(struct vmctx_session *s)
{
	size_t i;

	if (!s)
		return;
	for (i = 0; i < s->nvms; i++) {
		free(s->vms[i].name);
		free(s->vms[i].label);
		free(s->vms[i].tag);
		free(s->vms[i].vcpu_ids);
	}
	for (i = 0; i < s->tl.nvcpus; i++)
		free(s->tl.vcpus[i].pend);
	agg_free(&s->tl.agg);
	free(s->vms);
	free(s->tl.vcpus);
	util_id_index_free(&s->vcpu_index);
	util_id_index_free(&s->vm_index);
	free(s->tl.pcpus);
	free(s);
}

/* Every sample names its VM: find it in O(1), whatever the number of VMs. */
int session_vm_idx(const struct vmctx_session *s, int vm_tgid)
{
	int i = util_id_find(&s->vm_index, (uint32_t)vm_tgid);

	return i < 0 ? -ENOENT : i;
}

/* Name VM @vm, with the labels its rows use. */
static int name_vm(struct vmctx_vm *vm, const char *name, bool default_name)
{
	char *n = strdup(name), *label = NULL;

	if (!n || asprintf(&label, "[%s]", name) < 0) {
		free(n);
		return -ENOMEM;
	}
	free(vm->name);
	free(vm->label);
	vm->name = n;
	vm->label = label;
	vm->default_name = default_name;
	return 0;
}

int vmctx_session_add_vm(struct vmctx_session *s, int vm_tgid, const char *name)
{
	struct vmctx_vm *vm;
	char buf[32];
	int i;

	if (!s || vm_tgid < 0)
		return -EINVAL;
	i = session_vm_idx(s, vm_tgid);
	if (i >= 0) {
		if (name && name_vm(&s->vms[i], name, false))
			return -ENOMEM;
		return s->vms[i].nr;
	}
	if (util_grow((void **)&s->vms, &s->vms_cap, s->nvms + 1, sizeof(*s->vms)))
		return -ENOMEM;
	snprintf(buf, sizeof(buf), "pid%d", vm_tgid);
	vm = &s->vms[s->nvms];
	memset(vm, 0, sizeof(*vm));
	vm->tgid = vm_tgid;
	vm->nr = s->nvms + 1;
	if (name_vm(vm, name ? name : buf, !name) || asprintf(&vm->tag, "(VM%d)", vm->nr) < 0) {
		free(vm->name);
		free(vm->label);
		return -ENOMEM;
	}
	if (util_id_add(&s->vm_index, (uint32_t)vm_tgid, s->nvms)) {
		free(vm->name);
		free(vm->label);
		free(vm->tag);
		return -ENOMEM;
	}
	s->nvms++;
	return vm->nr;
}

int vmctx_session_attach_bundle(struct vmctx_session *s, int vm_tgid,
				const struct vmctx_bundle *b, int64_t guest_ns_offset)
{
	struct vmctx_vm *vm;
	int err, i;

	if (!s)
		return -EINVAL;
	err = bundle_check_sealed(b);
	if (err)
		return err;
	i = session_vm_idx(s, vm_tgid);
	if (i < 0)
		return i;
	vm = &s->vms[i];
	vm->bundle = b;
	/* its vCPUs' task caches index the bundle they resolved through */
	for (size_t j = 0; j < s->tl.nvcpus; j++)
		if (s->tl.vcpus[j].vm_idx == i) {
			s->tl.vcpus[j].cache_task = -1;
			s->tl.vcpus[j].res_hint = (struct resolve_hint){ NULL, NULL };
		}
	memset(&vm->clock, 0, sizeof(vm->clock));
	if (guest_ns_offset != VMCTX_OFFSET_UNKNOWN)
		vmctx_clock_set_linear(&vm->clock, 0, guest_ns_offset, 0);
	/* The guest's host name is a better default than the QEMU pid. */
	if (vm->default_name && b->hostname && *b->hostname)
		return name_vm(vm, b->hostname, true);
	return 0;
}

int vmctx_session_set_clock(struct vmctx_session *s, int vm_tgid, const struct vmctx_clock *c)
{
	int i;

	if (!s)
		return -EINVAL;
	i = session_vm_idx(s, vm_tgid);
	if (i < 0)
		return i;
	if (c)
		s->vms[i].clock = *c;
	else
		memset(&s->vms[i].clock, 0, sizeof(s->vms[i].clock));
	return 0;
}

/* A vCPU's id in the index: its VM's tgid and its own id. */
static uint64_t vcpu_key(int vm_tgid, int id)
{
	return (uint64_t)(uint32_t)vm_tgid << 32 | (uint32_t)id;
}

/* vCPU @id of the VM whose tgid is @vm_tgid, if seen already: one probe, no VM lookup. */
static struct vmctx_vcpu *find_vcpu(const struct vmctx_session *s, int vm_tgid, int id)
{
	int i = util_id_find(&s->vcpu_index, vcpu_key(vm_tgid, id));

	return i < 0 ? NULL : &s->tl.vcpus[i];
}

/* Put a new vCPU's @id among @vm's ids, in order (room was made for it). */
static void vm_add_vcpu_id(struct vmctx_vm *vm, int id)
{
	size_t k = vm->nvcpus;

	for (; k && vm->vcpu_ids[k - 1] > id; k--)
		vm->vcpu_ids[k] = vm->vcpu_ids[k - 1];
	vm->vcpu_ids[k] = id;
	vm->nvcpus++;
}

/* vCPU @id of VM @vm_idx, whose tgid is @vm_tgid (created on first sight), or NULL with errno. */
static struct vmctx_vcpu *vcpu_of(struct vmctx_session *s, int vm_idx, int vm_tgid, int id)
{
	struct vmctx_vm *vm = &s->vms[vm_idx];
	struct vmctx_vcpu *v;

	if (id < 0 || id >= MAX_VCPU_ID) {
		errno = EINVAL;
		return NULL;
	}
	v = find_vcpu(s, vm_tgid, id);
	if (v)
		return v;
	if (s->tl.nvcpus >= s->max_vcpus) {
		errno = E2BIG;
		return NULL;
	}
	if (util_grow_aligned((void **)&s->tl.vcpus, &s->tl.vcpus_cap, s->tl.nvcpus + 1,
			       sizeof(*s->tl.vcpus), VCPU_ALIGN) ||
	    util_grow((void **)&vm->vcpu_ids, &vm->vcpu_ids_cap, vm->nvcpus + 1,
		       sizeof(*vm->vcpu_ids)))
		goto nomem;
	v = &s->tl.vcpus[s->tl.nvcpus];
	memset(v, 0, sizeof(*v));
	timeline_add_vcpu(v);
	v->vm_idx = vm_idx;
	v->id = id;
	v->cache_task = -1;
	snprintf(v->on_label, sizeof(v->on_label), "(on vcpu%d)", id);
	if (util_id_add(&s->vcpu_index, vcpu_key(vm_tgid, id), s->tl.nvcpus))
		goto nomem;
	s->tl.nvcpus++;
	vm_add_vcpu_id(vm, id);
	return v;
nomem:
	errno = ENOMEM;
	return NULL;
}

/* vCPU @id of the declared VM @vm_tgid (created on first sight), or NULL with errno. */
static struct vmctx_vcpu *get_vcpu(struct vmctx_session *s, int vm_tgid, int id)
{
	int vm_idx = session_vm_idx(s, vm_tgid);

	if (vm_idx < 0) {
		errno = ENOENT;
		return NULL;
	}
	return vcpu_of(s, vm_idx, vm_tgid, id);
}

static int owner_of(const struct vmctx_session *s, const struct vmctx_vcpu *v)
{
	return v ? (int)(v - s->tl.vcpus) + 1 : OWNER_OUTSIDE;
}

/* The task owning the sample's CR3, cached per vCPU for its lifetime. */
static int sample_task(struct vmctx_session *s, struct vmctx_vcpu *v,
		       const struct vmctx_sample *smp)
{
	const struct vmctx_vm *vm = &s->vms[v->vm_idx];
	const struct vmctx_bundle *b = vm->bundle;
	const struct vmctx_task *task;
	uint64_t t;
	int i;

	if (!b)
		return -ENOENT;
	/* Unknown guest time (or out of range): roots that one process owned still resolve. */
	if (clock_guest_ns(&vm->clock, smp->time, &t))
		t = VMCTX_TIME_NONE;
	if (v->cache_task >= 0 && v->cache_cr3 == smp->cr3 && t >= v->cache_from &&
	    (t < v->cache_to || v->cache_to == VMCTX_TIME_NONE))
		return v->cache_task;
	i = vmctx_bundle_find_task(b, smp->cr3, t);
	if (i < 0)
		return i;
	task = &b->tasks[i];
	if (i != v->cache_task)
		v->res_hint = (struct resolve_hint){ NULL, NULL };
	v->cache_task = i;
	v->cache_cr3 = smp->cr3;
	v->cache_from = t == VMCTX_TIME_NONE ? 0 : task->start;
	v->cache_to = t == VMCTX_TIME_NONE ? VMCTX_TIME_NONE : task->exit;
	return i;
}

/*
 * What guest code @smp ran in @v: guest OS or USER (the class), and the
 * task, function and module the vCPU's VM's bundle names, if it has one.
 */
static int guest_code(struct vmctx_session *s, struct vmctx_vcpu *v,
		      const struct vmctx_sample *smp, struct agg_key *k)
{
	const struct vmctx_bundle *b = s->vms[v->vm_idx].bundle;

	/* nobody reads the names: the class is all the stream takes */
	if (s->tl.agg.off)
		return smp->cpl != 3 ? VMCTX_CLASS_OS : VMCTX_CLASS_USER;
	if (smp->cpl != 3) {
		if (b)
			vmctx_bundle_resolve_kernel(b, smp->ip, &k->function, &k->module);
		return VMCTX_CLASS_OS;
	}
	k->by = sample_task(s, v, smp);
	if (k->by >= 0 && bundle_resolve_user(b, k->by, smp->ip, &k->function, &k->module,
					      &v->res_hint))
		k->module = NULL;
	return VMCTX_CLASS_USER;
}

/*
 * The vCPU the sample's pCPU ran last, if the sample names it: a vCPU
 * keeps its pCPU for many samples in a row, and this spares the lookups.
 */
static struct vmctx_vcpu *pcpu_vcpu(const struct vmctx_session *s,
				    const struct vmctx_sample *smp)
{
	struct vmctx_vcpu *v;
	int cur;

	if (smp->cpu >= s->tl.npcpus || smp->vcpu < 0)
		return NULL;
	cur = s->tl.pcpus[smp->cpu].cur;
	if (cur <= 0)
		return NULL;
	v = &s->tl.vcpus[cur - 1];
	return v->id == smp->vcpu && s->vms[v->vm_idx].tgid == smp->vm_tgid ? v : NULL;
}

/* The span of the recording, for exports: from the first sample taken. */
static void note_start(struct vmctx_session *s, uint64_t time)
{
	if (s->started)
		return;
	s->started = true;
	s->first_time = time;
}

/*
 * Any sample but the usual one (see vmctx_session_sample()): @v is the
 * vCPU the pCPU ran last if the sample names it, else NULL.  Apart, so
 * that the usual sample's path saves no registers for this one's calls.
 */
static __attribute__((noinline)) int sample_full(struct vmctx_session *s,
						 const struct vmctx_sample *smp,
						 struct vmctx_vcpu *v)
{
	struct agg_key k;
	uint64_t w;
	int err;

	if (!v && smp->vm_tgid >= 0 && smp->vcpu >= 0)
		v = find_vcpu(s, smp->vm_tgid, smp->vcpu);
	if (!v && smp->vm_tgid >= 0) {
		/* the VM is looked up once a sample */
		int vm_idx = session_vm_idx(s, smp->vm_tgid);

		if (vm_idx < 0)
			return -ENOENT;
		if (smp->vcpu >= 0) {
			v = vcpu_of(s, vm_idx, smp->vm_tgid, smp->vcpu);
			if (!v)
				return -errno;
		}
	}
	if (!v && (smp->flags & VMCTX_SAMPLE_GUEST))
		return -EINVAL;		/* guest code must belong to a vCPU */
	/* here a guest sample never runs on: pcpu_vcpu() found no vCPU, or it did not */
	note_start(s, smp->time);
	/* The physical view: what this pCPU did. */
	memset(&k, 0, sizeof(k));
	k.scope = AGG_HOST;
	k.vm_idx = -1;
	k.vcpu = -1;
	k.by = -1;
	if (smp->flags & VMCTX_SAMPLE_GUEST) {
		k.cls = VMCTX_CLASS_VM;
		k.vm_idx = v->vm_idx;
		k.sub = guest_code(s, v, smp, &k);
	} else {
		if (smp->flags & VMCTX_SAMPLE_IDLE)
			k.cls = VMCTX_CLASS_IDLE;
		else if (smp->flags & VMCTX_SAMPLE_USER)
			k.cls = VMCTX_CLASS_USER;
		else
			k.cls = VMCTX_CLASS_OS;
		k.function = smp->host_sym;
		k.module = smp->host_dso;
		/* KVM's work for a loaded vCPU: its VM's row in the host view */
		if (v && (smp->flags & VMCTX_SAMPLE_HOST_VCPU))
			k.vm_idx = v->vm_idx;
	}
	err = timeline_weight(&s->tl, smp, &w);
	if (err)
		return err;
	s->last_weight = w;
	/*
	 * A guest sample's physical-view row is the sum of its vCPU rows
	 * (report.c derives it), so it is counted once, by the timeline.
	 */
	if (!(smp->flags & VMCTX_SAMPLE_GUEST) && w) {
		err = agg_add(&s->tl.agg, &k, w);
		if (err)
			return err;
	}
	return timeline_sample(&s->tl, smp, owner_of(s, v), v, &k, w);
}

int vmctx_session_sample(struct vmctx_session *s, const struct vmctx_sample *smp)
{
	struct vmctx_vcpu *v = NULL;

	if (!s || !smp || !OPTS_VALID(smp, struct vmctx_sample, host_dso))
		return -EINVAL;
	if (s->finished)
		return -EINVAL;
	s->last_weight = 1;
	if (smp->vm_tgid >= 0)
		v = pcpu_vcpu(s, smp);
	if (v && (smp->flags & VMCTX_SAMPLE_GUEST) && timeline_runs_on(&s->tl, v, smp)) {
		/* most samples: the vCPU runs on, and is counted in short */
		struct agg_key vk = {
			.scope = AGG_VCPU, .vm_idx = v->vm_idx, .vcpu = v->id, .by = -1,
		};

		vk.cls = guest_code(s, v, smp, &vk);
		return timeline_run_on(&s->tl, v, smp, &vk);
	}
	return sample_full(s, smp, v);
}

uint64_t vmctx_session_sample_weight(const struct vmctx_session *s)
{
	return s ? s->last_weight : 0;
}

/* The vCPU a vCPU event names, created on first use; NULL with errno. */
static struct vmctx_vcpu *event_vcpu(struct vmctx_session *s, int vm_tgid, int vcpu)
{
	if (!s || s->finished) {
		errno = EINVAL;
		return NULL;
	}
	return get_vcpu(s, vm_tgid, vcpu);
}

int vmctx_session_switch(struct vmctx_session *s, uint64_t time, uint32_t cpu, int vm_tgid,
			 int vcpu, bool out, bool preempt)
{
	struct vmctx_vcpu *v = event_vcpu(s, vm_tgid, vcpu);

	return v ? timeline_switch(&s->tl, time, cpu, v, out, preempt) : -errno;
}

int vmctx_session_halt(struct vmctx_session *s, uint64_t time, int vm_tgid, int vcpu,
		       bool halted)
{
	struct vmctx_vcpu *v = event_vcpu(s, vm_tgid, vcpu);

	return v ? timeline_halt(&s->tl, time, v, halted) : -errno;
}

int vmctx_session_vcpu_end(struct vmctx_session *s, uint64_t time, int vm_tgid, int vcpu)
{
	struct vmctx_vcpu *v = event_vcpu(s, vm_tgid, vcpu);

	return v ? timeline_vcpu_end(&s->tl, time, v) : -errno;
}

int vmctx_session_lost(struct vmctx_session *s, uint64_t time, uint32_t cpu, uint64_t count)
{
	struct agg_key k;
	int err;

	if (!s || s->finished)
		return -EINVAL;
	err = timeline_lost(&s->tl, time, cpu, count);
	if (err)
		return err;
	/* The physical view: the pCPU lost them. */
	memset(&k, 0, sizeof(k));
	k.scope = AGG_HOST;
	k.cls = VMCTX_CLASS_LOST;
	k.vm_idx = -1;
	k.vcpu = -1;
	k.by = -1;
	return agg_add(&s->tl.agg, &k, count);
}

int vmctx_session_finish(struct vmctx_session *s, uint64_t time)
{
	int err;

	if (!s || s->finished)
		return -EINVAL;
	err = timeline_finish(&s->tl, time);
	s->finished = true;
	s->end_time = time > s->tl.last_time ? time : s->tl.last_time;
	return err;
}

/* The timeline's sink while the caller watches the stream: each run, named. */
static void stream_run(const struct timeline *tl, const struct vmctx_vcpu *v,
		       const struct agg_key *k, uint64_t time, uint64_t count)
{
	const struct vmctx_session *s = (const struct vmctx_session *)
		((const char *)tl - offsetof(struct vmctx_session, tl));
	struct vmctx_tick t = {
		.sz = sizeof(t),
		.time = time,
		.vm_tgid = s->vms[v->vm_idx].tgid,
		.vcpu = v->id,
		.cls = k->cls,
		.count = count,
		.exit_reason = v->last_exit,
	};
	char buf[256];

	labels_of(s, k, false, &t.function, &t.module, buf, sizeof(buf));
	s->stream(&t, s->stream_ctx);
}

void vmctx_session_set_stream(struct vmctx_session *s, vmctx_stream_fn fn, void *ctx)
{
	if (!s)
		return;
	s->stream = fn;
	s->stream_ctx = ctx;
	s->tl.sink = fn ? stream_run : NULL;
}

size_t vmctx_session_nvms(const struct vmctx_session *s)
{
	return s ? s->nvms : 0;
}

int vmctx_session_vm_tgid(const struct vmctx_session *s, int vm_nr)
{
	if (!s || vm_nr < 1 || (size_t)vm_nr > s->nvms)
		return -ENOENT;
	return s->vms[vm_nr - 1].tgid;
}

int vmctx_session_vm_nr(const struct vmctx_session *s, int vm_tgid)
{
	int i = s ? session_vm_idx(s, vm_tgid) : -ENOENT;

	return i < 0 ? i : s->vms[i].nr;
}

const char *vmctx_session_vm_name(const struct vmctx_session *s, int vm_tgid)
{
	int i = s ? session_vm_idx(s, vm_tgid) : -ENOENT;

	if (i < 0) {
		errno = ENOENT;
		return NULL;
	}
	return s->vms[i].name;
}

size_t vmctx_session_vm_nvcpus(const struct vmctx_session *s, int vm_tgid)
{
	int vm_idx = s ? session_vm_idx(s, vm_tgid) : -ENOENT;

	return vm_idx < 0 ? 0 : s->vms[vm_idx].nvcpus;
}

int vmctx_session_vm_vcpu(const struct vmctx_session *s, int vm_tgid, size_t i)
{
	int vm_idx = s ? session_vm_idx(s, vm_tgid) : -ENOENT;

	if (vm_idx < 0 || i >= s->vms[vm_idx].nvcpus)
		return -ENOENT;
	return s->vms[vm_idx].vcpu_ids[i];
}
