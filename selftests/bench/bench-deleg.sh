#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
# make bench, in the guest (with the Python overlay): delegations per
# second through libcapfence (one handle, one thread), through the Python
# package, and through the CLI (one process per call), in this one boot.
# Prints "bench:" lines: the three rates and the two ratios to the CLI
# (targets: library >= 50x, Python >= 10x).
cd /usr/share/capfence/bench || exit 1
# into a file: the bound sleeper inherits the descriptor, and a command
# substitution would wait for it to close
./bench-deleg setup > /tmp/setup.out || exit 1
read -r tok pid < /tmp/setup.out
[ -n "$pid" ] || { echo "bench-deleg: setup failed"; exit 1; }
echo "# guest: $(uname -r), $(grep -c ^processor /proc/cpuinfo) vCPUs; delegating one fs:read token to pid $pid"
./bench-deleg cli "$tok" "$pid" ${BENCH_CLI_N:-300} > /tmp/cli.out || exit 1
./bench-deleg lib "$tok" "$pid" ${BENCH_SECS:-3} > /tmp/lib.out || exit 1
python3 bench_deleg.py "$tok" "$pid" ${BENCH_SECS:-3} > /tmp/py.out || exit 1
kill "$pid"
cat /tmp/cli.out /tmp/lib.out /tmp/py.out | grep '^#'
cli=$(sed -n 's/^rate cli //p' /tmp/cli.out)
lib=$(sed -n 's/^rate lib //p' /tmp/lib.out)
py=$(sed -n 's/^rate python //p' /tmp/py.out)
echo "bench: deleg_per_s_cli value=$cli target=- ok"
echo "bench: deleg_per_s_lib value=$lib target=- ok"
echo "bench: deleg_per_s_python value=$py target=- ok"
awk -v l="$lib" -v p="$py" -v c="$cli" 'BEGIN {
	rl = l / c; rp = p / c
	printf "bench: deleg_lib_vs_cli value=%.0fx target=>=50x %s\n", rl, (rl >= 50 ? "ok" : "MISS")
	printf "bench: deleg_python_vs_cli value=%.0fx target=>=10x %s\n", rp, (rp >= 10 ? "ok" : "MISS")
}'
