// SPDX-License-Identifier: GPL-2.0
/*
 * An agent's end of a fetch (vmctx_fetch(3)) for the perf checks, with no
 * guest: serve-bundle SOCKET FILE N answers N requests on the Unix socket
 * SOCKET with FILE's bytes (an error, when FILE is "-"), printing each
 * request's span in ns, then exits.  It gives up after 30 s.
 *
 * Or a hostile agent, FILE being one of: @garbage, a reply of 100,000
 * bytes that are no bundle; @slow, the reply line a byte a second; @huge,
 * a reply that says 4 GiB follow, then as many zeros as are read; @cut, a
 * reply that says 100,000 bytes and closes after 5,000.
 */
#include <errno.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <signal.h>
#include <unistd.h>
#include <vmctx.h>

/* The hostile replies (FILE "@MODE"); 0, or -1 for an unknown mode. */
static int hostile(int fd, const char *mode)
{
	static char buf[100000];
	const char *line;
	size_t i;

	memset(buf, 0x5a, sizeof(buf));
	if (!strcmp(mode, "garbage")) {
		line = "vmctx-bundle 1 100000\n";
		if (write(fd, line, strlen(line)) < 0 || write(fd, buf, sizeof(buf)) < 0)
			return 0;
	} else if (!strcmp(mode, "slow")) {
		line = "vmctx-bundle 1 100000\n";
		for (i = 0; i < strlen(line); i++) {
			if (write(fd, line + i, 1) != 1)
				return 0;
			sleep(1);
		}
	} else if (!strcmp(mode, "huge")) {
		line = "vmctx-bundle 1 4294967296\n";
		if (write(fd, line, strlen(line)) < 0)
			return 0;
		memset(buf, 0, sizeof(buf));
		for (i = 0; i < 4294967296 / sizeof(buf); i++)
			if (write(fd, buf, sizeof(buf)) < 0)
				break;
	} else if (!strcmp(mode, "cut")) {
		line = "vmctx-bundle 1 100000\n";
		if (write(fd, line, strlen(line)) < 0 || write(fd, buf, 5000) < 0)
			return 0;
	} else {
		return -1;
	}
	return 0;
}

int main(int argc, char **argv)
{
	struct sockaddr_un un = { .sun_family = AF_UNIX };
	size_t len = 0, cap = 0;
	char *data = NULL;
	int lfd, fd, n, i;
	uint64_t span;
	FILE *f;

	if (argc != 4 || strlen(argv[1]) >= sizeof(un.sun_path)) {
		fprintf(stderr, "usage: serve-bundle SOCKET FILE|- N\n");
		return 2;
	}
	if (strcmp(argv[2], "-") && argv[2][0] != '@') {
		f = fopen(argv[2], "rb");
		if (!f) {
			perror(argv[2]);
			return 2;
		}
		for (;;) {
			if (len == cap && !(data = realloc(data, cap = cap ? 2 * cap : 65536)))
				return 2;
			n = fread(data + len, 1, cap - len, f);
			if (n <= 0)
				break;
			len += n;
		}
		fclose(f);
	}
	signal(SIGPIPE, SIG_IGN);
	strcpy(un.sun_path, argv[1]);
	unlink(argv[1]);
	lfd = socket(AF_UNIX, SOCK_STREAM, 0);
	if (lfd < 0 || bind(lfd, (struct sockaddr *)&un, sizeof(un)) || listen(lfd, 4)) {
		perror(argv[1]);
		return 2;
	}
	for (i = 0; i < atoi(argv[3]); i++) {
		struct pollfd p = { .fd = lfd, .events = POLLIN };

		if (poll(&p, 1, 30000) != 1)
			break;
		fd = accept(lfd, NULL, NULL);
		if (fd < 0)
			break;
		if (!vmctx_fetch_read_request(fd, 2000, &span)) {
			printf("span_ns %llu\n", (unsigned long long)span);
			fflush(stdout);
			if (argv[2][0] == '@') {
				if (hostile(fd, argv[2] + 1)) {
					fprintf(stderr, "serve-bundle: no mode %s\n", argv[2]);
					return 2;
				}
			} else {
				vmctx_fetch_write_reply(fd, data, len, data ? 0 : -ENOENT, 2000);
			}
		}
		close(fd);
	}
	unlink(argv[1]);
	free(data);
	return 0;
}
