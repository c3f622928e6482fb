// SPDX-License-Identifier: LGPL-2.1-only
/*
 * Reading a bundle (vmctx-bundle(5)).  A bundle comes from a guest, so
 * every byte is hostile: the decompressed size is capped and counted as it
 * is produced, lines and strings have caps, numbers are parsed strictly,
 * and every reference and range is checked before the bundle is handed out:
 * each record here, with the rules of bundle-seal.c, and the whole bundle
 * when it is sealed, strictly, as it was when written.
 *
 * A sound gzip member is inflated whole, with its checks, by libdeflate,
 * and its text parsed in place: that is most of a read's time, and a
 * third of what zlib took.  Any other member is read by zlib in one pass,
 * parsing line by line as it inflates, without keeping the text, which
 * tells what is wrong with it: a rejected line's reason is held until the
 * member (CRC-32, length, size cap) has been checked to its end, so that
 * damage in transit is reported as such rather than as whatever record it
 * happened to garble.
 */
#include <endian.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <libdeflate.h>
#include <zlib.h>

#include "bundle.h"

#define MAGIC		"vmctx-bundle "
#define MAX_TOKENS	10	/* the counts with every optional field */
#define INFLATE_CHUNK	(1 << 16)
#define RECORD_MIN	8	/* bytes: "sym 0 0 0 x\n" is 12, "ksym 0 - x\n" 11 */

/* Sections in file order; the first four records appear exactly once. */
enum section {
	S_MAGIC,
	S_COUNTS,
	S_IDENTITY,
	S_CLOCK,
	S_CR3,
	S_WINDOW,	/* optional, at most once */
	S_TASK,
	S_OBJECT,
	S_SYM,
	S_MAP,
	S_KMOD,
	S_KSYM,
	S_PAIR,
	S_SWITCH,	/* version 2 */
	S_GAP,		/* version 2 */
	S_END,
	S_DONE,
};

static const char *const keywords[] = {
	[S_COUNTS] = "counts",
	[S_IDENTITY] = "identity",
	[S_CLOCK] = "clock",
	[S_CR3] = "cr3_mask",
	[S_WINDOW] = "window",
	[S_TASK] = "task",
	[S_OBJECT] = "object",
	[S_SYM] = "sym",
	[S_MAP] = "map",
	[S_KMOD] = "kmod",
	[S_KSYM] = "ksym",
	[S_PAIR] = "clockpair",
	[S_SWITCH] = "switch",
	[S_GAP] = "gap",
	[S_END] = "end",
};

enum count {
	C_TASKS,
	C_OBJECTS,
	C_MAPS,
	C_SYMS,
	C_KMODS,
	C_KSYMS,
	C_PAIRS,	/* optional from here on: a bundle without pairs may omit it */
	C_SWITCHES,	/* version 2, with C_GAPS */
	C_GAPS,
	C_MAX,
};
#define C_OPTIONAL	C_PAIRS

static const char *const count_keys[C_MAX] = {
	"tasks", "objects", "maps", "syms", "kmods", "ksyms", "clockpairs", "switches", "gaps",
};

static const uint64_t count_limits[C_MAX] = {
	BUNDLE_MAX_TASKS, BUNDLE_MAX_OBJECTS, BUNDLE_MAX_MAPS,
	BUNDLE_MAX_SYMS, BUNDLE_MAX_KMODS, BUNDLE_MAX_KSYMS, BUNDLE_MAX_PAIRS,
	SWITCH_LOG_MAX_SWITCHES, SWITCH_LOG_MAX_GAPS,
};

struct reader {
	struct vmctx_bundle *b;
	size_t lineno;
	int version;
	enum section state;
	uint64_t counts[C_MAX];
	uint64_t seen[C_MAX];
	char *tok[MAX_TOKENS];
	size_t toklen[MAX_TOKENS];
	size_t ntok;
	/*
	 * The most records a whole text can hold (a record's line takes
	 * more than RECORD_MIN bytes): its arrays are sized to its counts
	 * at once if they add up to no more.  0: streamed, grown as read.
	 */
	size_t bound;
	/* the line being parsed, @len bytes: in @buf, or in a whole text */
	char *line;
	size_t len;
	/*
	 * While @hold, the rejection is kept, not logged: a stream that
	 * turns out corrupt further on is reported as that instead.
	 */
	bool hold;
	const char *held_why;
	size_t held_lineno;
	char buf[BUNDLE_MAX_LINE];
};

static void log_line(size_t lineno, const char *why, int err)
{
	util_log(VMCTX_LOG_WARN, "bundle line %zu: %s: %s", lineno, why, vmctx_strerror(err));
}

/* Log why the bundle was rejected, and hand back @err. */
static int fail(struct reader *r, int err, const char *why)
{
	if (r && r->hold) {
		r->held_why = why;
		r->held_lineno = r->lineno;
	} else if (r)
		log_line(r->lineno, why, err);
	else
		util_log(VMCTX_LOG_WARN, "bundle: %s: %s", why, vmctx_strerror(err));
	return err;
}

/* ---- numbers and strings ---------------------------------------------- */

/* Decimal, no sign, no leading zeros, no overflow. */
static bool parse_dec(const char *s, uint64_t *v)
{
	uint64_t x = 0;

	if (!*s || (s[0] == '0' && s[1]))
		return false;
	for (; *s; s++) {
		if (*s < '0' || *s > '9')
			return false;
		if (x > (UINT64_MAX - (*s - '0')) / 10)
			return false;
		x = x * 10 + (*s - '0');
	}
	*v = x;
	return true;
}

/*
 * The value of the eight lowercase hex digits at @s, or -1 if a byte is
 * not one.  All eight at once: a byte b below 0x80 is at least lo when
 * b + (0x80 - lo) has its top bit set, and no sum carries into the next.
 */
static int64_t hex8(const char *s)
{
	const uint64_t top = UTIL_BYTES(0x80);
	uint64_t w, digit, letter;

	memcpy(&w, s, sizeof(w));
	w = le64toh(w);		/* the first digit in the low byte */
	if (w & top)
		return -1;
	digit = (w + UTIL_BYTES(0x80 - '0')) & ~(w + UTIL_BYTES(0x7f - '9')) & top;
	letter = (w + UTIL_BYTES(0x80 - 'a')) & ~(w + UTIL_BYTES(0x7f - 'f')) & top;
	if ((digit | letter) != top)
		return -1;
	/* each byte's value, then pairs of them, pairs of pairs, and the two halves */
	w = (w & UTIL_BYTES(0x0f)) + (letter >> 7) * 9;
	w = (w << 4 | w >> 8) & 0x00ff00ff00ff00ffull;
	w = (w << 8 | w >> 16) & 0x0000ffff0000ffffull;
	return (w << 16 | w >> 32) & 0xffffffffull;
}

/*
 * "0x" and 1 to 16 lowercase hex digits, no leading zeros, in the @len
 * bytes at @s.  A bundle is mostly kernel symbols' 16-digit addresses:
 * those are read eight digits at a time, the rest one at a time.
 */
static bool parse_hex(const char *s, size_t len, uint64_t *v)
{
	const char *u = s + 2;
	size_t i, n = len - 2;
	int64_t hi, lo;
	uint64_t x = 0;

	if (len < 3 || len > 18 || s[0] != '0' || s[1] != 'x' || (u[0] == '0' && n > 1))
		return false;
	if (n == 16) {
		hi = hex8(s + 2);
		lo = hex8(s + 10);
		if (hi < 0 || lo < 0)
			return false;
		*v = (uint64_t)hi << 32 | (uint64_t)lo;
		return true;
	}
	for (i = 0; i < n; i++) {
		char c = u[i];

		if (c >= '0' && c <= '9')
			x = x << 4 | (c - '0');
		else if (c >= 'a' && c <= 'f')
			x = x << 4 | (c - 'a' + 10);
		else
			return false;
	}
	*v = x;
	return true;
}

/*
 * Whether the @n bytes at @s are all printable ASCII, ' ' to '~'.  Eight
 * at a time: a line of a bundle is mostly kernel symbols' hex and names,
 * and a byte at a time this check cost more than parsing them.
 */
static bool printable(const char *s, size_t n)
{
	size_t i = 0;

	for (; i + 8 <= n; i += 8) {
		uint64_t w;

		memcpy(&w, s + i, sizeof(w));
		if (util_word_unprintable(w))
			return false;
	}
	for (; i < n; i++)
		if (s[i] < ' ' || s[i] > '~')
			return false;
	return true;
}

static int xdigit(char c)
{
	if (c >= '0' && c <= '9')
		return c - '0';
	if (c >= 'a' && c <= 'f')
		return c - 'a' + 10;
	if (c >= 'A' && c <= 'F')
		return c - 'A' + 10;
	return -1;
}

/*
 * Undo %XX escaping of the @len bytes at @s (NUL-terminated) into a new
 * string of at most @max bytes, in @pool if not NULL (it then owns the
 * string), else malloc()ed.  The line has been checked to hold printable
 * ASCII only, and tokens hold no spaces.
 */
static int decode(struct reader *r, const char *s, size_t len, size_t max, bool nonempty,
		  struct util_pool *pool, char **out)
{
	/* most strings escape nothing: copied whole */
	bool plain = !memchr(s, '%', len);
	size_t i, n = plain ? len : 0;
	char *d;

	if (plain && n > max)
		return fail(r, -VMCTX_E_LIMIT, "string too long");
	for (i = 0; !plain && s[i]; n++) {
		if (s[i] == '%') {
			if (xdigit(s[i + 1]) < 0 || xdigit(s[i + 2]) < 0)
				return fail(r, -VMCTX_E_SYNTAX, "bad %XX escape");
			if (!xdigit(s[i + 1]) && !xdigit(s[i + 2]))
				return fail(r, -VMCTX_E_SYNTAX, "escaped NUL byte");
			i += 3;
		} else {
			i++;
		}
		if (n >= max)
			return fail(r, -VMCTX_E_LIMIT, "string too long");
	}
	if (nonempty && !n)
		return fail(r, -VMCTX_E_SYNTAX, "empty name");
	d = pool ? util_pool_alloc(pool, n + 1) : malloc(n + 1);
	if (!d)
		return -ENOMEM;
	if (plain) {
		memcpy(d, s, n + 1);
	} else {
		for (i = 0, n = 0; s[i]; n++) {
			if (s[i] == '%') {
				d[n] = xdigit(s[i + 1]) << 4 | xdigit(s[i + 2]);
				i += 3;
			} else {
				d[n] = s[i++];
			}
		}
		d[n] = '\0';
	}
	*out = d;
	return 0;
}

/* The value of token @i if it is "@key=value", else NULL. */
static const char *field(struct reader *r, size_t i, const char *key)
{
	size_t n = strlen(key);

	if (strncmp(r->tok[i], key, n) || r->tok[i][n] != '=')
		return NULL;
	return r->tok[i] + n + 1;
}

/* The length of token @i's value, of which @value is the start. */
static size_t value_len(struct reader *r, size_t i, const char *value)
{
	return r->toklen[i] - (size_t)(value - r->tok[i]);
}

static int dec_field(struct reader *r, size_t i, const char *key, uint64_t *v)
{
	const char *s = key ? field(r, i, key) : r->tok[i];

	if (!s || !parse_dec(s, v))
		return fail(r, -VMCTX_E_SYNTAX, "bad decimal field");
	return 0;
}

static int hex_field(struct reader *r, size_t i, const char *key, uint64_t *v)
{
	const char *s = key ? field(r, i, key) : r->tok[i];

	if (!s || !parse_hex(s, value_len(r, i, s), v))
		return fail(r, -VMCTX_E_SYNTAX, "bad hex field");
	return 0;
}

/* A decimal index below @n, or "-" for none (-1) when @none_ok. */
static int ref_field(struct reader *r, const char *s, uint64_t n, bool none_ok, int *v)
{
	uint64_t x;

	if (!s)
		return fail(r, -VMCTX_E_SYNTAX, "missing reference");
	if (none_ok && !strcmp(s, "-")) {
		*v = -1;
		return 0;
	}
	if (!parse_dec(s, &x))
		return fail(r, -VMCTX_E_SYNTAX, "bad reference");
	if (x >= n)
		return fail(r, -VMCTX_E_REF, "reference to a missing record");
	*v = x;
	return 0;
}

/* A string field, into @pool as decode() puts it (NULL: malloc()ed). */
static int str_field(struct reader *r, size_t i, const char *key, size_t max, bool nonempty,
		     struct util_pool *pool, char **out)
{
	const char *s = key ? field(r, i, key) : r->tok[i];

	if (!s)
		return fail(r, -VMCTX_E_SYNTAX, "missing string field");
	return decode(r, s, value_len(r, i, s), max, nonempty, pool, out);
}

/* Token @i, a symbol's name, into the bundle's pool of them. */
static int sym_name_field(struct reader *r, size_t i, char **out)
{
	return decode(r, r->tok[i], r->toklen[i], BUNDLE_MAX_SYMNAME, true, &r->b->names, out);
}

/* ---- records ---------------------------------------------------------- */

static int one_more(struct reader *r, enum count c)
{
	if (r->seen[c] >= r->counts[c])
		return fail(r, -VMCTX_E_SYNTAX, "more records than counted");
	r->seen[c]++;
	return 0;
}

/* Room for @c's count of elements of @size in *@arr. */
static int reserve(struct reader *r, void **arr, size_t *cap, enum count c, size_t size)
{
	return util_grow(arr, cap, r->counts[c], size);
}

/*
 * Every count up to C_OPTIONAL, then the optional ones in their order,
 * each left out when there are none (older bundles lack them).
 */
static int rec_counts(struct reader *r)
{
	struct vmctx_bundle *b = r->b;
	bool given[C_MAX] = { false };
	uint64_t total;
	size_t t = 1;
	int i, err;

	for (i = 0; i < C_MAX; i++) {
		if (i >= C_OPTIONAL && (t >= r->ntok || !field(r, t, count_keys[i])))
			continue;
		if (t >= r->ntok)
			return fail(r, -VMCTX_E_SYNTAX, "counts: wrong number of fields");
		given[i] = true;
		err = dec_field(r, t++, count_keys[i], &r->counts[i]);
		if (err)
			return err;
		/* Checked before anything is allocated for these records. */
		if (r->counts[i] > count_limits[i])
			return fail(r, -VMCTX_E_LIMIT, "count beyond the limit");
	}
	if (t != r->ntok)
		return fail(r, -VMCTX_E_SYNTAX, "counts: wrong number of fields");
	/* the switch log's counts come together, and only from version 2 */
	if (given[C_SWITCHES] != given[C_GAPS])
		return fail(r, -VMCTX_E_SYNTAX, "counts: switches and gaps come together");
	if (given[C_SWITCHES] && r->version < BUNDLE_VERSION_LOG)
		return fail(r, -VMCTX_E_SYNTAX, "counts: a switch log in a version-1 bundle");
	/*
	 * Each array once, at its size: no copies, and large ones in huge
	 * pages; the names in one chunk, as long as the text at most.  Only
	 * counts that the text can hold: others are a lie, which the records
	 * will show, and the arrays grow as they are read.
	 */
	for (i = 0, total = 0; i < C_MAX; i++)
		total += r->counts[i];
	if (!total || total > r->bound)
		return 0;
	if (util_pool_reserve(&b->names, r->bound * RECORD_MIN))
		return -ENOMEM;
	return reserve(r, (void **)&b->map_block, &b->map_block_cap, C_MAPS,
		       sizeof(*b->map_block)) ?:
	       reserve(r, (void **)&b->tasks, &b->tasks_cap, C_TASKS, sizeof(*b->tasks)) ?:
	       reserve(r, (void **)&b->objects, &b->objects_cap, C_OBJECTS, sizeof(*b->objects)) ?:
	       reserve(r, (void **)&b->kmods, &b->kmods_cap, C_KMODS, sizeof(*b->kmods)) ?:
	       reserve(r, (void **)&b->ksyms, &b->ksyms_cap, C_KSYMS, sizeof(*b->ksyms)) ?:
	       reserve(r, (void **)&b->pairs, &b->pairs_cap, C_PAIRS, sizeof(*b->pairs)) ?:
	       reserve(r, (void **)&b->switches.recs, &b->switches.cap, C_SWITCHES,
		       sizeof(*b->switches.recs)) ?:
	       reserve(r, (void **)&b->switches.gaps, &b->switches.gaps_cap, C_GAPS,
		       sizeof(*b->switches.gaps));
}

static int rec_identity(struct reader *r)
{
	struct vmctx_bundle *b = r->b;
	int err;

	/* agent= is optional: bundles written before libvmctx 0.2 lack it */
	if (r->ntok != 4 && r->ntok != 5)
		return fail(r, -VMCTX_E_SYNTAX, "identity: wrong number of fields");
	err = str_field(r, 1, "hostname", BUNDLE_MAX_SHORT, false, NULL, &b->hostname);
	if (!err)
		err = str_field(r, 2, "release", BUNDLE_MAX_SHORT, false, NULL, &b->release);
	if (!err)
		err = str_field(r, 3, "boot_id", BUNDLE_MAX_SHORT, false, NULL, &b->boot_id);
	if (!err && r->ntok == 5)
		err = str_field(r, 4, "agent", BUNDLE_MAX_SHORT, false, NULL, &b->agent);
	return err;
}

static int rec_clock(struct reader *r)
{
	struct vmctx_bundle *b = r->b;
	int err;

	if (r->ntok != 4)
		return fail(r, -VMCTX_E_SYNTAX, "clock: wrong number of fields");
	err = dec_field(r, 1, "tsc_khz", &b->tsc_khz);
	if (!err)
		err = dec_field(r, 2, "tsc", &b->clock_tsc);
	if (!err)
		err = dec_field(r, 3, "ns", &b->clock_ns);
	return err;
}

static int rec_cr3(struct reader *r)
{
	if (r->ntok != 2)
		return fail(r, -VMCTX_E_SYNTAX, "cr3_mask: wrong number of fields");
	return hex_field(r, 1, NULL, &r->b->cr3_mask);
}

static int rec_task(struct reader *r)
{
	struct vmctx_bundle *b = r->b;
	uint64_t idx, root, pid, tgid, start, exit;
	struct vmctx_task *t;
	const char *s;
	char *comm;
	int err;

	if (r->ntok != 8)
		return fail(r, -VMCTX_E_SYNTAX, "task: wrong number of fields");
	err = one_more(r, C_TASKS);
	if (!err)
		err = dec_field(r, 1, NULL, &idx);
	if (!err && idx != b->ntasks)
		err = fail(r, -VMCTX_E_SYNTAX, "task: index out of sequence");
	if (!err)
		err = hex_field(r, 2, "root", &root);
	if (!err)
		err = dec_field(r, 3, "pid", &pid);
	if (!err)
		err = dec_field(r, 4, "tgid", &tgid);
	if (!err && (pid > INT32_MAX || tgid > INT32_MAX))
		err = fail(r, -VMCTX_E_SYNTAX, "task: pid out of range");
	if (!err)
		err = dec_field(r, 5, "start", &start);
	if (err)
		return err;
	s = field(r, 6, "exit");
	if (s && !strcmp(s, "-"))
		exit = VMCTX_TIME_NONE;
	else if (!s || !parse_dec(s, &exit))
		return fail(r, -VMCTX_E_SYNTAX, "task: bad exit time");
	if (!bundle_lifetime_valid(start, exit))
		return fail(r, -VMCTX_E_RANGE, "task: exits before it starts");
	err = util_grow((void **)&b->tasks, &b->tasks_cap, b->ntasks + 1, sizeof(*b->tasks));
	if (err)
		return err;
	err = str_field(r, 7, "comm", BUNDLE_MAX_SHORT, false, NULL, &comm);
	if (err)
		return err;
	t = &b->tasks[b->ntasks++];
	memset(t, 0, sizeof(*t));
	t->root = root;
	t->pid = pid;
	t->tgid = tgid;
	t->start = start;
	t->exit = exit;
	t->comm = comm;
	t->maps_from = -1;
	return 0;
}

static int rec_object(struct reader *r)
{
	struct vmctx_bundle *b = r->b;
	struct vmctx_object *o;
	char *path, *id = NULL;
	const char *s;
	uint64_t idx;
	int err;

	if (r->ntok != 4)
		return fail(r, -VMCTX_E_SYNTAX, "object: wrong number of fields");
	err = one_more(r, C_OBJECTS);
	if (!err)
		err = dec_field(r, 1, NULL, &idx);
	if (!err && idx != b->nobjects)
		err = fail(r, -VMCTX_E_SYNTAX, "object: index out of sequence");
	if (err)
		return err;
	s = field(r, 2, "build_id");
	if (!s || (strcmp(s, "-") && !bundle_build_id_valid(s)))
		return fail(r, -VMCTX_E_SYNTAX, "object: bad build-id");
	err = util_grow((void **)&b->objects, &b->objects_cap, b->nobjects + 1,
			 sizeof(*b->objects));
	if (err)
		return err;
	if (strcmp(s, "-")) {
		id = strdup(s);
		if (!id)
			return -ENOMEM;
	}
	err = str_field(r, 3, "path", BUNDLE_MAX_PATH, true, NULL, &path);
	if (err) {
		free(id);
		return err;
	}
	o = &b->objects[b->nobjects++];
	memset(o, 0, sizeof(*o));
	o->path = path;
	o->base = bundle_path_base(path);
	o->build_id = id;
	return 0;
}

static int rec_sym(struct reader *r)
{
	struct vmctx_bundle *b = r->b;
	uint64_t start, size;
	struct vmctx_object *o;
	struct vmctx_sym *s;
	int obj, err;
	char *name;

	if (r->ntok != 5)
		return fail(r, -VMCTX_E_SYNTAX, "sym: wrong number of fields");
	err = one_more(r, C_SYMS);
	if (!err)
		err = ref_field(r, r->tok[1], b->nobjects, false, &obj);
	if (!err)
		err = hex_field(r, 2, NULL, &start);
	if (!err)
		err = hex_field(r, 3, NULL, &size);
	if (err)
		return err;
	if (!bundle_extent_valid(start, size))
		return fail(r, -VMCTX_E_RANGE, "sym: end beyond the address space");
	o = &b->objects[obj];
	err = util_grow((void **)&o->syms, &o->syms_cap, o->nsyms + 1, sizeof(*o->syms));
	if (err)
		return err;
	err = sym_name_field(r, 4, &name);
	if (err)
		return err;
	s = &o->syms[o->nsyms++];
	s->start = start;
	s->end = start + size;
	s->name = name;
	b->syms_total++;
	return 0;
}

/*
 * Room for one more of @t's maps: at the end of the bundle's block while
 * its maps come together (as written), else in an array of its own.
 */
static int task_map_room(struct vmctx_bundle *b, struct vmctx_task *t)
{
	struct vmctx_map *end = b->map_block ? b->map_block + b->map_block_used : NULL;
	struct vmctx_map *own = NULL;
	size_t cap = 0;

	if (end && !t->maps_cap && (!t->nmaps || t->maps + t->nmaps == end) &&
	    b->map_block_used < b->map_block_cap) {
		if (!t->nmaps)
			t->maps = end;
		b->map_block_used++;
		return 0;
	}
	if (t->maps_cap || !t->nmaps)
		return util_grow((void **)&t->maps, &t->maps_cap, t->nmaps + 1, sizeof(*t->maps));
	/* in the block, and another task's maps came after them: moved out */
	if (util_grow((void **)&own, &cap, t->nmaps + 1, sizeof(*own)))
		return -ENOMEM;
	memcpy(own, t->maps, t->nmaps * sizeof(*own));
	t->maps = own;
	t->maps_cap = cap;
	return 0;
}

static int rec_map(struct reader *r)
{
	struct vmctx_bundle *b = r->b;
	uint64_t start, end, pgoff, bias;
	struct vmctx_task *t;
	struct vmctx_map *m;
	int task, obj, err;
	char *path;

	if (r->ntok != 8)
		return fail(r, -VMCTX_E_SYNTAX, "map: wrong number of fields");
	err = one_more(r, C_MAPS);
	if (!err)
		err = ref_field(r, r->tok[1], b->ntasks, false, &task);
	if (!err)
		err = hex_field(r, 2, NULL, &start);
	if (!err)
		err = hex_field(r, 3, NULL, &end);
	if (!err)
		err = hex_field(r, 4, "pgoff", &pgoff);
	if (!err)
		err = hex_field(r, 5, "bias", &bias);
	if (!err)
		err = ref_field(r, field(r, 6, "object"), b->nobjects, true, &obj);
	if (err)
		return err;
	if (!bundle_map_valid(start, end))
		return fail(r, -VMCTX_E_RANGE, "map: empty or inverted range");
	t = &b->tasks[task];
	err = task_map_room(b, t);
	if (err)
		return err;
	err = str_field(r, 7, "path", BUNDLE_MAX_PATH, false, &b->names, &path);
	if (err)
		return err;
	m = &t->maps[t->nmaps++];
	m->start = start;
	m->end = end;
	m->pgoff = pgoff;
	m->bias = bias;
	m->object = obj;
	m->path = path;
	m->base = bundle_path_base(path);
	b->maps_total++;
	return 0;
}

static int rec_kmod(struct reader *r)
{
	struct vmctx_bundle *b = r->b;
	uint64_t idx, start, size;
	struct vmctx_kmod *k;
	char *name;
	int err;

	if (r->ntok != 5)
		return fail(r, -VMCTX_E_SYNTAX, "kmod: wrong number of fields");
	err = one_more(r, C_KMODS);
	if (!err)
		err = dec_field(r, 1, NULL, &idx);
	if (!err && idx != b->nkmods)
		err = fail(r, -VMCTX_E_SYNTAX, "kmod: index out of sequence");
	if (!err)
		err = hex_field(r, 2, NULL, &start);
	if (!err)
		err = hex_field(r, 3, NULL, &size);
	if (err)
		return err;
	if (!bundle_extent_valid(start, size))
		return fail(r, -VMCTX_E_RANGE, "kmod: end beyond the address space");
	err = util_grow((void **)&b->kmods, &b->kmods_cap, b->nkmods + 1, sizeof(*b->kmods));
	if (err)
		return err;
	err = str_field(r, 4, NULL, BUNDLE_MAX_SHORT, true, NULL, &name);
	if (err)
		return err;
	k = &b->kmods[b->nkmods++];
	k->name = name;
	k->start = start;
	k->end = start + size;
	return 0;
}

static int rec_ksym(struct reader *r)
{
	struct vmctx_bundle *b = r->b;
	struct vmctx_ksym *k;
	uint64_t addr;
	int mod, err;
	char *name;

	if (r->ntok != 4)
		return fail(r, -VMCTX_E_SYNTAX, "ksym: wrong number of fields");
	err = one_more(r, C_KSYMS);
	if (!err)
		err = hex_field(r, 1, NULL, &addr);
	if (!err)
		err = ref_field(r, r->tok[2], b->nkmods, true, &mod);
	if (err)
		return err;
	err = util_grow((void **)&b->ksyms, &b->ksyms_cap, b->nksyms + 1, sizeof(*b->ksyms));
	if (err)
		return err;
	err = sym_name_field(r, 3, &name);
	if (err)
		return err;
	k = &b->ksyms[b->nksyms++];
	k->addr = addr;
	k->name = name;
	k->module = mod;
	return 0;
}

static int rec_pair(struct reader *r)
{
	struct vmctx_bundle *b = r->b;
	uint64_t tsc, ns;
	int err;

	if (r->ntok != 3)
		return fail(r, -VMCTX_E_SYNTAX, "clockpair: wrong number of fields");
	err = one_more(r, C_PAIRS);
	if (!err)
		err = dec_field(r, 1, "tsc", &tsc);
	if (!err)
		err = dec_field(r, 2, "ns", &ns);
	return err ? err : bundle_push_pair(b, tsc, ns);
}

static int rec_switch(struct reader *r)
{
	uint64_t cpu, ns, pid, tgid;
	int kind, err;
	char *comm;

	if (r->ntok != 7)
		return fail(r, -VMCTX_E_SYNTAX, "switch: wrong number of fields");
	err = one_more(r, C_SWITCHES);
	if (!err)
		err = dec_field(r, 1, NULL, &cpu);
	if (!err)
		err = dec_field(r, 2, NULL, &ns);
	if (!err)
		err = dec_field(r, 3, "pid", &pid);
	if (!err)
		err = dec_field(r, 4, "tgid", &tgid);
	if (err)
		return err;
	if (cpu >= SWITCH_LOG_MAX_CPUS)
		return fail(r, -VMCTX_E_LIMIT, "switch: CPU beyond the limit");
	kind = switch_log_kind_of(field(r, 5, "kind"));
	if (kind < 0)
		return fail(r, -VMCTX_E_SYNTAX, "switch: bad kind");
	if (pid > INT32_MAX || tgid > INT32_MAX)
		return fail(r, -VMCTX_E_SYNTAX, "switch: pid out of range");
	if (!switch_log_task_valid(pid, tgid, kind))
		return fail(r, -VMCTX_E_SYNTAX, "switch: pid 0 is the idle task's, and only its");
	err = str_field(r, 6, "comm", BUNDLE_MAX_SHORT, false, NULL, &comm);
	if (err)
		return err;
	err = switch_log_add(&r->b->switches, cpu, ns, pid, tgid, kind, comm);
	free(comm);
	return err;
}

static int rec_gap(struct reader *r)
{
	uint64_t cpu, start, end;
	int err;

	if (r->ntok != 4)
		return fail(r, -VMCTX_E_SYNTAX, "gap: wrong number of fields");
	err = one_more(r, C_GAPS);
	if (!err)
		err = dec_field(r, 1, NULL, &cpu);
	if (!err)
		err = dec_field(r, 2, NULL, &start);
	if (!err)
		err = dec_field(r, 3, NULL, &end);
	if (err)
		return err;
	if (cpu >= SWITCH_LOG_MAX_CPUS)
		return fail(r, -VMCTX_E_LIMIT, "gap: CPU beyond the limit");
	if (end < start)
		return fail(r, -VMCTX_E_RANGE, "gap: ends before it starts");
	return switch_log_add_gap(&r->b->switches, cpu, start, end);
}

static int rec_window(struct reader *r)
{
	uint64_t start, end;
	int err;

	if (r->ntok != 3)
		return fail(r, -VMCTX_E_SYNTAX, "window: wrong number of fields");
	err = dec_field(r, 1, "start", &start);
	if (!err)
		err = dec_field(r, 2, "end", &end);
	if (err)
		return err;
	if (!bundle_window_valid(start, end))
		return fail(r, -VMCTX_E_RANGE, "window: ends before it starts");
	r->b->has_window = true;
	r->b->window_start = start;
	r->b->window_end = end;
	return 0;
}

static int rec_end(struct reader *r)
{
	int i;

	if (r->ntok != 1)
		return fail(r, -VMCTX_E_SYNTAX, "end: unexpected fields");
	for (i = 0; i < C_MAX; i++)
		if (r->seen[i] != r->counts[i])
			return fail(r, -VMCTX_E_SYNTAX, "fewer records than counted");
	if (!bundle_unwind_whole(r->b))
		return fail(r, -VMCTX_E_SYNTAX, "an unwind table cut short");
	return 0;
}

/* x-unwind OBJ KIND vaddr=HEX size=DEC off=DEC BASE64 */
static int rec_unwind(struct reader *r)
{
	uint64_t obj, vaddr, size, off;
	int kind, err;

	if (r->ntok != 7)
		return fail(r, -VMCTX_E_SYNTAX, "x-unwind: wrong number of fields");
	err = dec_field(r, 1, NULL, &obj);
	if (!err)
		err = hex_field(r, 3, "vaddr", &vaddr);
	if (!err)
		err = dec_field(r, 4, "size", &size);
	if (!err)
		err = dec_field(r, 5, "off", &off);
	if (err)
		return err;
	kind = bundle_unwind_kind(r->tok[2]);
	if (kind < 0 || obj >= r->b->nobjects)
		return fail(r, -VMCTX_E_SYNTAX, "x-unwind: no such object or table");
	err = bundle_unwind_put(r->b, (int)obj, kind, vaddr, size, off, r->tok[6]);
	return err ? fail(r, err, "x-unwind: a chunk that does not continue its table") : 0;
}

static int (*const handlers[])(struct reader *r) = {
	[S_COUNTS] = rec_counts,
	[S_IDENTITY] = rec_identity,
	[S_CLOCK] = rec_clock,
	[S_CR3] = rec_cr3,
	[S_WINDOW] = rec_window,
	[S_TASK] = rec_task,
	[S_OBJECT] = rec_object,
	[S_SYM] = rec_sym,
	[S_MAP] = rec_map,
	[S_KMOD] = rec_kmod,
	[S_KSYM] = rec_ksym,
	[S_PAIR] = rec_pair,
	[S_SWITCH] = rec_switch,
	[S_GAP] = rec_gap,
	[S_END] = rec_end,
};

static int magic_line(struct reader *r)
{
	const char *v = r->line + strlen(MAGIC);

	if (strncmp(r->line, MAGIC, strlen(MAGIC)))
		return fail(r, -VMCTX_E_MAGIC, "not a vmctx bundle");
	/* 2 has a switch log, 1 has none: a reader of 2 reads both */
	if (!strcmp(v, "1"))
		r->version = BUNDLE_VERSION;
	else if (!strcmp(v, "2"))
		r->version = BUNDLE_VERSION_LOG;
	else
		return fail(r, -VMCTX_E_VERSION, "unsupported version");
	r->state = S_COUNTS;
	return 0;
}

/* The section whose record is named @name, from section @from on; S_DONE if none. */
static enum section section_of(const char *name, enum section from)
{
	enum section sec;

	for (sec = from; sec <= S_END; sec++)
		if (!strcmp(name, keywords[sec]))
			break;
	return sec;
}

/* One complete line, without its newline, NUL-terminated in r->line. */
static int parse_line(struct reader *r)
{
	char *p, *end = r->line + r->len;
	enum section sec;

	if (r->state == S_MAGIC)
		return magic_line(r);
	if (r->state == S_DONE)
		return fail(r, -VMCTX_E_SYNTAX, "data after the end record");
	if (!printable(r->line, r->len))
		return fail(r, -VMCTX_E_SYNTAX, "control or non-ASCII byte");

	/* Tokens are separated by exactly one space. */
	r->ntok = 0;
	for (p = r->line;;) {
		char *sp = memchr(p, ' ', end - p);

		if (r->ntok == MAX_TOKENS)
			return fail(r, -VMCTX_E_SYNTAX, "too many fields");
		if (sp == p || p == end)
			return fail(r, -VMCTX_E_SYNTAX, "empty field");
		r->tok[r->ntok] = p;
		r->toklen[r->ntok++] = (sp ? sp : end) - p;
		if (!sp)
			break;
		*sp = '\0';
		p = sp + 1;
	}

	/* The objects' unwind tables, once objects come; other extension
	 * records, for later minor additions, are skipped. */
	if (!strcmp(r->tok[0], "x-unwind") && r->state >= S_OBJECT)
		return rec_unwind(r);
	if (!strncmp(r->tok[0], "x-", 2) && r->state > S_COUNTS)
		return 0;
	/*
	 * A record in order is of the current section or a later one: look
	 * there first (a bundle is mostly runs of one record), then at all.
	 */
	sec = section_of(r->tok[0], r->state > S_COUNTS ? r->state : S_COUNTS);
	if (sec > S_END)
		sec = section_of(r->tok[0], S_COUNTS);
	if (sec > S_END)
		return fail(r, -VMCTX_E_SYNTAX, "unknown record");
	/* The records before the window appear once each, in order; the
	 * window at most once, right after them. */
	if (sec < r->state || (r->state < S_WINDOW && sec != r->state))
		return fail(r, -VMCTX_E_SYNTAX, "record out of order");
	if ((sec == S_SWITCH || sec == S_GAP) && r->version < BUNDLE_VERSION_LOG)
		return fail(r, -VMCTX_E_SYNTAX, "a switch log in a version-1 bundle");
	r->state = sec <= S_WINDOW || sec == S_END ? sec + 1 : sec;
	return handlers[sec](r);
}

/* The next line is longer than any line. */
static int line_too_long(struct reader *r)
{
	r->lineno++;
	if (r->state == S_MAGIC)
		return fail(r, -VMCTX_E_MAGIC, "not a vmctx bundle");
	return fail(r, -VMCTX_E_LIMIT, "line too long");
}

/* A NUL byte in the next line, or in as much of it as has come. */
static int nul_byte(struct reader *r)
{
	r->lineno++;
	return fail(r, r->state == S_MAGIC ? -VMCTX_E_MAGIC : -VMCTX_E_SYNTAX, "NUL byte");
}

/* Split decompressed text, as it comes, into lines, in r->buf. */
static int feed(struct reader *r, const char *data, size_t n)
{
	r->line = r->buf;
	while (n) {
		const char *nl = memchr(data, '\n', n);
		size_t take = nl ? (size_t)(nl - data) : n;
		int err;

		if (take >= sizeof(r->buf) - r->len)
			return line_too_long(r);
		if (memchr(data, '\0', take))
			return nul_byte(r);
		memcpy(r->buf + r->len, data, take);
		r->len += take;
		if (!nl)
			break;
		r->buf[r->len] = '\0';
		r->lineno++;
		err = parse_line(r);
		if (err)
			return err;
		r->len = 0;
		data += take + 1;
		n -= take + 1;
	}
	return 0;
}

/* Split a whole text of @n bytes, NUL-terminated, into lines, in place. */
static int feed_whole(struct reader *r, char *text, size_t n)
{
	/* the lines are searched for a NUL only if the text has one */
	bool nul = memchr(text, '\0', n);

	while (n) {
		char *nl = memchr(text, '\n', n);
		size_t take = nl ? (size_t)(nl - text) : n;
		int err;

		if (take >= sizeof(r->buf))
			return line_too_long(r);
		if (nul && memchr(text, '\0', take))
			return nul_byte(r);
		r->line = text;
		r->len = take;
		if (!nl)
			break;
		*nl = '\0';
		r->lineno++;
		err = parse_line(r);
		if (err)
			return err;
		r->len = 0;
		text += take + 1;
		n -= take + 1;
	}
	return 0;
}

/* At the end of the text. */
static int finish(struct reader *r)
{
	if (r->state == S_DONE && !r->len)
		return 0;
	r->lineno++;
	if (r->state == S_MAGIC && r->len &&
	    strncmp(r->line, MAGIC, r->len < strlen(MAGIC) ? r->len : strlen(MAGIC)))
		return fail(r, -VMCTX_E_MAGIC, "not a vmctx bundle");
	if (r->state == S_DONE)
		return fail(r, -VMCTX_E_SYNTAX, "data after the end record");
	return fail(r, -VMCTX_E_TRUNCATED, "no end record");
}

/* ---- gzip ------------------------------------------------------------- */

/*
 * Inflate the single gzip member in @buf, at most @max bytes of output,
 * handing the output to @r as it comes.  ISIZE is never trusted: output is
 * counted as it is produced.  A stream that is corrupt, truncated or too
 * large is reported as such even where its text was rejected before the
 * damage: once @r rejects the text, the rest is only inflated and checked.
 */
static int inflate_all(const unsigned char *buf, size_t len, uint64_t max, struct reader *r)
{
	unsigned char *out;
	uint64_t total = 0;
	size_t left = len;
	z_stream z;
	int ret, err = 0, parse_err = 0;

	memset(&z, 0, sizeof(z));
	out = malloc(INFLATE_CHUNK);
	if (!out)
		return -ENOMEM;
	/* 15 + 16: gzip only, with its CRC-32 and length trailer checked. */
	if (inflateInit2(&z, 15 + 16) != Z_OK) {
		free(out);
		return -ENOMEM;
	}
	r->hold = true;
	for (;;) {
		size_t produced;

		if (!z.avail_in && left) {
			z.next_in = (unsigned char *)buf + (len - left);
			z.avail_in = left > UINT32_MAX ? UINT32_MAX : left;
			left -= z.avail_in;
		}
		z.next_out = out;
		z.avail_out = INFLATE_CHUNK;
		ret = inflate(&z, Z_NO_FLUSH);
		produced = INFLATE_CHUNK - z.avail_out;
		total += produced;
		if (total > max) {
			err = fail(NULL, -VMCTX_E_LIMIT, "decompressed size beyond the limit");
			break;
		}
		if (!parse_err && produced)
			parse_err = feed(r, (const char *)out, produced);
		if (ret == Z_STREAM_END) {
			if (z.avail_in || left)
				err = fail(NULL, -VMCTX_E_CORRUPT, "data after the gzip member");
			break;
		}
		if (ret == Z_OK)
			continue;
		if (ret == Z_BUF_ERROR && !z.avail_in && !left) {
			err = fail(NULL, -VMCTX_E_TRUNCATED, "compressed stream ends early");
		} else if (ret == Z_DATA_ERROR && z.msg &&
			   (!strcmp(z.msg, "incorrect data check") ||
			    !strcmp(z.msg, "incorrect length check"))) {
			err = fail(NULL, -VMCTX_E_CHECKSUM, z.msg);
		} else if (ret == Z_MEM_ERROR) {
			err = -ENOMEM;
		} else {
			err = fail(NULL, -VMCTX_E_CORRUPT, z.msg ? z.msg : "inflate failed");
		}
		break;
	}
	inflateEnd(&z);
	free(out);
	r->hold = false;
	if (err || !parse_err)
		return err;
	if (r->held_why)
		log_line(r->held_lineno, r->held_why, parse_err);
	return parse_err;
}

/* Deflate makes at most 1032 bytes of one (RFC 1951: a 258-byte match in 2 bits). */
#define DEFLATE_MAX_RATIO	1032

/*
 * The text of @buf if it is one sound gzip member of at most @max bytes of
 * text, inflated whole into a buffer of the size its trailer gives and
 * checked (CRC-32, size, nothing after it) by libdeflate; else NULL, for
 * inflate_all() to say what is wrong.  The size is trusted only as far as
 * @max and what deflate can make of @len bytes, and the buffer is as large
 * as the text must then be: a lie wastes no more than that, once.  A
 * header with a CRC of its own is left to zlib, which checks it.  The
 * text is written once, in order: a large one goes in huge pages, whose
 * faults are a 512th of 4 KiB pages' (util_alloc_big()).
 */
static char *inflate_whole(const unsigned char *buf, size_t len, uint64_t max, size_t *text_len)
{
	struct libdeflate_decompressor *d;
	enum libdeflate_result res;
	size_t isize, used, got, size;
	char *text;

	/* header, empty deflate block, trailer: 10 + 2 + 8 bytes at least */
	if (len < 20 || (buf[3] & 0x02))
		return NULL;
	isize = (size_t)buf[len - 4] | (size_t)buf[len - 3] << 8 | (size_t)buf[len - 2] << 16 |
		(size_t)buf[len - 1] << 24;
	/* (half the address space at most: the buffer's sizes cannot wrap) */
	if (isize > max || isize / DEFLATE_MAX_RATIO > len || isize > SIZE_MAX / 2)
		return NULL;
	size = isize + 1;
	text = util_alloc_big(&size);
	if (!text)
		return NULL;
	d = libdeflate_alloc_decompressor();
	if (!d) {
		free(text);
		return NULL;
	}
	res = libdeflate_gzip_decompress_ex(d, buf, len, text, isize, &used, &got);
	libdeflate_free_decompressor(d);
	if (res != LIBDEFLATE_SUCCESS || used != len || got != isize) {
		free(text);
		return NULL;
	}
	text[got] = '\0';
	*text_len = got;
	return text;
}

static uint64_t max_size(const struct vmctx_read_opts *opts)
{
	return OPTS_GET(opts, max_size, 0) ?: BUNDLE_DEFAULT_MAX_SIZE;
}

int vmctx_bundle_read_mem(const void *buf, size_t len, const struct vmctx_read_opts *opts,
			  struct vmctx_bundle **out)
{
	static const unsigned char gz[2] = { 0x1f, 0x8b };
	uint64_t max = max_size(opts);
	struct reader *r;
	size_t text_len;
	char *text;
	int err;

	if ((!buf && len) || !out || !OPTS_VALID(opts, struct vmctx_read_opts, max_size))
		return -EINVAL;
	if (!len)
		return fail(NULL, -VMCTX_E_TRUNCATED, "empty input");
	if (len < 2 || memcmp(buf, gz, 2)) {
		if (len < 2 && *(const unsigned char *)buf == gz[0])
			return fail(NULL, -VMCTX_E_TRUNCATED, "no gzip header");
		return fail(NULL, -VMCTX_E_MAGIC, "not gzip data");
	}
	r = calloc(1, sizeof(*r));
	if (!r)
		return -ENOMEM;
	r->b = vmctx_bundle_new();
	if (!r->b) {
		free(r);
		return -ENOMEM;
	}
	text = inflate_whole(buf, len, max, &text_len);
	if (text)
		r->bound = text_len / RECORD_MIN;
	err = text ? feed_whole(r, text, text_len) : inflate_all(buf, len, max, r);
	if (!err)
		err = finish(r);
	/* (after finish(): the last line may be in the text) */
	free(text);
	if (!err)
		err = bundle_seal(r->b, true);
	if (err)
		vmctx_bundle_free(r->b);
	else
		*out = r->b;
	free(r);
	return err;
}

/* The largest gzip member that can hold @max bytes of text (stored blocks). */
static uint64_t max_file_size(uint64_t max)
{
	if (max > UINT64_MAX / 2)
		return UINT64_MAX / 2;
	return max + max / 64 + (1 << 16);
}

int vmctx_bundle_read_file(const char *path, const struct vmctx_read_opts *opts,
			   struct vmctx_bundle **out)
{
	uint64_t cap = max_file_size(max_size(opts));
	unsigned char *buf = NULL;
	size_t len = 0, bufcap = 0;
	struct stat st;
	int fd, err = 0;

	if (!path || !out || !OPTS_VALID(opts, struct vmctx_read_opts, max_size))
		return -EINVAL;
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	if (fstat(fd, &st) < 0) {
		err = -errno;
		goto out;
	}
	if (S_ISDIR(st.st_mode)) {
		err = -EISDIR;
		goto out;
	}
	if (S_ISREG(st.st_mode) && (uint64_t)st.st_size > cap) {
		err = fail(NULL, -VMCTX_E_LIMIT, "file larger than any bundle within the limit");
		goto out;
	}
	/* st_size may lie (pipes, growing files): the read itself is bounded too. */
	for (;;) {
		ssize_t n;

		if (len == bufcap) {
			size_t want;

			if (len > cap) {
				err = fail(NULL, -VMCTX_E_LIMIT,
					   "file larger than any bundle within the limit");
				goto out;
			}
			/* One byte more than expected, so that EOF is seen without growing. */
			if (len)
				want = len * 2;
			else if (S_ISREG(st.st_mode) && st.st_size > 0)
				want = st.st_size + 1;
			else
				want = 1 << 20;
			if (want > cap + 1)
				want = cap + 1;
			/* (a large buffer in huge pages: util_grow()) */
			err = util_grow((void **)&buf, &bufcap, want, 1);
			if (err)
				goto out;
		}
		n = read(fd, buf + len, bufcap - len);
		if (n < 0) {
			if (errno == EINTR)
				continue;
			err = -errno;
			goto out;
		}
		if (!n)
			break;
		len += n;
	}
	if (len > cap) {
		err = fail(NULL, -VMCTX_E_LIMIT, "file larger than any bundle within the limit");
		goto out;
	}
	err = vmctx_bundle_read_mem(buf, len, opts, out);
out:
	free(buf);
	close(fd);
	return err;
}
