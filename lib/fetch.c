// SPDX-License-Identifier: LGPL-2.1-only
/*
 * Fetching a bundle: a host asks a guest's agent (vmctx-agent serve) for
 * the bundle of its last span of time, over a stream socket, vsock or a
 * Unix socket (vmctx-bundle(5), "FETCHING").  One request line, one reply
 * line, the bundle's bytes, and the connection closes.
 *
 * Both ends are bounded: the reply comes from a guest, the request from
 * whoever can reach the agent's port.  Every read and write waits at most
 * until the exchange's deadline, a line is at most FETCH_LINE_MAX bytes,
 * and a reply's bundle at most the caller's size limit.  A guest's error
 * message is logged (util_log() escapes it), never returned as text.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>
#include <linux/vm_sockets.h>

#include "util.h"

#define FETCH_LINE_MAX		128
#define FETCH_TIMEOUT_MS	5000
#define FETCH_MAX_SIZE		(64ULL << 20)
#define FETCH_REQUEST		"vmctx-fetch 1 span_ns="
#define FETCH_REPLY		"vmctx-bundle 1 "
#define FETCH_ERROR		"vmctx-error "

static uint64_t mono_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000 + (uint64_t)ts.tv_nsec / 1000000;
}

/* Wait for @events on @fd until @deadline (ms, CLOCK_MONOTONIC). */
static int wait_fd(int fd, short events, uint64_t deadline)
{
	struct pollfd p = { .fd = fd, .events = events };
	int ret;

	for (;;) {
		uint64_t now = mono_ms();

		if (now >= deadline)
			return -ETIMEDOUT;
		ret = poll(&p, 1, (int)(deadline - now > 60000 ? 60000 : deadline - now));
		if (ret > 0)
			return 0;
		if (ret < 0 && errno != EINTR)
			return -errno;
	}
}

static int write_all(int fd, const void *buf, size_t len, uint64_t deadline)
{
	const char *p = buf;
	ssize_t n;
	int err;

	while (len) {
		err = wait_fd(fd, POLLOUT, deadline);
		if (err)
			return err;
		n = send(fd, p, len, MSG_NOSIGNAL | MSG_DONTWAIT);
		if (n < 0) {
			if (errno == EINTR || errno == EAGAIN)
				continue;
			return -errno;
		}
		p += n;
		len -= (size_t)n;
	}
	return 0;
}

/* Up to @len bytes into @buf; 0 at the end of the stream. */
static ssize_t read_some(int fd, void *buf, size_t len, uint64_t deadline)
{
	ssize_t n;
	int err;

	for (;;) {
		err = wait_fd(fd, POLLIN, deadline);
		if (err)
			return err;
		n = recv(fd, buf, len, MSG_DONTWAIT);
		if (n >= 0)
			return n;
		if (errno != EINTR && errno != EAGAIN)
			return -errno;
	}
}

/*
 * One line, without its newline, into @line (FETCH_LINE_MAX bytes): read a
 * byte at a time, so that nothing after the line is consumed.
 */
static int read_line(int fd, char *line, uint64_t deadline)
{
	size_t n = 0;
	ssize_t got;

	for (;;) {
		got = read_some(fd, line + n, 1, deadline);
		if (got < 0)
			return (int)got;
		if (!got)
			return -VMCTX_E_TRUNCATED;
		if (line[n] == '\n') {
			line[n] = '\0';
			return 0;
		}
		if (!line[n] || ++n == FETCH_LINE_MAX)
			return -VMCTX_E_SYNTAX;
	}
}

/* Decimal, no sign, no leading zeros, no overflow; the whole of @s. */
static bool parse_u64(const char *s, uint64_t *v)
{
	uint64_t x = 0;

	if (!*s || (s[0] == '0' && s[1]))
		return false;
	for (; *s; s++) {
		if (*s < '0' || *s > '9' || x > (UINT64_MAX - (uint64_t)(*s - '0')) / 10)
			return false;
		x = x * 10 + (uint64_t)(*s - '0');
	}
	*v = x;
	return true;
}

static int connect_to(const struct vmctx_fetch_opts *o, uint64_t deadline)
{
	struct sockaddr_storage ss;
	socklen_t alen;
	int fd, err = 0;
	socklen_t elen = sizeof(err);

	memset(&ss, 0, sizeof(ss));
	if (OPTS_GET(o, unix_path, NULL)) {
		struct sockaddr_un *un = (struct sockaddr_un *)&ss;

		if (strlen(o->unix_path) >= sizeof(un->sun_path))
			return -ENAMETOOLONG;
		un->sun_family = AF_UNIX;
		strcpy(un->sun_path, o->unix_path);
		alen = sizeof(*un);
	} else {
		struct sockaddr_vm *vm = (struct sockaddr_vm *)&ss;

		vm->svm_family = AF_VSOCK;
		vm->svm_cid = o->cid;
		vm->svm_port = OPTS_GET(o, port, 0) ?: VMCTX_FETCH_PORT;
		alen = sizeof(*vm);
	}
	fd = socket(ss.ss_family, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
	if (fd < 0)
		return -errno;
	if (connect(fd, (struct sockaddr *)&ss, alen)) {
		if (errno != EINPROGRESS && errno != EAGAIN) {
			err = -errno;
			goto out_err;
		}
		err = wait_fd(fd, POLLOUT, deadline);
		if (!err && getsockopt(fd, SOL_SOCKET, SO_ERROR, &err, &elen))
			err = errno;
		if (err) {
			err = err < 0 ? err : -err;
			goto out_err;
		}
	}
	return fd;
out_err:
	close(fd);
	return err;
}

int vmctx_fetch(const struct vmctx_fetch_opts *opts, void **data, size_t *len)
{
	uint64_t max, size, deadline, got = 0;
	char line[FETCH_LINE_MAX];
	unsigned char *buf = NULL;
	int fd, err;
	ssize_t n;

	if (!opts || !data || !len || !OPTS_VALID(opts, struct vmctx_fetch_opts, cid) ||
	    (!OPTS_GET(opts, unix_path, NULL) && opts->cid == 0))
		return -EINVAL;
	deadline = mono_ms() + (OPTS_GET(opts, timeout_ms, 0) ?: FETCH_TIMEOUT_MS);
	max = OPTS_GET(opts, max_size, 0) ?: FETCH_MAX_SIZE;
	fd = connect_to(opts, deadline);
	if (fd < 0)
		return fd;
	snprintf(line, sizeof(line), FETCH_REQUEST "%" PRIu64 "\n", OPTS_GET(opts, span_ns, 0));
	err = write_all(fd, line, strlen(line), deadline);
	if (!err)
		err = read_line(fd, line, deadline);
	if (err)
		goto out;
	/* util_log() escapes the whole message: the guest's text is safe there */
	if (!strncmp(line, FETCH_ERROR, strlen(FETCH_ERROR))) {
		util_log(VMCTX_LOG_WARN, "fetch: the agent answered: %s", line + strlen(FETCH_ERROR));
		err = -EREMOTEIO;
		goto out;
	}
	if (strncmp(line, FETCH_REPLY, strlen(FETCH_REPLY)) ||
	    !parse_u64(line + strlen(FETCH_REPLY), &size)) {
		util_log(VMCTX_LOG_WARN, "fetch: not a reply: %s", line);
		err = -VMCTX_E_SYNTAX;
		goto out;
	}
	if (size > max || size > SIZE_MAX - 1) {
		util_log(VMCTX_LOG_WARN, "fetch: a bundle of %" PRIu64 " bytes, over the limit of %" PRIu64,
			 size, max);
		err = -VMCTX_E_LIMIT;
		goto out;
	}
	buf = malloc(size ? size : 1);
	if (!buf) {
		err = -ENOMEM;
		goto out;
	}
	while (got < size) {
		n = read_some(fd, buf + got, size - got, deadline);
		if (n <= 0) {
			err = n < 0 ? (int)n : -VMCTX_E_TRUNCATED;
			goto out;
		}
		got += (uint64_t)n;
	}
	*data = buf;
	*len = size;
	buf = NULL;
out:
	free(buf);
	close(fd);
	return err;
}

int vmctx_fetch_read_request(int fd, unsigned int timeout_ms, uint64_t *span_ns)
{
	uint64_t deadline = mono_ms() + (timeout_ms ?: FETCH_TIMEOUT_MS);
	char line[FETCH_LINE_MAX];
	int err;

	if (fd < 0 || !span_ns)
		return -EINVAL;
	err = read_line(fd, line, deadline);
	if (err)
		return err;
	if (strncmp(line, FETCH_REQUEST, strlen(FETCH_REQUEST)) ||
	    !parse_u64(line + strlen(FETCH_REQUEST), span_ns))
		return -VMCTX_E_SYNTAX;
	return 0;
}

int vmctx_fetch_write_reply(int fd, const void *data, size_t len, int err,
			    unsigned int timeout_ms)
{
	uint64_t deadline = mono_ms() + (timeout_ms ?: FETCH_TIMEOUT_MS);
	char line[FETCH_LINE_MAX];
	int ret;

	if (fd < 0 || (!err && !data && len))
		return -EINVAL;
	if (err)
		snprintf(line, sizeof(line), FETCH_ERROR "%s\n", vmctx_strerror(err));
	else
		snprintf(line, sizeof(line), FETCH_REPLY "%zu\n", len);
	ret = write_all(fd, line, strlen(line), deadline);
	if (!ret && !err)
		ret = write_all(fd, data, len, deadline);
	return ret;
}
