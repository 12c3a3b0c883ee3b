#!/usr/bin/python3
# SPDX-License-Identifier: GPL-2.0
"""The compatibility matrix's Python job: threads, a subprocess and an HTTP
client against a local server, and the result in a file when one is named.
py-job.py URL [RESULT]"""
import hashlib
import subprocess
import sys
import threading
import urllib.request

squares = []
lock = threading.Lock()


def work(i):
    with lock:
        squares.append(i * i)


threads = [threading.Thread(target=work, args=(i,)) for i in range(4)]
for t in threads:
    t.start()
for t in threads:
    t.join()
print("threads", sorted(squares))
child = subprocess.run(["/bin/busybox", "echo", "from a child"], capture_output=True,
                       text=True, check=True)
print("subprocess", child.returncode, child.stdout.strip())
with urllib.request.urlopen(sys.argv[1], timeout=60) as r:
    body = r.read()
    print("http", r.status, len(body), hashlib.sha256(body).hexdigest())
if len(sys.argv) > 2:
    with open(sys.argv[2], "w") as f:
        f.write(hashlib.sha256(body).hexdigest() + "\n")
