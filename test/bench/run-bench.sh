#!/bin/sh
# SPDX-License-Identifier: LGPL-2.1-only
# Timeline benchmark: 1 M and 10 M samples (64 vCPUs, 8 VMs, 16 pCPUs),
# with and without resolution.  Peak RSS must not grow with the sample
# count; the figures are printed, not asserted (a loaded machine is slow).
# Then the per-sample cost of 4,096 vCPUs on 256 pCPUs against 64 on 16.
# Then the lookup benchmark beside it, if built: small against large bundles.
set -eu
bench=${1:-test/bench/bench-timeline}
for n in 1000000 10000000; do
	"$bench" -n "$n" --no-resolve
	"$bench" -n "$n"
done
# Per-sample cost with many vCPUs per pCPU: 4,096 vCPUs on 256 pCPUs
# against 64 on 16 (the target: at most 2x).
"$bench" -n 1000000 --vcpus-per-vm 8 --pcpus 16
"$bench" -n 1000000 --vcpus-per-vm 512 --pcpus 256
lookup=$(dirname "$bench")/bench-lookup
if [ -x "$lookup" ]; then
	"$lookup"
else
	echo "bench-lookup not built: make test/bench/bench-lookup"
fi
