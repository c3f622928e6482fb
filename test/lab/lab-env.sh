# SPDX-License-Identifier: GPL-2.0
# Sourced by the lab scripts: locations and small helpers.  Every location
# can be overridden from the environment.

LAB_SRC=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
REPO_TOP=$(cd "$LAB_SRC/../.." && pwd)
PATCH_DIR=${VMCTX_PATCH_DIR:-$REPO_TOP/kernel-patches}
LAB_DIR=${VMCTX_LAB_DIR:-$HOME/.cache/vmctx-lab}
LINUX_TARBALL=${VMCTX_LINUX_TARBALL:-/usr/src/linux-source-6.1.tar.xz}
JOBS=${VMCTX_LAB_JOBS:-2}
export CCACHE_DIR=${CCACHE_DIR:-$LAB_DIR/ccache}

# Trees: src/<flavour> is the unpacked (and for "patched", patched) source,
# out/<flavour> the kernel build, tools/ the static lab programs.
TOOLS_DIR=$LAB_DIR/tools
RESULTS_DIR=${VMCTX_LAB_RESULTS:-$LAB_DIR/results}

log() { printf '[lab %(%H:%M:%S)T] %s\n' -1 "$*" >&2; }
die() { log "ERROR: $*"; exit 1; }
