#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
# The ecosystem tests of one VM boot (make ecotest): genl against the YAML
# spec, the kernel's ynl driving the module with it (the Python overlay),
# the audit tools reading a capfence denial, then capfence --version
# (which unloads and reloads the module, so it runs last).
S=/usr/share/capfence
rc=0
for t in genl-test.sh ynl-test.py audit-test.sh version-test.sh; do
	echo "# $t"
	case $t in
	*.py) python3 "$S/$t" || rc=1 ;;
	*) sh "$S/$t" || rc=1 ;;
	esac
done
exit $rc
