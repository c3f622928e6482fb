// SPDX-License-Identifier: LGPL-2.1-only
/*
 * libFuzzer harness for both ends of a fetch (vmctx_fetch(3)), whose
 * peers are untrusted: a guest's reply to the host, anyone's request to
 * the agent.
 *
 * The host's end: an agent thread, on a Unix socket, answers each
 * vmctx_fetch() with the input's bytes and closes; the fetch must end in
 * 0 with at most the input's bytes, or in an error, within its timeout,
 * without a crash or a leak.  The agent's end: the input, written to a
 * socket pair and shut, must read as a request or be refused.
 */
#include <errno.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include "vmctx.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t served_cond = PTHREAD_COND_INITIALIZER;
static const uint8_t *reply;
static size_t reply_len;
static unsigned long served;	/* connections the agent has closed */
static char sock_path[108];
static int lfd = -1;

/* The agent: each connection gets the current input as its reply. */
static void *agent(void *arg)
{
	char req[256];
	int fd;

	(void)arg;
	for (;;) {
		fd = accept(lfd, NULL, NULL);
		if (fd < 0)
			continue;
		pthread_mutex_lock(&lock);
		if (recv(fd, req, sizeof(req), 0) >= 0 && reply_len)
			(void)!send(fd, reply, reply_len, MSG_NOSIGNAL);
		close(fd);
		served++;
		pthread_cond_signal(&served_cond);
		pthread_mutex_unlock(&lock);
	}
	return NULL;
}

static void setup(void)
{
	struct sockaddr_un un = { .sun_family = AF_UNIX };
	pthread_t t;

	snprintf(sock_path, sizeof(sock_path), "/tmp/vmctx-fuzz-fetch-%d.sock", (int)getpid());
	strcpy(un.sun_path, sock_path);
	unlink(sock_path);
	lfd = socket(AF_UNIX, SOCK_STREAM, 0);
	if (lfd < 0 || bind(lfd, (struct sockaddr *)&un, sizeof(un)) || listen(lfd, 8) ||
	    pthread_create(&t, NULL, agent, NULL)) {
		perror("fuzz-fetch: setup");
		abort();
	}
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	VMCTX_OPTS(vmctx_fetch_opts, o, .unix_path = sock_path, .timeout_ms = 200,
		   .max_size = 1 << 20);
	unsigned long want;
	uint64_t span;
	void *got = NULL;
	size_t len = 0;
	int sv[2], err;

	if (lfd < 0)
		setup();
	pthread_mutex_lock(&lock);
	reply = data;
	reply_len = size;
	want = served + 1;
	pthread_mutex_unlock(&lock);
	err = vmctx_fetch(&o, &got, &len);
	/* the input is the fuzzer's until the agent is done with it */
	pthread_mutex_lock(&lock);
	while (err != -ECONNREFUSED && err != -ENOENT && served < want)
		pthread_cond_wait(&served_cond, &lock);
	reply = NULL;
	reply_len = 0;
	pthread_mutex_unlock(&lock);
	if (err == 0 && (!got || len > size))
		abort();	/* more bytes than the peer sent */
	if (err > 0)
		abort();
	free(got);

	if (!socketpair(AF_UNIX, SOCK_STREAM, 0, sv)) {
		if (size && send(sv[0], data, size < 4096 ? size : 4096, MSG_NOSIGNAL) < 0)
			abort();
		shutdown(sv[0], SHUT_WR);
		err = vmctx_fetch_read_request(sv[1], 200, &span);
		if (err > 0)
			abort();
		close(sv[0]);
		close(sv[1]);
	}
	return 0;
}
