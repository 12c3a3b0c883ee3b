#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
#
# Certificates for an etcd with client-certificate auth (mutual TLS), made
# at run time with openssl (tools/build/deps.sh installs it):
#
#   make-certs.sh DIR
#
# DIR/ca.crt (a CA of one day), DIR/server.{crt,key} (for IP 127.0.0.1)
# and DIR/client.{crt,key}, all signed by it. Exit 1 if openssl fails.
set -eu
d=$1
mkdir -p "$d"
ec="-newkey ec -pkeyopt ec_paramgen_curve:prime256v1 -nodes"
# shellcheck disable=SC2086
openssl req -x509 $ec -days 1 -subj /CN=capfence-test-ca \
	-keyout "$d/ca.key" -out "$d/ca.crt" 2>/dev/null
printf 'subjectAltName=IP:127.0.0.1\nextendedKeyUsage=serverAuth,clientAuth\n' > "$d/ext"
for c in server client; do
	# shellcheck disable=SC2086
	openssl req $ec -subj "/CN=$c" -keyout "$d/$c.key" -out "$d/$c.csr" 2>/dev/null
	openssl x509 -req -in "$d/$c.csr" -CA "$d/ca.crt" -CAkey "$d/ca.key" -CAcreateserial \
		-days 1 -extfile "$d/ext" -out "$d/$c.crt" 2>/dev/null
done
rm -f "$d"/*.csr "$d/ext" "$d/ca.srl"
