// SPDX-License-Identifier: GPL-2.0
/*
 * An agent's end of a fetch (vmctx_fetch(3)) for the perf checks, with no
 * guest: serve-bundle SOCKET FILE N answers N requests on the Unix socket
 * SOCKET with FILE's bytes (an error, when FILE is "-"), printing each
 * request's span in ns, then exits.  It gives up after 30 s.
 */
#include <errno.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>
#include <vmctx.h>

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
	if (strcmp(argv[2], "-")) {
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
			vmctx_fetch_write_reply(fd, data, len, data ? 0 : -ENOENT, 2000);
		}
		close(fd);
	}
	unlink(argv[1]);
	free(data);
	return 0;
}
