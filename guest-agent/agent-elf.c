// SPDX-License-Identifier: GPL-2.0
/*
 * ELF objects behind the mappings: build-id, function symbols (.symtab,
 * else .dynsym) and the PT_LOAD segments that give each mapping's load
 * bias.  Each path is read once per run (a tree finds it again); the
 * bundle deduplicates objects by build-id, so symbols are added only
 * to an object that has none yet.  Paths come from the guest's processes:
 * anything but a regular file is skipped without being read.
 */
#include "agent.h"

#include <errno.h>
#include <fcntl.h>
#include <gelf.h>
#include <libelf.h>
#include <search.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/auxv.h>
#include <sys/stat.h>
#include <unistd.h>

#define VDSO_PATH	"[vdso]"

struct agent_elf_entry {
	char *path;
	int object;		/* -1: not an ELF object we can use */
	size_t nloads;
	uint64_t (*loads)[4];	/* PT_LOAD: p_offset, p_vaddr, p_filesz, p_flags */
};

/* Entries by path, in a tree (tsearch): a lookup costs O(log n) for n distinct paths. */
struct agent_elf_cache {
	void *tree;		/* struct agent_elf_entry * */
};

struct agent_elf_cache *agent_elf_cache_new(void)
{
	if (elf_version(EV_CURRENT) == EV_NONE)
		return NULL;
	return calloc(1, sizeof(struct agent_elf_cache));
}

static int cmp_entry(const void *x, const void *y)
{
	const struct agent_elf_entry *a = x, *b = y;

	return strcmp(a->path, b->path);
}

static void free_entry(void *p)
{
	struct agent_elf_entry *e = p;

	free(e->path);
	free(e->loads);
	free(e);
}

void agent_elf_cache_free(struct agent_elf_cache *c)
{
	if (!c)
		return;
	tdestroy(c->tree, free_entry);
	free(c);
}

/* How well a segment's flags fit a mapping's protection: X counts most, then W. */
static int fit(uint64_t flags, unsigned int prot)
{
	return 2 * !((flags ^ prot) & PF_X) + !((flags ^ prot) & PF_W);
}

int agent_elf_bias_for(const uint64_t (*loads)[4], size_t nloads, uint64_t start,
		       uint64_t pgoff, unsigned int prot, uint64_t *bias)
{
	const uint64_t *in = NULL, *below = NULL;
	size_t i;

	/*
	 * The kernel maps file page (p_offset & ~0xfff) at the page of
	 * (bias + p_vaddr), so the mapping's first byte, file offset pgoff,
	 * is ELF address p_vaddr + pgoff - p_offset.  Two segments may share
	 * a file page (text and data of old layouts, rodata and data of new
	 * ones); the mapping's protection tells them apart.
	 */
	for (i = 0; i < nloads; i++) {
		const uint64_t *l = loads[i];

		if ((l[0] & ~0xfffULL) <= pgoff && pgoff < l[0] + (l[2] ? l[2] : 1)) {
			if (!in || fit(l[3], prot) > fit(in[3], prot))
				in = l;
		} else if (l[0] <= pgoff && (!below || l[0] > below[0])) {
			below = l;
		}
	}
	if (!in)
		in = below;
	if (!in) {
		*bias = start - pgoff;
		return -ENOENT;
	}
	*bias = start - pgoff + in[0] - in[1];
	return 0;
}

static int read_loads(Elf *elf, struct agent_elf_entry *e)
{
	size_t n, i;

	if (elf_getphdrnum(elf, &n))
		return -EINVAL;
	e->loads = calloc(n ? n : 1, sizeof(*e->loads));
	if (!e->loads)
		return -ENOMEM;
	for (i = 0; i < n; i++) {
		GElf_Phdr ph;

		if (!gelf_getphdr(elf, i, &ph) || ph.p_type != PT_LOAD)
			continue;
		e->loads[e->nloads][0] = ph.p_offset;
		e->loads[e->nloads][1] = ph.p_vaddr;
		e->loads[e->nloads][2] = ph.p_filesz;
		e->loads[e->nloads][3] = ph.p_flags;
		e->nloads++;
	}
	return 0;
}

static void hex(char *out, const unsigned char *p, size_t n)
{
	static const char digits[] = "0123456789abcdef";
	size_t i;

	for (i = 0; i < n; i++) {
		out[2 * i] = digits[p[i] >> 4];
		out[2 * i + 1] = digits[p[i] & 15];
	}
	out[2 * n] = '\0';
}

static bool note_build_id(Elf_Data *d, char *out)
{
	size_t off = 0, name_off, desc_off;
	GElf_Nhdr nh;

	while ((off = gelf_getnote(d, off, &nh, &name_off, &desc_off)) > 0) {
		if (nh.n_type == NT_GNU_BUILD_ID && nh.n_namesz == 4 &&
		    !memcmp((char *)d->d_buf + name_off, "GNU", 4) &&
		    nh.n_descsz >= 1 && nh.n_descsz <= 64) {
			hex(out, (unsigned char *)d->d_buf + desc_off, nh.n_descsz);
			return true;
		}
	}
	return false;
}

/* From a SHT_NOTE section, else from PT_NOTE segments (stripped sections). */
static bool read_build_id(Elf *elf, char *out)
{
	Elf_Scn *scn = NULL;
	size_t n, i;

	while ((scn = elf_nextscn(elf, scn))) {
		GElf_Shdr sh;
		Elf_Data *d;

		if (!gelf_getshdr(scn, &sh) || sh.sh_type != SHT_NOTE)
			continue;
		d = elf_getdata(scn, NULL);
		if (d && note_build_id(d, out))
			return true;
	}
	if (elf_getphdrnum(elf, &n))
		return false;
	for (i = 0; i < n; i++) {
		GElf_Phdr ph;
		Elf_Data *d;

		if (!gelf_getphdr(elf, i, &ph) || ph.p_type != PT_NOTE)
			continue;
		d = elf_getdata_rawchunk(elf, ph.p_offset, ph.p_filesz, ELF_T_NHDR);
		if (d && note_build_id(d, out))
			return true;
	}
	return false;
}

static Elf_Scn *symbol_table(Elf *elf, GElf_Shdr *sh)
{
	Elf_Scn *scn = NULL, *dyn = NULL;
	GElf_Shdr dsh;

	while ((scn = elf_nextscn(elf, scn))) {
		if (!gelf_getshdr(scn, sh))
			continue;
		if (sh->sh_type == SHT_SYMTAB)
			return scn;
		if (sh->sh_type == SHT_DYNSYM && !dyn) {
			dyn = scn;
			dsh = *sh;
		}
	}
	if (dyn)
		*sh = dsh;
	return dyn;
}

/*
 * A zero-sized symbol (a label such as _init) ends with its section at the
 * latest: libvmctx gives it the room up to the next symbol, and the next
 * one may lie in another section (_init's is .plt's first stub, so every
 * PLT stub read as _init).
 */
static uint64_t section_room(Elf *elf, const GElf_Sym *s)
{
	Elf_Scn *scn;
	GElf_Shdr sh;

	if (s->st_size || s->st_shndx == SHN_UNDEF || s->st_shndx >= SHN_LORESERVE)
		return s->st_size;
	scn = elf_getscn(elf, s->st_shndx);
	if (!scn || !gelf_getshdr(scn, &sh) || !(sh.sh_flags & SHF_ALLOC) ||
	    s->st_value < sh.sh_addr || s->st_value - sh.sh_addr >= sh.sh_size)
		return 0;
	return sh.sh_addr + sh.sh_size - s->st_value;
}

/* Functions with a definition; the bundle reduces aliases and sizes. */
static int add_symbols(struct agent *a, Elf *elf, int object, const char *path)
{
	GElf_Shdr sh;
	Elf_Scn *scn = symbol_table(elf, &sh);
	Elf_Data *d;
	size_t i, n;
	int err;

	if (!scn || !sh.sh_entsize)
		return 0;
	d = elf_getdata(scn, NULL);
	if (!d)
		return 0;
	n = sh.sh_size / sh.sh_entsize;
	for (i = 0; i < n; i++) {
		GElf_Sym s;
		const char *name;
		int type;

		if (!gelf_getsym(d, i, &s))
			break;
		type = GELF_ST_TYPE(s.st_info);
		if ((type != STT_FUNC && type != STT_GNU_IFUNC) || s.st_shndx == SHN_UNDEF ||
		    !s.st_value)
			continue;
		name = elf_strptr(elf, sh.sh_link, s.st_name);
		if (!name || !*name)
			continue;
		err = vmctx_bundle_add_symbol(a->bundle, object, s.st_value, section_room(elf, &s),
					      name);
		if (err == -VMCTX_E_LIMIT || err == -EINVAL)
			continue;
		if (err) {
			agent_err(a, "cannot build the bundle: %s: symbol %zu (%s): %s", path, i,
				  name, vmctx_strerror(err));
			return err;
		}
	}
	return 0;
}

/*
 * --unwind: the object's unwind tables, for a host that unwinds a guest
 * stack copied without frame pointers: .eh_frame_hdr and .eh_frame, and
 * .debug_frame where there is no .eh_frame (stripped objects keep
 * .eh_frame: it is loaded).  Their bytes as they are in the file.  A
 * bundle's tables have a cap: past it, objects go without theirs, said
 * once.
 */
static int add_unwind(struct agent *a, Elf *elf, int object, const char *path)
{
	static const char *const names[VMCTX_UNWIND_KINDS] = {
		[VMCTX_UNWIND_EH_FRAME_HDR] = ".eh_frame_hdr",
		[VMCTX_UNWIND_EH_FRAME] = ".eh_frame",
		[VMCTX_UNWIND_DEBUG_FRAME] = ".debug_frame",
	};
	Elf_Scn *scn = NULL, *found[VMCTX_UNWIND_KINDS] = { NULL };
	bool eh_frame = false;
	size_t shstrndx;
	int k;

	if (!a->unwind || a->unwind_full || elf_getshdrstrndx(elf, &shstrndx))
		return 0;
	if (!vmctx_bundle_object_unwind(a->bundle, object, VMCTX_UNWIND_EH_FRAME, NULL, NULL, NULL) ||
	    !vmctx_bundle_object_unwind(a->bundle, object, VMCTX_UNWIND_DEBUG_FRAME, NULL, NULL,
					NULL))
		return 0;	/* an object of a known build-id has them */
	while ((scn = elf_nextscn(elf, scn))) {
		const char *name;
		GElf_Shdr sh;

		if (!gelf_getshdr(scn, &sh) || sh.sh_type == SHT_NOBITS || !sh.sh_size)
			continue;
		name = elf_strptr(elf, shstrndx, sh.sh_name);
		for (k = 0; name && k < VMCTX_UNWIND_KINDS; k++)
			if (!found[k] && !strcmp(name, names[k]))
				found[k] = scn;
	}
	/* in this order: .debug_frame only where no .eh_frame went in */
	for (k = 0; k < VMCTX_UNWIND_KINDS; k++) {
		Elf_Data *d;
		GElf_Shdr sh;
		int err;

		if (!found[k] || (k == VMCTX_UNWIND_DEBUG_FRAME && eh_frame))
			continue;
		d = elf_rawdata(found[k], NULL);
		if (!d || !d->d_buf || !d->d_size || !gelf_getshdr(found[k], &sh))
			continue;
		err = vmctx_bundle_add_unwind(a->bundle, object, k, sh.sh_addr, d->d_buf, d->d_size);
		if (err == -VMCTX_E_LIMIT && d->d_size <= (1u << 24)) {
			agent_warn(a, "%s and later objects: no unwind tables in the bundle: they pass its cap", path);
			a->unwind_full = true;
			return 0;
		}
		if (err == -ENOMEM) {
			agent_err(a, "cannot build the bundle: %s: %s", path, vmctx_strerror(err));
			return err;
		}
		if (err)
			agent_note(a, "%s: %s left out: %s", path, names[k], vmctx_strerror(err));
		eh_frame |= !err && k == VMCTX_UNWIND_EH_FRAME;
	}
	return 0;
}

/* Fill @e from an opened ELF; e->object stays -1 for what is no ELF object. */
static int read_elf(struct agent *a, Elf *elf, struct agent_elf_entry *e, const char *bundle_path)
{
	char build_id[129];
	GElf_Ehdr eh;
	int obj, err;

	e->object = -1;
	if (elf_kind(elf) != ELF_K_ELF || !gelf_getehdr(elf, &eh) ||
	    (eh.e_type != ET_EXEC && eh.e_type != ET_DYN))
		return 0;
	err = read_loads(elf, e);
	if (err)
		return err == -ENOMEM ? err : 0;
	/* The object's index, or a known object of the same build-id. */
	obj = vmctx_bundle_add_object(a->bundle, bundle_path,
				      read_build_id(elf, build_id) ? build_id : NULL);
	if (obj == -ENOMEM) {
		agent_err(a, "cannot build the bundle: %s: %s", bundle_path, vmctx_strerror(obj));
		return obj;
	}
	if (obj < 0) {
		agent_note(a, "%s: left out of the bundle: %s", bundle_path, vmctx_strerror(obj));
		return 0;
	}
	e->object = obj;
	err = add_unwind(a, elf, obj, bundle_path);
	if (err || vmctx_bundle_object_nsyms(a->bundle, obj) > 0)
		return err;
	return add_symbols(a, elf, obj, bundle_path);
}

/* The guest's vDSO is the agent's own: the same kernel maps it everywhere. */
static int read_vdso(struct agent *a, struct agent_elf_entry *e)
{
	const unsigned char *base = (const void *)getauxval(AT_SYSINFO_EHDR);
	const Elf64_Ehdr *eh64 = (const void *)base;
	size_t size, i;
	Elf *elf;
	int err;

	e->object = -1;
	if (!base || memcmp(base, ELFMAG, SELFMAG) || base[EI_CLASS] != ELFCLASS64)
		return 0;
	/* The image ends with its section headers, or its last segment. */
	size = eh64->e_shoff + (size_t)eh64->e_shnum * eh64->e_shentsize;
	for (i = 0; i < eh64->e_phnum; i++) {
		const Elf64_Phdr *ph = (const void *)(base + eh64->e_phoff + i * eh64->e_phentsize);

		if (ph->p_offset + ph->p_filesz > size)
			size = ph->p_offset + ph->p_filesz;
	}
	elf = elf_memory((char *)base, size);
	if (!elf)
		return 0;
	err = read_elf(a, elf, e, VDSO_PATH);
	elf_end(elf);
	return err;
}

/*
 * A FIFO or device may stand at a mapped path since it was mapped: look at
 * what is there through an O_PATH descriptor, which opens nothing (a
 * device's driver never sees it), and open regular files only, through
 * that descriptor, so that what was checked is what is read.
 */
static int open_regular(const struct agent *a, const char *full)
{
	struct stat st;
	char proc[64];
	int pfd, fd;

	pfd = open(full, O_PATH | O_CLOEXEC);
	if (pfd < 0) {
		agent_note(a, "%s: %s (mapped, but no symbols)", full, strerror(errno));
		return -1;
	}
	if (fstat(pfd, &st) || !S_ISREG(st.st_mode)) {
		agent_note(a, "%s: not a regular file (mapped, but no symbols)", full);
		close(pfd);
		return -1;
	}
	snprintf(proc, sizeof(proc), "/proc/self/fd/%d", pfd);
	fd = open(proc, O_RDONLY | O_NONBLOCK | O_NOCTTY | O_CLOEXEC);
	if (fd < 0)
		agent_note(a, "%s: %s (mapped, but no symbols)", full, strerror(errno));
	close(pfd);
	return fd;
}

static int read_file(struct agent *a, const char *path, struct agent_elf_entry *e)
{
	char *full;
	Elf *elf;
	int fd, err;

	e->object = -1;
	full = agent_path(a, path);
	if (!full)
		return -ENOMEM;
	fd = open_regular(a, full);
	free(full);
	if (fd < 0)
		return 0;
	elf = elf_begin(fd, ELF_C_READ_MMAP, NULL);
	if (!elf) {
		close(fd);
		return 0;
	}
	err = read_elf(a, elf, e, path);
	elf_end(elf);
	close(fd);
	return err;
}

static struct agent_elf_entry *cache_get(struct agent *a, const char *path, int *err)
{
	struct agent_elf_entry key = { .path = (char *)path }, *e, **found;
	struct agent_elf_cache *c = a->elves;

	*err = 0;
	found = tfind(&key, &c->tree, cmp_entry);
	if (found)
		return *found;
	e = calloc(1, sizeof(*e));
	if (e)
		e->path = strdup(path);
	if (!e || !e->path) {
		free(e);
		*err = -ENOMEM;
		return NULL;
	}
	*err = strcmp(path, VDSO_PATH) ? read_file(a, path, e) : read_vdso(a, e);
	if (!*err && !tsearch(e, &c->tree, cmp_entry))
		*err = -ENOMEM;
	if (*err) {
		free_entry(e);
		return NULL;
	}
	return e;
}

int agent_elf_object_for_map(struct agent *a, const char *path, uint64_t start,
			     uint64_t pgoff, unsigned int prot, uint64_t *bias, int *object)
{
	struct agent_elf_entry *e;
	int err;

	*bias = start - pgoff;
	*object = -1;
	/* Anonymous and pseudo mappings, and files deleted since they were mapped. */
	if (strcmp(path, VDSO_PATH) && (path[0] != '/' || strstr(path, " (deleted)")))
		return 0;
	e = cache_get(a, path, &err);
	if (!e)
		return err;
	if (e->object < 0)
		return 0;
	agent_elf_bias_for((const uint64_t (*)[4])e->loads, e->nloads, start, pgoff, prot, bias);
	*object = e->object;
	return 0;
}
