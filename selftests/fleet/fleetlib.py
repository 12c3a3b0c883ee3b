# SPDX-License-Identifier: GPL-2.0
"""The host side of the fleet tests: an etcd cluster on loopback, test VMs
with a network to it, a control channel and a monitor, and the history of
what the test did (for lincheck)."""

import base64
import json
import os
import shutil
import signal
import socket
import subprocess
import threading
import time
import urllib.request

TOP = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))
BUILD = os.environ.get("CAPFENCE_BUILD", os.path.join(TOP, "build"))


class FleetError(Exception):
    pass


def free_ports(n):
    socks, ports = [], []
    for _ in range(n):
        s = socket.socket()
        s.bind(("127.0.0.1", 0))
        socks.append(s)
        ports.append(s.getsockname()[1])
    for s in socks:
        s.close()
    return ports


def now():
    """The host clock every interval of the history is measured on."""
    return time.monotonic()


class EtcdCluster:
    """N etcd members on loopback, each with its data dir and log under
    workdir; the test starts, kills, restarts and stops them."""

    def __init__(self, workdir, n=3):
        self.workdir = workdir
        self.n = n
        ports = free_ports(2 * n)
        self.client = ports[:n]
        self.peer = ports[n:]
        self.procs = [None] * n
        self.token = "capfence-fleet-%d" % os.getpid()
        self.names = ["m%d" % i for i in range(n)]
        # where etcd and etcdctl come from: PATH (Debian 12's 3.4), or a
        # directory of another release once restore() moved onto it
        self.bindir = None

    def _bin(self, name):
        return os.path.join(self.bindir, name) if self.bindir else name

    @property
    def hostports(self):
        return ["127.0.0.1:%d" % p for p in self.client]

    @property
    def endpoints(self):
        return ",".join("http://" + h for h in self.hostports)

    def _cmd(self, i, state):
        initial = ",".join("%s=http://127.0.0.1:%d" % (self.names[j], self.peer[j])
                           for j in range(self.n))
        return [self._bin("etcd"), "--name", self.names[i],
                "--data-dir", os.path.join(self.workdir, self.names[i]),
                "--listen-client-urls", "http://127.0.0.1:%d" % self.client[i],
                "--advertise-client-urls", "http://127.0.0.1:%d" % self.client[i],
                "--listen-peer-urls", "http://127.0.0.1:%d" % self.peer[i],
                "--initial-advertise-peer-urls", "http://127.0.0.1:%d" % self.peer[i],
                "--initial-cluster", initial,
                "--initial-cluster-state", state,
                "--initial-cluster-token", self.token,
                "--heartbeat-interval", "100", "--election-timeout", "1000",
                "--snapshot-count", "1000"]

    def _spawn(self, i, state):
        log = open(os.path.join(self.workdir, self.names[i] + ".log"), "ab")
        self.procs[i] = subprocess.Popen(self._cmd(i, state), stdout=log, stderr=log,
                                         stdin=subprocess.DEVNULL)
        log.close()

    def start(self, timeout=30):
        os.makedirs(self.workdir, exist_ok=True)
        for i in range(self.n):
            self._spawn(i, "new")
        self.wait_healthy(range(self.n), timeout)

    def healthy(self, i):
        try:
            with urllib.request.urlopen("http://127.0.0.1:%d/health" % self.client[i],
                                        timeout=2) as r:
                return json.load(r).get("health") == "true"
        except Exception:
            return False

    def wait_healthy(self, members, timeout=30):
        end = time.time() + timeout
        for i in members:
            while not self.healthy(i):
                if self.procs[i] is None or self.procs[i].poll() is not None:
                    raise FleetError("etcd member %s exited; see %s.log" %
                                     (self.names[i], self.names[i]))
                if time.time() > end:
                    raise FleetError("etcd member %s not healthy within %ds" %
                                     (self.names[i], timeout))
                time.sleep(0.2)

    def kill(self, i):
        p = self.procs[i]
        if p and p.poll() is None:
            p.send_signal(signal.SIGKILL)
            p.wait()
        self.procs[i] = None

    def restart(self, i, timeout=30):
        self.kill(i)
        self._spawn(i, "existing")
        self.wait_healthy([i], timeout)

    def stop(self):
        for i, p in enumerate(self.procs):
            if p and p.poll() is None:
                p.terminate()
        for i, p in enumerate(self.procs):
            if p:
                try:
                    p.wait(10)
                except subprocess.TimeoutExpired:
                    p.kill()
                    p.wait()
            self.procs[i] = None

    def ctl(self, *args, timeout=20, endpoints=None):
        """etcdctl (API v3) against the live members; its output."""
        env = dict(os.environ, ETCDCTL_API="3")
        eps = endpoints or ",".join("http://127.0.0.1:%d" % self.client[i]
                                    for i in range(self.n) if self.procs[i])
        r = subprocess.run([self._bin("etcdctl"), "--endpoints", eps, "--command-timeout=%ds" % timeout]
                           + list(args), capture_output=True, text=True, env=env,
                           timeout=timeout + 5)
        if r.returncode != 0:
            raise FleetError("etcdctl %s: %s" % (" ".join(args), r.stderr.strip()))
        return r.stdout

    def snapshot_save(self, path):
        """A backup as an operator takes one (`etcdctl snapshot save`, from one member)."""
        self.ctl("snapshot", "save", path, endpoints="http://127.0.0.1:%d" % self.client[0])

    def restore(self, path, timeout=30, bindir=None, bump=0):
        """Disaster recovery as etcd documents it: every member stopped, its
        data directory made anew from one backup (a new cluster), every
        member started on it. With bindir (etcd 3.5's etcd and etcdutl),
        the members come back on that release, restored by `etcdutl
        snapshot restore --bump-revision BUMP --mark-compacted`; else by
        3.4's `etcdctl snapshot restore`, which has neither option."""
        self.stop()
        if bindir:
            self.bindir = bindir
        self.token += "-restored"
        initial = ",".join("%s=http://127.0.0.1:%d" % (self.names[j], self.peer[j])
                           for j in range(self.n))
        for i in range(self.n):
            d = os.path.join(self.workdir, self.names[i])
            shutil.rmtree(d, ignore_errors=True)
            tool = [self._bin("etcdutl")] if bindir else [self._bin("etcdctl")]
            extra = ["--bump-revision", str(bump), "--mark-compacted"] if bump else []
            r = subprocess.run(tool + ["snapshot", "restore", path, "--name", self.names[i],
                                       "--data-dir", d, "--initial-cluster", initial,
                                       "--initial-cluster-token", self.token,
                                       "--initial-advertise-peer-urls",
                                       "http://127.0.0.1:%d" % self.peer[i]] + extra,
                               capture_output=True, text=True, env=dict(os.environ, ETCDCTL_API="3"),
                               timeout=60)
            if r.returncode != 0:
                raise FleetError("%s snapshot restore (%s): %s" %
                                 (os.path.basename(tool[0]), self.names[i], r.stderr.strip()))
        for i in range(self.n):
            self._spawn(i, "new")
        self.wait_healthy(range(self.n), timeout)

    def revision(self):
        out = json.loads(self.ctl("endpoint", "status", "-w", "json"))
        return max(int(e["Status"]["header"]["revision"]) for e in out)


class Guest:
    """One test VM: selftests/vm/run in the background with --etcd, --ctl
    and --monitor; the guest runs `fleet-guest serve`."""

    def __init__(self, name, workdir, cluster, kernel="6.1", adds=(), timeout=900, extra_etcd=()):
        self.name = name
        self.extra_etcd = list(extra_etcd)
        self.workdir = workdir
        self.ctl_path = os.path.join(workdir, name + ".ctl")
        self.mon_path = os.path.join(workdir, name + ".mon")
        self.log_path = os.path.join(workdir, name + ".console")
        self.cluster = cluster
        self.kernel = kernel
        self.adds = list(adds)
        self.timeout = timeout
        self.proc = None
        self.sock = None
        self.buf = b""
        self.seq = 0
        self.lock = threading.Lock()

    def start(self):
        cmd = [os.path.join(TOP, "selftests/vm/run"), "--kernel", self.kernel,
               "--timeout", str(self.timeout),
               "--etcd", ",".join(self.cluster.hostports + self.extra_etcd),
               "--ctl", self.ctl_path, "--monitor", self.mon_path,
               "--add", os.path.join(TOP, "selftests/fleet/fleet-guest") + ":/usr/bin/fleet-guest"]
        for a in self.adds:
            cmd += ["--add", a]
        cmd += ["--", "fleet-guest", "serve"]
        env = dict(os.environ)
        env.setdefault("CAPFENCE_VM_SMP", "1")
        env.setdefault("CAPFENCE_VM_MEM", "1024")
        log = open(self.log_path, "wb")
        self.proc = subprocess.Popen(cmd, stdout=log, stderr=subprocess.STDOUT,
                                     stdin=subprocess.DEVNULL, env=env,
                                     start_new_session=True)
        log.close()

    def connect(self, timeout=300):
        """Wait for the guest's server: the first answered request."""
        end = time.time() + timeout
        while True:
            if self.proc.poll() is not None:
                raise FleetError("%s: the VM exited (%d) before serving; see %s" %
                                 (self.name, self.proc.returncode, self.log_path))
            if time.time() > end:
                raise FleetError("%s: no control channel within %ds" % (self.name, timeout))
            try:
                s = socket.socket(socket.AF_UNIX)
                s.connect(self.ctl_path)
                self.sock = s
                self.buf = b""
                rc, _, _, _ = self.run("true", timeout=5)
                if rc == 0:
                    return
            except (OSError, FleetError):
                self.sock = None
            time.sleep(1)

    def _readline(self, deadline):
        while b"\n" not in self.buf:
            left = deadline - time.time()
            if left <= 0:
                raise FleetError("%s: control channel timeout" % self.name)
            self.sock.settimeout(left)
            try:
                d = self.sock.recv(65536)
            except socket.timeout:
                continue
            if not d:
                raise FleetError("%s: control channel closed" % self.name)
            self.buf += d
        line, self.buf = self.buf.split(b"\n", 1)
        return line.decode(errors="replace")

    def run(self, command, timeout=60):
        """Run a shell command in the guest: (rc, output, t_invoke, t_return)
        in host time."""
        with self.lock:
            self.seq += 1
            sid = "%d" % self.seq
            msg = "%s %s\n" % (sid, base64.b64encode(command.encode()).decode())
            t0 = now()
            self.sock.sendall(msg.encode())
            deadline = time.time() + timeout
            out = []
            while True:
                line = self._readline(deadline)
                if line.startswith(sid + "| "):
                    out.append(line[len(sid) + 2:])
                elif line.startswith(sid + " rc="):
                    t1 = now()
                    return int(line.split("=", 1)[1]), "\n".join(out), t0, t1
                # replies to an earlier request that timed out are skipped

    def check(self, command, timeout=60):
        rc, out, _, _ = self.run(command, timeout)
        if rc != 0:
            raise FleetError("%s: `%s` exited %d: %s" % (self.name, command, rc, out[-500:]))
        return out

    def monitor(self, command):
        s = socket.socket(socket.AF_UNIX)
        s.settimeout(10)
        s.connect(self.mon_path)
        data = b""
        while not data.endswith(b"(qemu) "):
            data += s.recv(4096)
        s.sendall(command.encode() + b"\n")
        data = b""
        while not data.endswith(b"(qemu) "):
            data += s.recv(4096)
        s.close()
        return data.decode(errors="replace")

    def link(self, up):
        self.monitor("set_link net0 %s" % ("on" if up else "off"))

    def stop(self, rc=0, timeout=60):
        if self.sock:
            try:
                with self.lock:
                    self.sock.sendall(("0 exit %d\n" % rc).encode())
            except OSError:
                pass
        if self.proc:
            try:
                self.proc.wait(timeout)
            except subprocess.TimeoutExpired:
                os.killpg(self.proc.pid, signal.SIGTERM)
                try:
                    self.proc.wait(10)
                except subprocess.TimeoutExpired:
                    os.killpg(self.proc.pid, signal.SIGKILL)
                    self.proc.wait()
        return self.proc.returncode if self.proc else None


class History:
    """Operations with host-time intervals, for lincheck. An entry is a dict:
    {"op": "revoke", "cap": C, "t0": .., "t1": .., "ok": bool}
    {"op": "exercise", "host": H, "cap": C, "t0": .., "t1": .., "allowed": bool}
    """

    def __init__(self):
        self.ops = []
        self.lock = threading.Lock()

    def add(self, **op):
        with self.lock:
            self.ops.append(op)

    def dump(self, path):
        with open(path, "w") as f:
            json.dump(self.ops, f, indent=1)


class LyingEtcd:
    """A man in the middle on one host's path to etcd (what sits on an
    unauthenticated http:// path, or a compromised member): an HTTP proxy
    to the cluster's v3 JSON gateway that is honest until withhold(key),
    then drops that key from every watch event and range answer (a
    limited range is answered as if the key did not exist) and answers
    every read of the head with the one it saw when it started lying.
    rewrite(key, rev) changes only the mod_revision of key's watch events
    (once: of the next one); forge() shows a client the head as it is now
    and answers every transaction "succeeded" without sending it on."""

    def __init__(self, cluster, head_key):
        import http.server

        self.cluster = cluster
        self.head_key = head_key
        self.withheld = None
        self.frozen = None
        self.rewrites = {}
        self.forging = False
        self.lock = threading.Lock()
        proxy = self

        class Handler(http.server.BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, *a):
                pass

            def do_POST(self):
                body = self.rfile.read(int(self.headers.get("Content-Length", "0")))
                try:
                    proxy.forward(self, body)
                except OSError:
                    self.close_connection = True

        self.server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.server.daemon_threads = True
        self.port = self.server.server_address[1]
        self.thread = threading.Thread(target=self.server.serve_forever, daemon=True)
        self.thread.start()

    @property
    def hostport(self):
        return "127.0.0.1:%d" % self.port

    def withhold(self, key):
        """Start lying: key disappears (None: none), the head freezes as it is now."""
        req = json.dumps({"key": base64.b64encode(self.head_key.encode()).decode()}).encode()
        status, data = self.upstream("/v3/kv/range", req)
        kvs = json.loads(data).get("kvs", [])
        with self.lock:
            self.frozen = kvs[0] if kvs else None
            self.withheld = key if key is not None else ""

    def release(self):
        with self.lock:
            self.withheld = None
            self.frozen = None
            self.rewrites = {}
            self.forging = False

    def rewrite(self, key, rev, once=False):
        """key's watch events carry mod_revision rev (once: the next one only)."""
        with self.lock:
            self.rewrites[key] = (rev, once)

    def forge(self):
        """Freeze the head a client sees and fake every commit's success."""
        self.withhold(None)
        with self.lock:
            self.forging = True

    def rewritten(self, kv):
        key = base64.b64decode(kv.get("key", "")).decode(errors="replace")
        with self.lock:
            rw = self.rewrites.get(key)
            if rw and rw[1]:
                del self.rewrites[key]
        if rw:
            kv["mod_revision"] = str(rw[0])

    def stop(self):
        self.server.shutdown()
        self.server.server_close()

    def connect(self, timeout):
        import http.client

        last = None
        for i in range(self.cluster.n):
            if not self.cluster.procs[i]:
                continue
            c = http.client.HTTPConnection("127.0.0.1", self.cluster.client[i], timeout=timeout)
            try:
                c.connect()
                return c
            except OSError as e:
                last = e
        raise OSError("no etcd member answers: %s" % last)

    def upstream(self, path, body):
        c = self.connect(10)
        try:
            c.request("POST", path, body, {"Content-Type": "application/json"})
            r = c.getresponse()
            return r.status, r.read()
        finally:
            c.close()

    def hidden(self, kv):
        with self.lock:
            w = self.withheld
        return w is not None and base64.b64decode(kv.get("key", "")).decode(errors="replace") == w

    def forward(self, h, body):
        if h.path == "/v3/watch":
            return self.watch(h, body)
        with self.lock:
            forging = self.forging
        if forging and h.path == "/v3/kv/txn":
            # "succeeded", at the store's next revision, and nothing written
            status, data = self.upstream("/v3/kv/range", json.dumps(
                {"key": base64.b64encode(self.head_key.encode()).decode()}).encode())
            rev = int(json.loads(data).get("header", {}).get("revision", "0")) + 1
            return self.reply(h, 200, json.dumps({"header": {"revision": str(rev)},
                                                  "succeeded": True, "responses": []}).encode())
        req = None
        if h.path == "/v3/kv/range":
            try:
                req = json.loads(body)
            except ValueError:
                req = None
        with self.lock:
            lying = self.withheld is not None
        limit = 0
        if lying and req is not None:
            key = base64.b64decode(req.get("key", "")).decode(errors="replace")
            if key == self.head_key:
                with self.lock:
                    frozen = self.frozen
                status, data = self.upstream(h.path, body)
                resp = json.loads(data)
                resp["kvs"] = [frozen] if frozen else []
                resp["count"] = str(len(resp["kvs"]))
                return self.reply(h, status, json.dumps(resp).encode())
            # answer as if the withheld key did not exist
            limit = int(req.pop("limit", 0) or 0)
            body = json.dumps(req).encode()
        status, data = self.upstream(h.path, body)
        if lying and req is not None and status == 200:
            resp = json.loads(data)
            kvs = [kv for kv in resp.get("kvs", []) if not self.hidden(kv)]
            if limit:
                resp["more"] = len(kvs) > limit
                kvs = kvs[:limit]
            resp["kvs"] = kvs
            resp["count"] = str(len(kvs))
            data = json.dumps(resp).encode()
        return self.reply(h, status, data)

    @staticmethod
    def reply(h, status, data):
        h.send_response(status)
        h.send_header("Content-Type", "application/json")
        h.send_header("Content-Length", str(len(data)))
        h.end_headers()
        h.wfile.write(data)

    def watch(self, h, body):
        c = self.connect(None)
        try:
            c.request("POST", "/v3/watch", body, {"Content-Type": "application/json"})
            r = c.getresponse()
            h.send_response(r.status)
            h.send_header("Content-Type", "application/json")
            h.send_header("Transfer-Encoding", "chunked")
            h.end_headers()
            while True:
                line = r.readline()
                if not line:
                    break
                try:
                    msg = json.loads(line)
                except ValueError:
                    continue
                res = msg.get("result", {})
                evs = res.get("events")
                for e in evs or []:
                    self.rewritten(e.get("kv", {}))
                if evs:
                    keep = [e for e in evs if not self.hidden(e.get("kv", {}))]
                    if not keep:
                        continue
                    res["events"] = keep
                out = json.dumps(msg).encode() + b"\n"
                h.wfile.write(b"%x\r\n%s\r\n" % (len(out), out))
                h.wfile.flush()
            h.wfile.write(b"0\r\n\r\n")
        finally:
            c.close()
            h.close_connection = True
