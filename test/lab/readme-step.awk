# SPDX-License-Identifier: GPL-2.0
# awk -v n=N -f readme-step.awk README.md: the lines of the code block(s)
# of step N of the README's "On a real KVM host", unindented, as a user
# reads them.  The lab's readme run (run-linux-lab.sh, steps 4 and 5) and
# the package test (test/pkg/check-debian.sh, steps 1 and 2) run them.
/^## / { in_sec = ($0 == "## On a real KVM host") }
in_sec && /^[0-9]+\. / { step = $1 + 0 }
in_sec && step == n && /^ *```/ { block = !block; next }
in_sec && step == n && block { sub(/^ +/, ""); print }
