#!/bin/sh
# SPDX-License-Identifier: LGPL-2.1-only
# plugin_vmctx.so calls only the libtraceevent functions that perf exports
# to plugins when it is built with its own copy of libtraceevent (Linux 6.1,
# Debian's /usr/bin/perf: tools/perf/Makefile.perf's dynamic list, made of
# what the in-tree plugins use).  Anything else fails to load in that perf.
set -eu
builddir=${top_builddir:-.}
so="$builddir/perf-plugin/.libs/plugin_vmctx.so"
[ -f "$so" ] || { echo "check-plugin-imports: $so not built" >&2; exit 1; }
allowed='
tep_find_any_field tep_find_field tep_find_function tep_find_function_address
tep_get_field_raw tep_get_field_val tep_get_long_size tep_is_file_bigendian
tep_is_local_bigendian tep_plugin_add_options tep_plugin_remove_options
tep_print_func_field tep_print_num_field tep_read_number tep_read_number_field
tep_register_comm tep_register_event_handler tep_register_print_function
tep_unregister_event_handler tep_unregister_print_function trace_seq_printf
trace_seq_putc trace_seq_puts trace_seq_terminate
'
rc=0
n=0
for sym in $(nm -D --undefined-only "$so" | awk '$2 ~ /^(tep_|trace_seq_)/ { print $2 }'); do
	n=$((n + 1))
	case " $(echo $allowed) " in
	*" $sym "*) ;;
	*) echo "check-plugin-imports: $sym is not exported by perf 6.1 to plugins" >&2; rc=1 ;;
	esac
done
[ "$n" -gt 0 ] || { echo "check-plugin-imports: no libtraceevent imports found in $so" >&2; exit 1; }
[ "$rc" = 0 ] && echo "check-plugin-imports: $n libtraceevent imports, all exported by perf"
exit $rc
