// SPDX-License-Identifier: LGPL-2.1-only
/*
 * Small helpers shared by the library's source files.
 */
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>

#include "vmctx-local.h"

int vmctx_grow(void **arr, size_t *cap, size_t need, size_t size)
{
	size_t ncap;
	void *p;

	if (need <= *cap)
		return 0;
	if (!size)
		return -EINVAL;
	/* Double, so that appending n elements costs O(n) copies. */
	ncap = *cap > SIZE_MAX / 2 ? SIZE_MAX : *cap * 2;
	if (ncap < need)
		ncap = need;
	if (ncap < 8)
		ncap = 8;
	if (ncap > SIZE_MAX / size) {
		ncap = SIZE_MAX / size;
		if (ncap < need)
			return -ENOMEM;
	}
	p = realloc(*arr, ncap * size);
	if (!p)
		return -ENOMEM;
	*arr = p;
	*cap = ncap;
	return 0;
}
