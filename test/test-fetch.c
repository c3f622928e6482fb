// SPDX-License-Identifier: LGPL-2.1-only
/*
 * Fetching a bundle (vmctx_fetch(3)), over a Unix socket: a server thread
 * plays the agent, with the library's own end or with raw bytes as a
 * hostile guest would send them.  The bundle fetched must be the one
 * served; every malformed, oversized, short or silent reply must end in
 * its error within the timeout; a guest's error text reaches the log
 * escaped; and the agent's end refuses every request not of the protocol.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>

#include "vmctx.h"
#include "check.h"

static char sock_path[108];
static char last_log[1024];

static void on_log(enum vmctx_log_level level, const char *msg, void *ctx)
{
	(void)level;
	(void)ctx;
	snprintf(last_log, sizeof(last_log), "%s", msg);
}

/* What the server thread does with one connection. */
struct server {
	int lfd;
	const void *raw;	/* bytes to send as they are, or NULL: the library's end */
	size_t raw_len;
	bool silent;		/* send nothing, hold the connection */
	const void *bundle;	/* the library's end: this bundle */
	size_t bundle_len;
	int err;		/* ... or this error */
	uint64_t span;		/* the request's span, as read */
	int read_err;
};

static void *serve_one(void *p)
{
	struct server *s = p;
	int fd = accept(s->lfd, NULL, NULL);

	if (fd < 0)
		return NULL;
	if (s->silent) {
		struct timespec t = { 0, 400 * 1000000L };

		nanosleep(&t, NULL);
	} else if (s->raw) {
		char req[256];

		if (recv(fd, req, sizeof(req), 0) < 0)
			s->read_err = -errno;
		if (send(fd, s->raw, s->raw_len, MSG_NOSIGNAL) < 0)
			s->read_err = -errno;
	} else {
		s->read_err = vmctx_fetch_read_request(fd, 1000, &s->span);
		if (!s->read_err)
			vmctx_fetch_write_reply(fd, s->bundle, s->bundle_len, s->err, 1000);
	}
	close(fd);
	return NULL;
}

static int listen_unix(void)
{
	struct sockaddr_un un = { .sun_family = AF_UNIX };
	int fd = socket(AF_UNIX, SOCK_STREAM, 0);

	strcpy(un.sun_path, sock_path);
	unlink(sock_path);
	if (fd < 0 || bind(fd, (struct sockaddr *)&un, sizeof(un)) || listen(fd, 4)) {
		perror("listen");
		exit(2);
	}
	return fd;
}

/* Fetch once from a server that does what @s says; the fetch's result. */
static int fetch_from(struct server *s, uint64_t span, unsigned int timeout_ms, uint64_t max,
		      void **data, size_t *len)
{
	VMCTX_OPTS(vmctx_fetch_opts, o, .unix_path = sock_path, .span_ns = span,
		   .timeout_ms = timeout_ms, .max_size = max);
	pthread_t t;
	int err;

	s->lfd = listen_unix();
	if (pthread_create(&t, NULL, serve_one, s)) {
		perror("pthread_create");
		exit(2);
	}
	*data = NULL;
	err = vmctx_fetch(&o, data, len);
	pthread_join(t, NULL);
	close(s->lfd);
	return err;
}

static void *sample_bundle(size_t *len)
{
	struct vmctx_bundle *b = vmctx_bundle_new();
	void *data = NULL;
	int obj;

	CHECK(b && !vmctx_bundle_set_identity(b, "guest", "6.1", "boot"), "identity");
	obj = vmctx_bundle_add_object(b, "/bin/true", "ab01");
	CHECK(obj >= 0 && !vmctx_bundle_add_symbol(b, obj, 0x1000, 0x10, "main"), "object");
	CHECK(vmctx_bundle_add_task(b, 0x1234000, 100, 100, "true", 0, VMCTX_TIME_NONE) >= 0,
	      "task");
	CHECK(!vmctx_bundle_seal(b) && !vmctx_bundle_write_mem(b, &data, len), "seal and write");
	vmctx_bundle_free(b);
	return data;
}

static void test_round_trip(void)
{
	struct server s = { 0 };
	struct vmctx_bundle *b = NULL;
	size_t len = 0, blen;
	void *data, *bundle = sample_bundle(&blen);
	int err;

	s.bundle = bundle;
	s.bundle_len = blen;
	err = fetch_from(&s, 30000000000ULL, 2000, 0, &data, &len);
	CHECK(!err, "fetch: %s", vmctx_strerror(err));
	CHECK(!s.read_err && s.span == 30000000000ULL, "the agent read span %" PRIu64 " (%d)",
	      s.span, s.read_err);
	CHECK(len == blen && data && !memcmp(data, bundle, blen), "the bytes served (%zu of %zu)",
	      len, blen);
	err = data ? vmctx_bundle_read_mem(data, len, NULL, &b) : -1;
	CHECK(!err && vmctx_bundle_ntasks(b) == 1, "they read as the bundle (%d)", err);
	vmctx_bundle_free(b);
	free(data);
	free(bundle);
}

static void test_agent_error(void)
{
	struct server s = { .err = -ENOENT };
	size_t len;
	void *data;

	CHECK_EQ(fetch_from(&s, 0, 2000, 0, &data, &len), -EREMOTEIO, "an error answered");
	CHECK(strstr(last_log, strerror(ENOENT)), "the log gives the agent's reason: %s", last_log);
	CHECK(!data, "no data on an error");
}

/* A reply as a hostile or broken guest would send it. */
static void raw_reply(const char *what, const void *raw, size_t n, uint64_t max, int want,
		      unsigned int timeout_ms)
{
	struct server s = { .raw = raw, .raw_len = n };
	time_t t0 = time(NULL);
	size_t len;
	void *data;
	int err;

	last_log[0] = '\0';
	err = fetch_from(&s, 0, timeout_ms, max, &data, &len);
	CHECK(err == want, "%s: got %d (%s), want %d", what, err, vmctx_strerror(err), want);
	CHECK(!data, "%s: no data", what);
	CHECK(time(NULL) - t0 <= 3, "%s: within its time", what);
}

static void test_hostile_replies(void)
{
	static const char esc[] = "vmctx-error \x1b]0;pwned\x07 go away\n";
	char line[300];
	struct server s = { .silent = true };
	size_t len;
	void *data;
	int err;

	raw_reply("not the protocol", "HTTP/1.1 200 OK\n", 16, 0, -VMCTX_E_SYNTAX, 2000);
	raw_reply("a size with a sign", "vmctx-bundle 1 -5\n", 18, 0, -VMCTX_E_SYNTAX, 2000);
	raw_reply("a size with a leading zero", "vmctx-bundle 1 05\n", 18, 0, -VMCTX_E_SYNTAX,
		  2000);
	raw_reply("a size past 2^64", "vmctx-bundle 1 18446744073709551616\n", 36, 0,
		  -VMCTX_E_SYNTAX, 2000);
	raw_reply("another version", "vmctx-bundle 2 5\nhello", 22, 0, -VMCTX_E_SYNTAX, 2000);
	raw_reply("over the size limit", "vmctx-bundle 1 1000\n", 20, 999, -VMCTX_E_LIMIT, 2000);
	raw_reply("a huge size", "vmctx-bundle 1 18446744073709551615\n", 36, 0, -VMCTX_E_LIMIT,
		  2000);
	raw_reply("fewer bytes than said", "vmctx-bundle 1 100\n0123456789", 29, 0,
		  -VMCTX_E_TRUNCATED, 2000);
	raw_reply("no newline, then close", "vmctx-bundle 1 1", 16, 0, -VMCTX_E_TRUNCATED, 2000);
	raw_reply("a NUL in the line", "vmctx-bundle\0 1 5\n", 18, 0, -VMCTX_E_SYNTAX, 2000);
	memset(line, 'x', sizeof(line));
	raw_reply("a line over 128 bytes", line, sizeof(line), 0, -VMCTX_E_SYNTAX, 2000);
	raw_reply("an error with control bytes", esc, sizeof(esc) - 1, 0, -EREMOTEIO, 2000);
	CHECK(!strchr(last_log, '\x1b') && !strchr(last_log, '\x07') &&
	      strstr(last_log, "answered: \\x1b]0;pwned\\x07 go away"),
	      "the guest's error text is logged escaped once: %s", last_log);

	err = fetch_from(&s, 0, 200, 0, &data, &len);
	CHECK(err == -ETIMEDOUT, "a silent agent: got %d, want -ETIMEDOUT", err);
}

static void test_bad_arguments(void)
{
	VMCTX_OPTS(vmctx_fetch_opts, none);
	struct {
		struct vmctx_fetch_opts o;
		uint64_t more;
	} big = { .o = { .sz = sizeof(big), .unix_path = "/nonexistent" }, .more = 1 };
	size_t len;
	void *data;

	CHECK_EQ(vmctx_fetch(NULL, &data, &len), -EINVAL, "no options");
	CHECK_EQ(vmctx_fetch(&none, &data, &len), -EINVAL, "no CID and no socket");
	CHECK_EQ(vmctx_fetch(&big.o, &data, &len), -EINVAL, "unknown nonzero options");
	none.unix_path = "/nonexistent/vmctx.sock";
	CHECK_EQ(vmctx_fetch(&none, &data, &len), -ENOENT, "no such socket");
	CHECK_EQ(vmctx_fetch_read_request(-1, 0, &big.more), -EINVAL, "bad fd");
	CHECK_EQ(vmctx_fetch_write_reply(-1, NULL, 0, 0, 0), -EINVAL, "bad fd (reply)");
}

/* The agent's end, given each of these lines by a peer. */
static void test_bad_requests(void)
{
	static const struct {
		const char *line;
		int want;
	} cases[] = {
		{ "vmctx-fetch 1 span_ns=0\n", 0 },
		{ "vmctx-fetch 1 span_ns=18446744073709551615\n", 0 },
		{ "vmctx-fetch 2 span_ns=5\n", -VMCTX_E_SYNTAX },
		{ "vmctx-fetch 1 span_ns=05\n", -VMCTX_E_SYNTAX },
		{ "vmctx-fetch 1 span_ns=-5\n", -VMCTX_E_SYNTAX },
		{ "vmctx-fetch 1 span_ns=18446744073709551616\n", -VMCTX_E_SYNTAX },
		{ "vmctx-fetch 1 span_ns=\n", -VMCTX_E_SYNTAX },
		{ "vmctx-fetch 1 span_ns=5 more\n", -VMCTX_E_SYNTAX },
		{ "GET / HTTP/1.0\n", -VMCTX_E_SYNTAX },
		{ "vmctx-fetch 1 span_ns=5", -VMCTX_E_TRUNCATED },
	};
	char long_line[200];
	uint64_t span;
	size_t i;
	int sv[2], err;

	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		CHECK(!socketpair(AF_UNIX, SOCK_STREAM, 0, sv), "socketpair");
		CHECK(send(sv[0], cases[i].line, strlen(cases[i].line), 0) > 0, "send");
		shutdown(sv[0], SHUT_WR);
		err = vmctx_fetch_read_request(sv[1], 1000, &span);
		CHECK(err == cases[i].want, "request %zu: got %d, want %d", i, err, cases[i].want);
		close(sv[0]);
		close(sv[1]);
	}
	memset(long_line, 'v', sizeof(long_line));
	CHECK(!socketpair(AF_UNIX, SOCK_STREAM, 0, sv), "socketpair");
	CHECK(send(sv[0], long_line, sizeof(long_line), 0) > 0, "send");
	CHECK_EQ(vmctx_fetch_read_request(sv[1], 1000, &span), -VMCTX_E_SYNTAX, "a long line");
	close(sv[0]);
	close(sv[1]);
	/* a peer that says nothing */
	CHECK(!socketpair(AF_UNIX, SOCK_STREAM, 0, sv), "socketpair");
	CHECK_EQ(vmctx_fetch_read_request(sv[1], 100, &span), -ETIMEDOUT, "a silent peer");
	close(sv[0]);
	close(sv[1]);
}

int main(void)
{
	snprintf(sock_path, sizeof(sock_path), "/tmp/vmctx-fetch-%d.sock", (int)getpid());
	vmctx_set_log(on_log, NULL);
	test_round_trip();
	test_agent_error();
	test_hostile_replies();
	test_bad_arguments();
	test_bad_requests();
	unlink(sock_path);
	return check_result("test-fetch");
}
