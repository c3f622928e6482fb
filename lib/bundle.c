// SPDX-License-Identifier: LGPL-2.1-only
/*
 * The guest-map bundle in memory: building one (what a guest agent does)
 * and inspecting one, its switch log (switch-log.c) included.  Each
 * record is checked as it is added, with the rules here (the reader
 * checks with them too); bundle-seal.c checks and seals the whole bundle.
 * The file format lives in bundle-write.c and bundle-read.c; lookups in
 * resolve.c.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "bundle.h"

/* ---- the rules each record keeps (the builder's and the reader's) ---- */

bool bundle_build_id_valid(const char *id)
{
	size_t n;

	for (n = 0; id[n]; n++) {
		if (n >= BUNDLE_MAX_BUILD_ID)
			return false;
		if (!((id[n] >= '0' && id[n] <= '9') || (id[n] >= 'a' && id[n] <= 'f')))
			return false;
	}
	return n >= 2 && !(n & 1);
}

bool bundle_lifetime_valid(uint64_t start, uint64_t exit)
{
	return exit == VMCTX_TIME_NONE || exit >= start;
}

bool bundle_window_valid(uint64_t start, uint64_t end)
{
	return end != VMCTX_TIME_NONE && end >= start;
}

bool bundle_extent_valid(uint64_t start, uint64_t size)
{
	return size <= UINT64_MAX - start;
}

bool bundle_map_valid(uint64_t start, uint64_t end)
{
	return start < end;
}

int bundle_check_sealed(const struct vmctx_bundle *b)
{
	if (!b)
		return -EINVAL;
	return b->sealed ? 0 : -VMCTX_E_UNSEALED;
}

struct vmctx_bundle *vmctx_bundle_new(void)
{
	return calloc(1, sizeof(struct vmctx_bundle));
}

static void free_object(struct vmctx_object *o)
{
	free(o->syms);
	key_index_free(&o->sym_index);
	free(o->path);
	free(o->build_id);
	bundle_unwind_free(o);
}

static void free_task(struct vmctx_task *t)
{
	if (t->maps_cap)
		free(t->maps);
	free(t->comm);
	free(t->label);
}

void vmctx_bundle_free(struct vmctx_bundle *b)
{
	size_t i;

	if (!b)
		return;
	for (i = 0; i < b->ntasks; i++)
		free_task(&b->tasks[i]);
	free(b->tasks);
	free(b->map_block);
	for (i = 0; i < b->nobjects; i++)
		free_object(&b->objects[i]);
	free(b->objects);
	for (i = 0; i < b->nkmods; i++)
		free(b->kmods[i].name);
	free(b->kmods);
	free(b->ksyms);
	util_pool_free(&b->names);
	free(b->pairs);
	switch_log_free(&b->switches);
	free(b->hostname);
	free(b->release);
	free(b->boot_id);
	free(b->agent);
	free(b->by_root);
	key_index_free(&b->root_index);
	free(b->live_all);
	free(b->live_leader);
	free(b->untimed);
	free(b->kseg_start);
	free(b->kseg_mod);
	key_index_free(&b->kseg_index);
	key_index_free(&b->ksym_index);
	util_name_index_free(&b->kmod_names);
	util_name_index_free(&b->build_ids);
	free(b);
}

/* Only an unsealed bundle takes records. */
static int building(const struct vmctx_bundle *b)
{
	if (!b)
		return -EINVAL;
	return b->sealed ? -VMCTX_E_SEALED : 0;
}

const char *bundle_path_base(const char *path)
{
	const char *slash = strrchr(path, '/');

	return slash && slash[1] ? slash + 1 : path;
}

/*
 * Copy @s (NULL: empty) if it is at most @max bytes long, into @pool (which
 * then owns the copy) or malloc()ed.
 */
static int copy_str(struct util_pool *pool, char **out, const char *s, size_t max)
{
	size_t n;

	if (!s)
		s = "";
	n = strnlen(s, max + 1);
	if (n > max)
		return -VMCTX_E_LIMIT;
	*out = pool ? util_pool_alloc(pool, n + 1) : malloc(n + 1);
	if (!*out)
		return -ENOMEM;
	memcpy(*out, s, n + 1);
	return 0;
}

/* Symbol and module names must be non-empty. */
static int copy_name(struct util_pool *pool, char **out, const char *s, size_t max)
{
	if (!s || !*s)
		return -EINVAL;
	return copy_str(pool, out, s, max);
}

int vmctx_bundle_set_identity(struct vmctx_bundle *b, const char *hostname,
			      const char *release, const char *boot_id)
{
	char *h = NULL, *r = NULL, *id = NULL;
	int err;

	err = building(b);
	if (err)
		return err;
	err = copy_str(NULL, &h, hostname, BUNDLE_MAX_SHORT);
	if (!err)
		err = copy_str(NULL, &r, release, BUNDLE_MAX_SHORT);
	if (!err)
		err = copy_str(NULL, &id, boot_id, BUNDLE_MAX_SHORT);
	if (err) {
		free(h);
		free(r);
		return err;
	}
	free(b->hostname);
	free(b->release);
	free(b->boot_id);
	b->hostname = h;
	b->release = r;
	b->boot_id = id;
	return 0;
}

int vmctx_bundle_set_agent(struct vmctx_bundle *b, const char *agent)
{
	char *a = NULL;
	int err;

	err = building(b);
	if (!err)
		err = copy_str(NULL, &a, agent, BUNDLE_MAX_SHORT);
	if (err)
		return err;
	free(b->agent);
	b->agent = a;
	return 0;
}

int vmctx_bundle_set_clock(struct vmctx_bundle *b, uint64_t tsc_khz, uint64_t tsc, uint64_t ns)
{
	int err = building(b);

	if (err)
		return err;
	b->tsc_khz = tsc_khz;
	b->clock_tsc = tsc;
	b->clock_ns = ns;
	return 0;
}

int vmctx_bundle_add_clock_pair(struct vmctx_bundle *b, uint64_t tsc, uint64_t ns)
{
	int err = building(b);

	if (err)
		return err;
	if (b->npairs >= BUNDLE_MAX_PAIRS)
		return -VMCTX_E_LIMIT;
	return bundle_push_pair(b, tsc, ns);
}

int bundle_push_pair(struct vmctx_bundle *b, uint64_t tsc, uint64_t ns)
{
	int err = util_grow((void **)&b->pairs, &b->pairs_cap, b->npairs + 1, sizeof(*b->pairs));

	if (err)
		return err;
	b->pairs[b->npairs].tsc = tsc;
	b->pairs[b->npairs].ns = ns;
	b->npairs++;
	return 0;
}

int vmctx_bundle_set_window(struct vmctx_bundle *b, uint64_t start_ns, uint64_t end_ns)
{
	int err = building(b);

	if (err)
		return err;
	if (!bundle_window_valid(start_ns, end_ns))
		return -EINVAL;
	b->has_window = true;
	b->window_start = start_ns;
	b->window_end = end_ns;
	return 0;
}

int vmctx_bundle_set_cr3_mask(struct vmctx_bundle *b, uint64_t ignore_mask)
{
	int err = building(b);

	if (err)
		return err;
	b->cr3_mask = ignore_mask;
	return 0;
}

int vmctx_bundle_add_task(struct vmctx_bundle *b, uint64_t root, int pid, int tgid,
			  const char *comm, uint64_t start_ns, uint64_t exit_ns)
{
	struct vmctx_task *t;
	char *c;
	int err;

	err = building(b);
	if (err)
		return err;
	if (pid < 0 || tgid < 0 || !bundle_lifetime_valid(start_ns, exit_ns))
		return -EINVAL;
	if (b->ntasks >= BUNDLE_MAX_TASKS)
		return -VMCTX_E_LIMIT;
	err = util_grow((void **)&b->tasks, &b->tasks_cap, b->ntasks + 1, sizeof(*b->tasks));
	if (err)
		return err;
	err = copy_str(NULL, &c, comm, BUNDLE_MAX_SHORT);
	if (err)
		return err;
	t = &b->tasks[b->ntasks];
	memset(t, 0, sizeof(*t));
	t->root = root;
	t->pid = pid;
	t->tgid = tgid;
	t->comm = c;
	t->start = start_ns;
	t->exit = exit_ns;
	t->label = NULL;
	t->maps_from = -1;
	return b->ntasks++;
}

static const char *object_build_id(const void *arr, uint32_t idx)
{
	return ((const struct vmctx_object *)arr)[idx].build_id;
}

int vmctx_bundle_add_object(struct vmctx_bundle *b, const char *path, const char *build_id)
{
	struct vmctx_object *o;
	char *p, *id = NULL;
	int err;

	err = building(b);
	if (err)
		return err;
	if (!path || !*path)
		return -EINVAL;
	if (build_id) {
		if (!bundle_build_id_valid(build_id))
			return -EINVAL;
		int i = util_name_find(&b->build_ids, build_id, object_build_id, b->objects);

		if (i >= 0)
			return i;
	}
	if (b->nobjects >= BUNDLE_MAX_OBJECTS)
		return -VMCTX_E_LIMIT;
	err = util_grow((void **)&b->objects, &b->objects_cap, b->nobjects + 1,
			 sizeof(*b->objects));
	if (err)
		return err;
	err = copy_str(NULL, &p, path, BUNDLE_MAX_PATH);
	if (err)
		return err;
	if (build_id) {
		id = strdup(build_id);
		if (!id) {
			free(p);
			return -ENOMEM;
		}
	}
	if (id) {
		err = util_name_add(&b->build_ids, id, b->nobjects, object_build_id, b->objects);
		if (err) {
			free(p);
			free(id);
			return err;
		}
	}
	o = &b->objects[b->nobjects];
	memset(o, 0, sizeof(*o));
	o->path = p;
	o->base = bundle_path_base(p);
	o->build_id = id;
	return b->nobjects++;
}

size_t vmctx_bundle_object_nsyms(const struct vmctx_bundle *b, int object)
{
	if (!b || object < 0 || (size_t)object >= b->nobjects)
		return 0;
	return b->objects[object].nsyms;
}

int vmctx_bundle_add_symbol(struct vmctx_bundle *b, int object, uint64_t start, uint64_t size,
			    const char *name)
{
	struct vmctx_object *o;
	struct vmctx_sym *s;
	char *n;
	int err;

	err = building(b);
	if (err)
		return err;
	if (object < 0 || (size_t)object >= b->nobjects || !bundle_extent_valid(start, size))
		return -EINVAL;
	o = &b->objects[object];
	if (b->syms_total >= BUNDLE_MAX_SYMS)
		return -VMCTX_E_LIMIT;
	err = copy_name(&b->names, &n, name, BUNDLE_MAX_SYMNAME);
	if (err)
		return err;
	err = util_grow((void **)&o->syms, &o->syms_cap, o->nsyms + 1, sizeof(*o->syms));
	if (err)
		return err;	/* @n stays in the pool, freed with the bundle */
	s = &o->syms[o->nsyms++];
	s->start = start;
	s->end = start + size;
	s->name = n;
	b->syms_total++;
	return 0;
}

int vmctx_bundle_add_map(struct vmctx_bundle *b, int task, uint64_t start, uint64_t end,
			 uint64_t pgoff, uint64_t bias, int object, const char *path)
{
	struct vmctx_task *t;
	struct vmctx_map *m;
	char *p;
	int err;

	err = building(b);
	if (err)
		return err;
	if (task < 0 || (size_t)task >= b->ntasks || !bundle_map_valid(start, end))
		return -EINVAL;
	if (object < -1 || (object >= 0 && (size_t)object >= b->nobjects))
		return -EINVAL;
	t = &b->tasks[task];
	if (b->maps_total >= BUNDLE_MAX_MAPS)
		return -VMCTX_E_LIMIT;
	err = util_grow((void **)&t->maps, &t->maps_cap, t->nmaps + 1, sizeof(*t->maps));
	if (err)
		return err;
	err = copy_str(&b->names, &p, path, BUNDLE_MAX_PATH);
	if (err)
		return err;
	m = &t->maps[t->nmaps++];
	m->start = start;
	m->end = end;
	m->pgoff = pgoff;
	m->bias = bias;
	m->object = object;
	m->path = p;
	m->base = bundle_path_base(p);
	b->maps_total++;
	return 0;
}

static const char *kmod_name(const void *arr, uint32_t idx)
{
	return ((const struct vmctx_kmod *)arr)[idx].name;
}

int vmctx_bundle_add_kmodule(struct vmctx_bundle *b, const char *name, uint64_t start,
			     uint64_t size)
{
	struct vmctx_kmod *k;
	char *n;
	int err;

	err = building(b);
	if (err)
		return err;
	if (!bundle_extent_valid(start, size))
		return -EINVAL;
	if (b->nkmods >= BUNDLE_MAX_KMODS)
		return -VMCTX_E_LIMIT;
	err = copy_name(NULL, &n, name, BUNDLE_MAX_SHORT);
	if (err)
		return err;
	/* add_ksym() finds modules by name. */
	if (util_name_find(&b->kmod_names, n, kmod_name, b->kmods) >= 0) {
		free(n);
		return -EEXIST;
	}
	err = util_grow((void **)&b->kmods, &b->kmods_cap, b->nkmods + 1, sizeof(*b->kmods));
	if (!err)
		err = util_name_add(&b->kmod_names, n, b->nkmods, kmod_name, b->kmods);
	if (err) {
		free(n);
		return err;
	}
	k = &b->kmods[b->nkmods];
	k->name = n;
	k->start = start;
	k->end = start + size;
	return b->nkmods++;
}

int vmctx_bundle_add_ksym(struct vmctx_bundle *b, uint64_t addr, const char *name,
			  const char *module)
{
	struct vmctx_ksym *k;
	int mod = -1;
	char *n;
	int err;

	err = building(b);
	if (err)
		return err;
	if (module) {
		mod = util_name_find(&b->kmod_names, module, kmod_name, b->kmods);
		if (mod < 0)
			return -ENOENT;
	}
	if (b->nksyms >= BUNDLE_MAX_KSYMS)
		return -VMCTX_E_LIMIT;
	err = copy_name(&b->names, &n, name, BUNDLE_MAX_SYMNAME);
	if (err)
		return err;
	err = util_grow((void **)&b->ksyms, &b->ksyms_cap, b->nksyms + 1, sizeof(*b->ksyms));
	if (err)
		return err;	/* @n stays in the pool, freed with the bundle */
	k = &b->ksyms[b->nksyms++];
	k->addr = addr;
	k->name = n;
	k->module = mod;
	return 0;
}

int vmctx_bundle_add_switch(struct vmctx_bundle *b, unsigned int cpu, uint64_t ns, int pid,
			    int tgid, enum vmctx_task_kind kind, const char *comm)
{
	int err = building(b);

	if (err)
		return err;
	if (pid < 0 || tgid < 0 || !switch_log_task_valid(pid, tgid, kind))
		return -EINVAL;
	if (comm && strnlen(comm, BUNDLE_MAX_SHORT + 1) > BUNDLE_MAX_SHORT)
		return -VMCTX_E_LIMIT;
	return switch_log_add(&b->switches, cpu, ns, pid, tgid, kind, comm);
}

int vmctx_bundle_add_switch_gap(struct vmctx_bundle *b, unsigned int cpu, uint64_t start_ns,
				uint64_t end_ns)
{
	int err = building(b);

	if (err)
		return err;
	if (end_ns < start_ns)
		return -EINVAL;
	return switch_log_add_gap(&b->switches, cpu, start_ns, end_ns);
}

/* Unset identity strings read as "". */
static const char *str_or_empty(const struct vmctx_bundle *b, const char *s)
{
	if (!b) {
		errno = EINVAL;
		return NULL;
	}
	return s ? s : "";
}

const char *vmctx_bundle_hostname(const struct vmctx_bundle *b)
{
	return str_or_empty(b, b ? b->hostname : NULL);
}

const char *vmctx_bundle_release(const struct vmctx_bundle *b)
{
	return str_or_empty(b, b ? b->release : NULL);
}

const char *vmctx_bundle_boot_id(const struct vmctx_bundle *b)
{
	return str_or_empty(b, b ? b->boot_id : NULL);
}

const char *vmctx_bundle_agent(const struct vmctx_bundle *b)
{
	return str_or_empty(b, b ? b->agent : NULL);
}

int vmctx_bundle_clock(const struct vmctx_bundle *b, uint64_t *tsc_khz, uint64_t *tsc,
		       uint64_t *ns)
{
	if (!b)
		return -EINVAL;
	if (tsc_khz)
		*tsc_khz = b->tsc_khz;
	if (tsc)
		*tsc = b->clock_tsc;
	if (ns)
		*ns = b->clock_ns;
	return 0;
}

int vmctx_bundle_window(const struct vmctx_bundle *b, uint64_t *start_ns, uint64_t *end_ns)
{
	if (!b)
		return -EINVAL;
	if (!b->has_window)
		return -ENOENT;
	if (start_ns)
		*start_ns = b->window_start;
	if (end_ns)
		*end_ns = b->window_end;
	return 0;
}

size_t vmctx_bundle_ntasks(const struct vmctx_bundle *b)
{
	return b ? b->ntasks : 0;
}

int vmctx_bundle_task(const struct vmctx_bundle *b, int task, uint64_t *root, int *pid,
		      int *tgid, const char **comm, uint64_t *start_ns, uint64_t *exit_ns)
{
	const struct vmctx_task *t;

	if (!b || task < 0 || (size_t)task >= b->ntasks)
		return -EINVAL;
	t = &b->tasks[task];
	if (root)
		*root = t->root;
	if (pid)
		*pid = t->pid;
	if (tgid)
		*tgid = t->tgid;
	if (comm)
		*comm = t->comm;
	if (start_ns)
		*start_ns = t->start;
	if (exit_ns)
		*exit_ns = t->exit;
	return 0;
}

/* Map @i of task @task, or the error both map inspectors return. */
static int task_map_at(const struct vmctx_bundle *b, int task, size_t i,
		       const struct vmctx_map **m)
{
	if (!b || task < 0 || (size_t)task >= b->ntasks)
		return -EINVAL;
	if (i >= b->tasks[task].nmaps)
		return -ENOENT;
	*m = &b->tasks[task].maps[i];
	return 0;
}

int vmctx_bundle_task_map(const struct vmctx_bundle *b, int task, size_t i, uint64_t *start,
			  uint64_t *end, uint64_t *pgoff, const char **path)
{
	const struct vmctx_map *m;
	int err;

	err = task_map_at(b, task, i, &m);
	if (err)
		return err;
	if (start)
		*start = m->start;
	if (end)
		*end = m->end;
	if (pgoff)
		*pgoff = m->pgoff;
	if (path)
		*path = m->path;
	return 0;
}

int vmctx_bundle_task_map_object(const struct vmctx_bundle *b, int task, size_t i, int *object,
				 uint64_t *bias)
{
	const struct vmctx_map *m;
	int err;

	err = task_map_at(b, task, i, &m);
	if (err)
		return err;
	if (object)
		*object = m->object;
	if (bias)
		*bias = m->bias;
	return 0;
}

int vmctx_bundle_task_maps_owner(const struct vmctx_bundle *b, int task)
{
	int err = bundle_check_sealed(b);

	if (err)
		return err;
	if (task < 0 || (size_t)task >= b->ntasks)
		return -EINVAL;
	return b->tasks[task].maps_from;
}

size_t vmctx_bundle_nobjects(const struct vmctx_bundle *b)
{
	return b ? b->nobjects : 0;
}

int vmctx_bundle_object(const struct vmctx_bundle *b, int object, const char **path,
			const char **build_id)
{
	const struct vmctx_object *o;

	if (!b || object < 0 || (size_t)object >= b->nobjects)
		return -EINVAL;
	o = &b->objects[object];
	if (path)
		*path = o->path;
	if (build_id)
		*build_id = o->build_id;
	return 0;
}

int vmctx_bundle_object_symbol(const struct vmctx_bundle *b, int object, size_t i,
			       uint64_t *start, uint64_t *end, const char **name)
{
	const struct vmctx_sym *s;

	if (!b || object < 0 || (size_t)object >= b->nobjects)
		return -EINVAL;
	if (i >= b->objects[object].nsyms)
		return -ENOENT;
	s = &b->objects[object].syms[i];
	if (start)
		*start = s->start;
	if (end)
		*end = s->end;
	if (name)
		*name = s->name;
	return 0;
}

size_t vmctx_bundle_nmaps(const struct vmctx_bundle *b)
{
	return b ? b->maps_total : 0;
}

size_t vmctx_bundle_nkmodules(const struct vmctx_bundle *b)
{
	return b ? b->nkmods : 0;
}

int vmctx_bundle_kmodule(const struct vmctx_bundle *b, int module, const char **name,
			 uint64_t *start, uint64_t *end)
{
	const struct vmctx_kmod *k;

	if (!b || module < 0 || (size_t)module >= b->nkmods)
		return -EINVAL;
	k = &b->kmods[module];
	if (name)
		*name = k->name;
	if (start)
		*start = k->start;
	if (end)
		*end = k->end;
	return 0;
}

size_t vmctx_bundle_nksyms(const struct vmctx_bundle *b)
{
	return b ? b->nksyms : 0;
}

int vmctx_bundle_ksym(const struct vmctx_bundle *b, size_t i, uint64_t *addr, const char **name,
		      int *module)
{
	const struct vmctx_ksym *k;

	if (!b)
		return -EINVAL;
	if (i >= b->nksyms)
		return -ENOENT;
	k = &b->ksyms[i];
	if (addr)
		*addr = k->addr;
	if (name)
		*name = k->name;
	if (module)
		*module = k->module;
	return 0;
}

size_t vmctx_bundle_nclock_pairs(const struct vmctx_bundle *b)
{
	return b ? b->npairs : 0;
}

size_t vmctx_bundle_nswitches(const struct vmctx_bundle *b)
{
	return b ? b->switches.n : 0;
}

int vmctx_bundle_switch(const struct vmctx_bundle *b, size_t i, unsigned int *cpu, uint64_t *ns,
			int *pid, int *tgid, enum vmctx_task_kind *kind, const char **comm)
{
	const struct switch_task *t;
	const struct switch_rec *r;

	if (!b)
		return -EINVAL;
	if (i >= b->switches.n)
		return -ENOENT;
	r = &b->switches.recs[i];
	t = &b->switches.tasks[r->task];
	if (cpu)
		*cpu = r->cpu;
	if (ns)
		*ns = r->ns;
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

size_t vmctx_bundle_nswitch_gaps(const struct vmctx_bundle *b)
{
	return b ? b->switches.ngaps : 0;
}

int vmctx_bundle_switch_gap(const struct vmctx_bundle *b, size_t i, unsigned int *cpu,
			    uint64_t *start_ns, uint64_t *end_ns)
{
	const struct switch_gap *g;

	if (!b)
		return -EINVAL;
	if (i >= b->switches.ngaps)
		return -ENOENT;
	g = &b->switches.gaps[i];
	if (cpu)
		*cpu = g->cpu;
	if (start_ns)
		*start_ns = g->start;
	if (end_ns)
		*end_ns = g->end;
	return 0;
}
