#!/usr/bin/env python3
"""fakecri: an in-memory CRI runtime (runtime.v1) served with grpcio on a unix socket.

A believable container runtime for tests: sandboxes, containers with a simulated
life (exit codes, reasons, timestamps), images, ExecSync, filters on List calls,
GetContainerEvents, and scriptable faults through a JSON-lines control socket.
Conventions and control commands: tests/fakecri/README.

Run: tests/fakecri/run.sh --socket PATH [options]   (or embed: FakeCRI(...).start())
"""
import argparse
import base64
import hashlib
import json
import os
import queue
import re
import shlex
import signal
import socket
import sys
import threading
import time
from concurrent import futures

sys.dont_write_bytecode = True
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

import grpc  # noqa: E402  python3-grpcio
from google.protobuf import json_format  # noqa: E402

import cripb  # noqa: E402

pb, pb_grpc = cripb.load()

DEFAULT_IMAGES = ["klet.local/busybox:1.35", "klet.local/pause:3.9"]
MAX_MSG = 64 << 20
SC = grpc.StatusCode


class Abort(Exception):
    def __init__(self, code, msg):
        Exception.__init__(self, msg)
        self.code = code
        self.msg = msg


def now_ns():
    return time.time_ns()


def normalize_image(ref):
    """Docker-style normalization: busybox -> docker.io/library/busybox:latest."""
    if not ref:
        return ref
    if ref.startswith("sha256:"):
        return ref
    name, digest = ref, ""
    if "@" in name:
        name, digest = name.split("@", 1)
    first = name.split("/", 1)[0]
    if "/" not in name:
        name = "docker.io/library/" + name
    elif not ("." in first or ":" in first or first == "localhost"):
        name = "docker.io/" + name
    if digest:
        return name + "@" + digest
    last = name.rsplit("/", 1)[-1]
    if ":" not in last:
        name += ":latest"
    return name


def sha(s):
    return hashlib.sha256(s.encode()).hexdigest()


def varint(n):
    out = bytearray()
    while True:
        b = n & 0x7F
        n >>= 7
        if n:
            out.append(b | 0x80)
        else:
            out.append(b)
            return bytes(out)


class Image:
    def __init__(self, name, size=None, uid=None, username="", pinned=None):
        self.name = normalize_image(name)
        self.id = "sha256:" + sha("image:" + self.name)
        repo = self.name.rsplit(":", 1)[0] if ":" in self.name.rsplit("/", 1)[-1] else self.name
        self.digest = repo + "@sha256:" + sha("manifest:" + self.name)
        self.size = size if size is not None else 1000000 + len(self.name) * 4096
        self.uid = uid
        self.username = username
        self.pinned = pinned if pinned is not None else "pause" in self.name

    def to_pb(self):
        m = pb.Image(id=self.id, repo_tags=[self.name], repo_digests=[self.digest],
                     size=self.size, username=self.username, pinned=self.pinned)
        if self.uid is not None:
            m.uid.value = self.uid
        m.spec.image = self.id
        return m


class Sandbox:
    pass


class Container:
    pass


def script_plan(argv, env):
    """Decides what a container's process does: returns dict(exit_code, after_s, reason,
    ignore_term, fail_start). after_s None means it runs until stopped."""
    plan = {"exit_code": 0, "after_s": None, "reason": None, "ignore_term": False,
            "fail_start": None}
    if env.get("FAKE_IGNORE_TERM") in ("1", "true", "yes"):
        plan["ignore_term"] = True
    if "FAKE_EXIT_CODE" in env:
        plan["exit_code"] = int(env["FAKE_EXIT_CODE"])
        plan["after_s"] = int(env.get("FAKE_EXIT_AFTER_MS", "0")) / 1000.0
    if not argv:
        return plan
    prog = os.path.basename(argv[0])
    args = argv[1:]
    if prog == "fake-exit":
        plan["exit_code"] = int(args[0]) if args else 0
        plan["after_s"] = (int(args[1]) if len(args) > 1 else 0) / 1000.0
    elif prog == "fake-oom":
        plan["exit_code"] = 137
        plan["reason"] = "OOMKilled"
        plan["after_s"] = (int(args[0]) if args else 0) / 1000.0
    elif prog == "fake-ignore-term":
        plan["ignore_term"] = True
    elif prog == "fake-fail-start":
        plan["fail_start"] = " ".join(args) or "fake-fail-start: refused to start"
    elif prog in ("true", "false"):
        plan["exit_code"] = 0 if prog == "true" else 1
        plan["after_s"] = 0.0
    elif prog == "sleep":
        t = parse_sleep(args[0] if args else "0")
        if t is not None:
            plan["after_s"] = t
            plan["exit_code"] = 0
    elif prog in ("sh", "bash", "ash") and len(args) >= 2 and args[0] == "-c":
        r = mini_sh(args[1], dry=True)
        if r is not None:
            plan["exit_code"], plan["after_s"] = r[0], r[3]
        if "trap" in args[1] and "TERM" in args[1]:
            plan["ignore_term"] = True
    return plan


def parse_sleep(s):
    if s in ("inf", "infinity"):
        return None
    m = re.fullmatch(r"([0-9.]+)([smhd]?)", s)
    if not m:
        return None
    mult = {"": 1, "s": 1, "m": 60, "h": 3600, "d": 86400}[m.group(2)]
    return float(m.group(1)) * mult


def mini_sh(script, dry=False):
    """A tiny interpreter for scripts made only of echo/exit/sleep/true/false/:
    separated by ; && || or newlines. Returns (code, stdout, stderr, seconds) or
    None when the script does anything else (it then counts as long-running)."""
    out, err = [], []
    code, secs = 0, 0.0
    for stmt in re.split(r";|&&|\|\||\n", script):
        stmt = stmt.strip()
        if not stmt:
            continue
        try:
            words = shlex.split(stmt)
        except ValueError:
            return None
        w0 = words[0]
        if w0 == "exit":
            return (int(words[1]) if len(words) > 1 else code), "".join(out), "".join(err), secs
        if w0 == "echo":
            if len(words) > 2 and words[-2] == ">&2":
                err.append(" ".join(words[1:-2]) + "\n")
            elif words[-1] == ">&2" or words[-1] == "1>&2":
                err.append(" ".join(words[1:-1]) + "\n")
            else:
                out.append(" ".join(words[1:]) + "\n")
            code = 0
        elif w0 == "sleep":
            t = parse_sleep(words[1] if len(words) > 1 else "0")
            if t is None:
                return None
            secs += t
            code = 0
        elif w0 in ("true", ":"):
            code = 0
        elif w0 == "false":
            code = 1
        elif w0 == "trap":
            continue
        else:
            return None
    return code, "".join(out), "".join(err), secs


class Rule:
    """A fault rule from the control socket."""

    def __init__(self, d):
        self.method = d.get("method", "*")
        self.code = d.get("code")
        self.message = d.get("message")
        self.latency_ms = float(d.get("latency_ms", 0))
        self.hang = bool(d.get("hang", False))
        self.oversize = int(d.get("oversize", 0) if d.get("oversize") is not True
                            else (17 << 20))
        self.garbage = bool(d.get("garbage", False))
        self.drop = bool(d.get("drop", False))
        self.goaway = d.get("goaway")
        self.count = d.get("count")  # None: forever
        self.after = int(d.get("after", 0))
        self.id = d.get("id")

    def matches(self, method):
        return self.method in ("*", method)

    def desc(self):
        return {k: v for k, v in self.__dict__.items() if v not in (None, False, 0, 0.0)}


H2_PREFACE_LEN = 24  # "PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n"


def h2_frame(ftype, flags, sid, payload=b""):
    return len(payload).to_bytes(3, "big") + bytes([ftype, flags]) + \
        (sid & 0x7FFFFFFF).to_bytes(4, "big") + payload


class Pair:
    """One proxied client connection and what the proxy knows of its HTTP/2 streams."""

    def __init__(self, c, u):
        self.c = c
        self.u = u
        self.lock = threading.Lock()  # whole frames only, to the client
        self.max_stream = 0
        self.open = set()  # client streams not yet ended by the server
        self.goaway_last = None  # after an injected GOAWAY: drop server frames above it


class Proxy:
    """Unix-socket proxy in front of the grpc server, HTTP/2 frame aware in the server to
    client direction: it can drop client connections abruptly, refuse connections while
    'down', inject raw frames (h2_inject) and a GOAWAY with a chosen last-stream-id
    (h2_goaway), after which the server's frames for higher streams are dropped."""

    def __init__(self, path, upstream_fn):
        self.path = path
        self.upstream_fn = upstream_fn
        self.lock = threading.Lock()
        self.conns = set()
        self.lsock = None
        self.thread = None
        self.cut_after = None  # armed by "cut": bytes to the client before a cut

    def listen(self):
        try:
            os.unlink(self.path)
        except FileNotFoundError:
            pass
        s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        s.bind(self.path)
        s.listen(128)
        self.lsock = s
        self.thread = threading.Thread(target=self._accept, args=(s,), daemon=True)
        self.thread.start()

    def close_listener(self):
        s, self.lsock = self.lsock, None
        if s:
            try:
                os.unlink(self.path)
            except FileNotFoundError:
                pass
            try:
                s.shutdown(socket.SHUT_RDWR)
            except OSError:
                pass
            s.close()

    def _accept(self, s):
        while True:
            try:
                c, _ = s.accept()
            except OSError:
                return
            try:
                u = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
                u.connect(self.upstream_fn())
            except OSError:
                c.close()
                continue
            pair = Pair(c, u)
            with self.lock:
                self.conns.add(pair)
            threading.Thread(target=self._pump_up, args=(pair,), daemon=True).start()
            threading.Thread(target=self._pump_down, args=(pair,), daemon=True).start()

    def _pump_up(self, pair):
        """client -> server: bytes forwarded as they come; frame headers noted."""
        pre = H2_PREFACE_LEN
        hdr = b""
        skip = 0
        try:
            while True:
                b = pair.c.recv(262144)
                if not b:
                    break
                pair.u.sendall(b)
                mv = memoryview(b)
                if pre:
                    k = min(pre, len(mv))
                    pre -= k
                    mv = mv[k:]
                while len(mv):
                    if skip:
                        k = min(skip, len(mv))
                        skip -= k
                        mv = mv[k:]
                        continue
                    need = 9 - len(hdr)
                    hdr += bytes(mv[:need])
                    mv = mv[need:]
                    if len(hdr) < 9:
                        break
                    skip = int.from_bytes(hdr[0:3], "big")
                    ftype, sid = hdr[3], int.from_bytes(hdr[5:9], "big") & 0x7FFFFFFF
                    hdr = b""
                    if ftype == 0x1 and sid:  # HEADERS opens a stream
                        with pair.lock:
                            pair.open.add(sid)
                            pair.max_stream = max(pair.max_stream, sid)
                    elif ftype == 0x3:  # RST_STREAM
                        with pair.lock:
                            pair.open.discard(sid)
        except OSError:
            pass
        self._kill(pair)

    def _pump_down(self, pair):
        """server -> client: whole frames, so that frames can be injected or dropped."""
        buf = bytearray()
        try:
            while True:
                b = pair.u.recv(262144)
                if not b:
                    break
                buf += b
                out = []
                pos = 0
                n = len(buf)
                while n - pos >= 9:
                    length = int.from_bytes(buf[pos:pos + 3], "big")
                    if n - pos < 9 + length:
                        break
                    ftype, flags = buf[pos + 3], buf[pos + 4]
                    sid = int.from_bytes(buf[pos + 5:pos + 9], "big") & 0x7FFFFFFF
                    frame = bytes(buf[pos:pos + 9 + length])
                    pos += 9 + length
                    last = pair.goaway_last
                    if last is not None and (sid > last or ftype == 0x7):
                        continue  # beyond our GOAWAY (or the server's own GOAWAY)
                    if sid and ((ftype in (0x0, 0x1) and flags & 0x1) or ftype == 0x3):
                        pair.open.discard(sid)
                    out.append(frame)
                del buf[:pos]
                if out:
                    chunk = b"".join(out)
                    cut = None
                    with self.lock:
                        if self.cut_after is not None:
                            if len(chunk) >= self.cut_after:
                                cut, self.cut_after = self.cut_after, None
                            else:
                                self.cut_after -= len(chunk)
                    with pair.lock:
                        pair.c.sendall(chunk if cut is None else chunk[:cut])
                    if cut is not None:
                        break  # mid-frame: the connection ends here
        except OSError:
            pass
        self._kill(pair)

    def _kill(self, pair):
        with self.lock:
            if pair not in self.conns:
                return
            self.conns.discard(pair)
        for s in (pair.c, pair.u):
            try:
                s.shutdown(socket.SHUT_RDWR)
            except OSError:
                pass
            s.close()

    def drop_all(self):
        with self.lock:
            pairs = list(self.conns)
        for p in pairs:
            self._kill(p)
        return len(pairs)

    @staticmethod
    def _pick_stream(pair, which):
        if isinstance(which, int):
            return which
        if which == "min_open":
            return min(pair.open) if pair.open else pair.max_stream
        if which == "max_open":
            return max(pair.open) if pair.open else pair.max_stream
        if which in ("max", "max_seen"):
            return pair.max_stream
        raise ValueError("stream: an int, min_open, max_open or max_seen")

    def inject(self, ftype, flags, sid, payload):
        """Sends one raw frame to every client connection; sid may name a stream kind."""
        with self.lock:
            pairs = list(self.conns)
        for p in pairs:
            with p.lock:
                try:
                    p.c.sendall(h2_frame(ftype, flags, self._pick_stream(p, sid), payload))
                except OSError:
                    pass
        return len(pairs)

    def goaway(self, last, error_code=0, debug=b"", close_after_ms=None):
        """GOAWAY with last-stream-id `last` (int or min_open/max_open/max_seen, default:
        the lowest open stream minus 2, i.e. every open stream is refused) on every
        connection; server frames for higher streams are dropped from then on."""
        with self.lock:
            pairs = list(self.conns)
        lasts = []
        for p in pairs:
            with p.lock:
                if last is None:
                    lid = (min(p.open) - 2) if p.open else p.max_stream
                    lid = max(lid, 0)
                else:
                    lid = self._pick_stream(p, last)
                p.goaway_last = lid
                lasts.append(lid)
                try:
                    p.c.sendall(h2_frame(0x7, 0, 0, lid.to_bytes(4, "big") +
                                         int(error_code).to_bytes(4, "big") + debug))
                except OSError:
                    pass
            if close_after_ms is not None:
                t = threading.Timer(close_after_ms / 1000.0, self._kill, args=(p,))
                t.daemon = True
                t.start()
        return lasts


class FakeCRI:
    def __init__(self, sock, control=None, images=None, pullable=None, proxy=True,
                 events=True, workers=64, ip_prefix="10.88", quiet=True, serve_v1=True):
        self.sock = os.path.abspath(sock)
        self.control_path = control if control is not None else self.sock + ".ctl"
        self.use_proxy = proxy
        self.events_enabled = events
        self.workers = workers
        self.ip_prefix = ip_prefix
        self.quiet = quiet
        self.serve_v1 = serve_v1
        self.lock = threading.RLock()
        self.sandboxes = {}
        self.containers = {}
        self.images = {}
        for n in (images if images is not None else DEFAULT_IMAGES):
            im = Image(n)
            self.images[im.name] = im
        self.pullable = set(normalize_image(n) for n in (pullable or []))
        self.auth_required = {}
        self.exec_rules = []
        self.rules = []
        self.counts = {}
        self.requests = {}
        self.runtime_ready = True
        self.network_ready = True
        self.status_reason = ""
        self.status_message = ""
        self.version = {"version": "0.1.0", "runtime_name": "fakecri",
                        "runtime_version": "0.1.0", "runtime_api_version": "v1"}
        self.seq = 0
        self.ipseq = 1
        self.subscribers = set()
        self.server = None
        self.generation = 0
        self.internal = None
        self.proxy = None
        self.down = False
        self.stopping = threading.Event()
        self.ctl_sock = None
        self.serve_lock = threading.Lock()

    # ---------------------------------------------------------------- plumbing
    def log(self, *a):
        if not self.quiet:
            print("fakecri:", *a, file=sys.stderr, flush=True)

    def _new_id(self, kind):
        with self.lock:
            self.seq += 1
            return sha("%s:%d:%d:%d" % (kind, os.getpid(), self.seq, now_ns()))

    def _handlers(self):
        handlers = []
        if not self.serve_v1:
            return handlers  # like a runtime that only knows v1alpha2: UNIMPLEMENTED
        for sname, sdesc in pb.DESCRIPTOR.services_by_name.items():
            table = {}
            for m in sdesc.methods:
                req_cls = getattr(pb, m.input_type.name)
                impl = getattr(self, "rpc_" + m.name, None)
                ser = self._serialize
                if m.server_streaming:
                    table[m.name] = grpc.unary_stream_rpc_method_handler(
                        self._wrap_stream(m.name, impl), request_deserializer=req_cls.FromString,
                        response_serializer=ser)
                else:
                    table[m.name] = grpc.unary_unary_rpc_method_handler(
                        self._wrap(m.name, impl), request_deserializer=req_cls.FromString,
                        response_serializer=ser)
            handlers.append(grpc.method_handlers_generic_handler("runtime.v1." + sname, table))
        return handlers

    @staticmethod
    def _serialize(r):
        return r if isinstance(r, (bytes, bytearray)) else r.SerializeToString()

    def _record(self, method, req):
        with self.lock:
            self.counts[method] = self.counts.get(method, 0) + 1
            lst = self.requests.setdefault(method, [])
            lst.append(req)
            if len(lst) > 100:
                del lst[0]

    def _pick_rule(self, method):
        with self.lock:
            for r in self.rules:
                if not r.matches(method):
                    continue
                if r.after > 0:
                    r.after -= 1
                    continue
                if r.count is not None:
                    if r.count <= 0:
                        continue
                    r.count -= 1
                return r
        return None

    def _apply_rule_pre(self, r, ctx):
        """Runs the parts of a fault that happen before the real handler. Returns
        a value to send instead of the real answer, or None."""
        if r.latency_ms:
            time.sleep(r.latency_ms / 1000.0)
        if r.drop:
            self.drop_connections()
            self._hang(ctx)
            ctx.abort(SC.UNAVAILABLE, "connection dropped")
        if r.goaway is not None:
            g = r.goaway if isinstance(r.goaway, dict) else {}
            threading.Thread(target=self.goaway, kwargs={
                "grace_ms": g.get("grace_ms", 1000), "restart": g.get("restart", True)},
                daemon=True).start()
        if r.hang:
            self._hang(ctx)
            ctx.abort(SC.CANCELLED, "client went away")
        if r.code:
            ctx.abort(getattr(SC, r.code.upper()), r.message or ("fakecri: injected " + r.code))
        return None

    def _hang(self, ctx):
        while ctx.is_active() and not self.stopping.is_set():
            time.sleep(0.02)

    def _wrap(self, method, impl):
        def handler(req, ctx):
            self._record(method, req)
            r = self._pick_rule(method)
            if r is not None:
                self._apply_rule_pre(r, ctx)
            if impl is None:
                ctx.abort(SC.UNIMPLEMENTED, "unknown method %s for service runtime.v1" % method)
            try:
                resp = impl(req, ctx)
            except Abort as e:
                ctx.abort(e.code, e.msg)
            if r is not None and r.garbage:
                return b"\x0a\xff\xff\xff\xff\x0f\x01"
            if r is not None and r.oversize:
                body = self._serialize(resp)
                pad = r.oversize
                return body + varint((1000 << 3) | 2) + varint(pad) + b"\0" * pad
            return resp
        return handler

    def _wrap_stream(self, method, impl):
        def handler(req, ctx):
            self._record(method, req)
            r = self._pick_rule(method)
            if r is not None:
                self._apply_rule_pre(r, ctx)
            try:
                yield from impl(req, ctx)
            except Abort as e:
                ctx.abort(e.code, e.msg)
        return handler

    def _start_grpc(self):
        self.generation += 1
        if self.use_proxy:
            self.internal = "%s.grpc%d" % (self.sock, self.generation)
        else:
            self.internal = self.sock
        try:
            os.unlink(self.internal)
        except FileNotFoundError:
            pass
        srv = grpc.server(futures.ThreadPoolExecutor(max_workers=self.workers), options=[
            ("grpc.max_receive_message_length", MAX_MSG),
            ("grpc.max_send_message_length", -1),
            ("grpc.so_reuseport", 0),
        ], handlers=self._handlers())
        srv.add_insecure_port("unix:" + self.internal)
        srv.start()
        self.server = srv

    def _stop_grpc(self, grace_s):
        srv, self.server = self.server, None
        old = self.internal
        if srv is not None:
            srv.stop(grace_s).wait()
        if self.use_proxy and old:
            try:
                os.unlink(old)
            except FileNotFoundError:
                pass

    def start(self):
        os.makedirs(os.path.dirname(self.sock) or ".", exist_ok=True)
        self._start_grpc()
        if self.use_proxy:
            self.proxy = Proxy(self.sock, lambda: self.internal)
            self.proxy.listen()
        if self.control_path:
            self._start_control()
        threading.Thread(target=self._ticker, daemon=True).start()
        return self

    def stop(self):
        self.stopping.set()
        if self.proxy:
            self.proxy.close_listener()
            self.proxy.drop_all()
        self._stop_grpc(0.2)
        for p in (self.sock, self.control_path):
            if p:
                try:
                    os.unlink(p)
                except (FileNotFoundError, TypeError):
                    pass
        if self.ctl_sock:
            try:
                self.ctl_sock.close()
            except OSError:
                pass

    # fault actions
    def drop_connections(self):
        if self.proxy:
            return self.proxy.drop_all()
        # without the proxy: abrupt restart of the server
        with self.serve_lock:
            self._stop_grpc(0)
            self._start_grpc()
        return -1

    def goaway(self, grace_ms=1000, restart=True, down_ms=0):
        """GOAWAY: stops the grpc server with a grace period (in-flight calls finish,
        new streams are refused), then serves again (state is kept, as containerd's)."""
        with self.serve_lock:
            self._stop_grpc(grace_ms / 1000.0)
            if self.proxy:
                self.proxy.drop_all()
            if not restart:
                self._go_down()
                return
            if down_ms:
                self._go_down()
                time.sleep(down_ms / 1000.0)
            self._start_grpc()
            self._go_up()

    def _go_down(self):
        self.down = True
        if self.proxy:
            self.proxy.close_listener()
        else:
            try:
                os.unlink(self.sock)
            except FileNotFoundError:
                pass

    def _go_up(self):
        if self.server is None:
            self._start_grpc()
        if self.proxy and self.proxy.lsock is None:
            self.proxy.listen()
        self.down = False

    # ---------------------------------------------------------------- simulation
    def _ticker(self):
        while not self.stopping.wait(0.05):
            self._reap()

    def _reap(self):
        t = now_ns()
        with self.lock:
            for c in list(self.containers.values()):
                if c.state == pb.CONTAINER_RUNNING and c.exit_at is not None and t >= c.exit_at:
                    self._exit(c, c.plan["exit_code"], c.plan["reason"], when=c.exit_at)

    def _exit(self, c, code, reason=None, when=None, message=""):
        c.state = pb.CONTAINER_EXITED
        c.exit_code = code
        c.finished_at = when or now_ns()
        c.reason = reason or ("Completed" if code == 0 else "Error")
        c.message = message
        c.exit_at = None
        self._log_line(c, "stdout", "fakecri: exited with code %d" % code)
        self._event(c, pb.CONTAINER_STOPPED_EVENT)

    def _log_line(self, c, stream, text):
        if not c.log_file:
            return
        try:
            os.makedirs(os.path.dirname(c.log_file), exist_ok=True)
            ts = time.strftime("%Y-%m-%dT%H:%M:%S", time.gmtime()) + ".000000000Z"
            with open(c.log_file, "a") as f:
                f.write("%s %s F %s\n" % (ts, stream, text))
        except OSError:
            pass

    def _event(self, c, etype):
        if not self.subscribers:
            return
        ev = pb.ContainerEventResponse(container_id=c.id, container_event_type=etype,
                                       created_at=now_ns())
        sb = self.sandboxes.get(c.sandbox_id)
        if sb is not None:
            ev.pod_sandbox_status.CopyFrom(self._sandbox_status(sb))
        if etype != pb.CONTAINER_DELETED_EVENT:
            ev.containers_statuses.append(self._container_status(c))
        for q in list(self.subscribers):
            q.put(ev)

    def _find(self, table, cid, what):
        if not cid:
            raise Abort(SC.INVALID_ARGUMENT, "%s id is empty" % what)
        o = table.get(cid)
        if o is not None:
            return o
        hits = [v for k, v in table.items() if k.startswith(cid)]
        if len(hits) == 1:
            return hits[0]
        raise Abort(SC.NOT_FOUND, "an error occurred when try to find %s %q: not found"
                    .replace("%q", '"%s"') % (what, cid))

    def _find_image(self, ref):
        if not ref:
            return None
        n = normalize_image(ref)
        if n in self.images:
            return self.images[n]
        for im in self.images.values():
            if ref in (im.id, im.digest) or im.id == "sha256:" + ref or \
                    (len(ref) >= 12 and im.id[7:].startswith(ref)) or n == im.digest:
                return im
        return None

    @staticmethod
    def _labels_match(have, sel):
        return all(have.get(k) == v for k, v in sel.items())

    # ---------------------------------------------------------------- runtime
    def rpc_Version(self, req, ctx):
        return pb.VersionResponse(**self.version)

    def rpc_Status(self, req, ctx):
        r = pb.StatusResponse()
        for t, ok in (("RuntimeReady", self.runtime_ready), ("NetworkReady", self.network_ready)):
            c = r.status.conditions.add(type=t, status=ok)
            if not ok:
                c.reason = self.status_reason or ("NetworkPluginNotReady" if t == "NetworkReady"
                                                  else "RuntimeNotReady")
                c.message = self.status_message or "fakecri: %s is false" % t
        r.runtime_handlers.add(name="")
        if req.verbose:
            r.info["config"] = json.dumps({"fakecri": True, "sandboxImage": DEFAULT_IMAGES[1]})
        return r

    def rpc_RunPodSandbox(self, req, ctx):
        cfg = req.config
        md = cfg.metadata
        if not md.name or not md.namespace or not md.uid:
            raise Abort(SC.INVALID_ARGUMENT, "sandbox config must include metadata name, uid and namespace")
        if req.runtime_handler not in ("", "runc"):
            raise Abort(SC.UNKNOWN, 'failed to get sandbox runtime: no runtime for "%s" is configured'
                        % req.runtime_handler)
        host_net = cfg.linux.security_context.namespace_options.network == pb.NODE
        if host_net and cfg.hostname:
            pass  # containerd 1.6 accepts it in CRI and fails in runc; keep it simple
        with self.lock:
            for s in self.sandboxes.values():
                m = s.config.metadata
                if (m.name, m.namespace, m.uid, m.attempt) == (md.name, md.namespace, md.uid, md.attempt):
                    raise Abort(SC.UNKNOWN, 'failed to reserve sandbox name "%s_%s_%s_%d": name is reserved for "%s"'
                                % (md.name, md.namespace, md.uid, md.attempt, s.id))
            s = Sandbox()
            s.id = self._new_id("sandbox")
            s.config = pb.PodSandboxConfig()
            s.config.CopyFrom(cfg)
            s.state = pb.SANDBOX_READY
            s.created_at = now_ns()
            s.handler = req.runtime_handler
            s.entry = None
            s.host_net = host_net
            if host_net:
                s.ip = ""
            else:
                n = self.ipseq
                self.ipseq += 1
                s.ip = "%s.%d.%d" % (self.ip_prefix, (n // 254) % 256, n % 254 + 1)
            self.sandboxes[s.id] = s
        return pb.RunPodSandboxResponse(pod_sandbox_id=s.id)

    def _stop_sandbox(self, s):
        for c in list(self.containers.values()):
            if c.sandbox_id == s.id and c.state == pb.CONTAINER_RUNNING:
                self._exit(c, 137, "Error")
        s.state = pb.SANDBOX_NOTREADY

    def rpc_StopPodSandbox(self, req, ctx):
        with self.lock:
            s = self._find(self.sandboxes, req.pod_sandbox_id, "sandbox")
            self._stop_sandbox(s)
        return pb.StopPodSandboxResponse()

    def rpc_RemovePodSandbox(self, req, ctx):
        with self.lock:
            try:
                s = self._find(self.sandboxes, req.pod_sandbox_id, "sandbox")
            except Abort as e:
                if e.code == SC.NOT_FOUND:
                    return pb.RemovePodSandboxResponse()
                raise
            if s.state == pb.SANDBOX_READY:
                self._stop_sandbox(s)  # forcibly, as the CRI asks
            for c in list(self.containers.values()):
                if c.sandbox_id == s.id:
                    del self.containers[c.id]
                    self._event(c, pb.CONTAINER_DELETED_EVENT)
            del self.sandboxes[s.id]
        return pb.RemovePodSandboxResponse()

    def _sandbox_status(self, s):
        st = pb.PodSandboxStatus(id=s.id, state=s.state, created_at=s.created_at,
                                 runtime_handler=s.handler)
        st.metadata.CopyFrom(s.config.metadata)
        st.network.ip = s.ip
        st.linux.namespaces.options.CopyFrom(s.config.linux.security_context.namespace_options)
        st.labels.update(s.config.labels)
        st.annotations.update(s.config.annotations)
        return st

    def rpc_PodSandboxStatus(self, req, ctx):
        with self.lock:
            s = self._find(self.sandboxes, req.pod_sandbox_id, "sandbox")
            r = pb.PodSandboxStatusResponse(timestamp=now_ns())
            r.status.CopyFrom(self._sandbox_status(s))
            if req.verbose:
                r.info["info"] = json.dumps({"pid": 0, "fakecri": True, "hostNetwork": s.host_net})
        return r

    def _sandbox_entry(self, s):
        if s.entry is None or s.entry[0] != s.state:
            it = pb.PodSandbox(id=s.id, state=s.state, created_at=s.created_at,
                               runtime_handler=s.handler)
            it.metadata.CopyFrom(s.config.metadata)
            it.labels.update(s.config.labels)
            it.annotations.update(s.config.annotations)
            b = it.SerializeToString()
            s.entry = (s.state, b"\x0a" + varint(len(b)) + b)
        return s.entry[1]

    def rpc_ListPodSandbox(self, req, ctx):
        f = req.filter
        out = []
        with self.lock:
            for s in self.sandboxes.values():
                if f.id and not s.id.startswith(f.id):
                    continue
                if f.HasField("state") and s.state != f.state.state:
                    continue
                if not self._labels_match(s.config.labels, f.label_selector):
                    continue
                out.append(self._sandbox_entry(s))
        return b"".join(out)  # a serialized ListPodSandboxResponse (field 1, repeated)

    def rpc_CreateContainer(self, req, ctx):
        cfg = req.config
        with self.lock:
            s = self._find(self.sandboxes, req.pod_sandbox_id, "sandbox")
            if s.state != pb.SANDBOX_READY:
                raise Abort(SC.UNKNOWN, 'failed to create containerd container: sandbox "%s" is not running' % s.id)
            if not cfg.metadata.name:
                raise Abort(SC.INVALID_ARGUMENT, "container config must include metadata")
            im = self._find_image(cfg.image.image)
            if im is None:
                raise Abort(SC.NOT_FOUND, 'failed to create containerd container: failed to get image "%s": not found'
                            % cfg.image.image)
            for c in self.containers.values():
                if c.sandbox_id == s.id and c.config.metadata.name == cfg.metadata.name and \
                        c.config.metadata.attempt == cfg.metadata.attempt:
                    raise Abort(SC.UNKNOWN, 'failed to reserve container name "%s_%d": name is reserved for "%s"'
                                % (cfg.metadata.name, cfg.metadata.attempt, c.id))
            c = Container()
            c.id = self._new_id("container")
            c.sandbox_id = s.id
            c.config = pb.ContainerConfig()
            c.config.CopyFrom(cfg)
            c.image = im
            c.state = pb.CONTAINER_CREATED
            c.created_at = now_ns()
            c.started_at = 0
            c.finished_at = 0
            c.exit_code = 0
            c.reason = ""
            c.message = ""
            c.exit_at = None
            c.entry = None
            c.resources = pb.LinuxContainerResources()
            c.resources.CopyFrom(cfg.linux.resources)
            env = {kv.key: kv.value for kv in cfg.envs}
            c.plan = script_plan(list(cfg.command) + list(cfg.args), env)
            c.log_file = ""
            if s.config.log_directory and cfg.log_path:
                c.log_file = os.path.join(s.config.log_directory, cfg.log_path)
            self.containers[c.id] = c
            self._event(c, pb.CONTAINER_CREATED_EVENT)
        return pb.CreateContainerResponse(container_id=c.id)

    def rpc_StartContainer(self, req, ctx):
        with self.lock:
            c = self._find(self.containers, req.container_id, "container")
            if c.state != pb.CONTAINER_CREATED:
                raise Abort(SC.UNKNOWN, 'container "%s" is not in created state' % c.id)
            s = self.sandboxes.get(c.sandbox_id)
            if s is None or s.state != pb.SANDBOX_READY:
                raise Abort(SC.UNKNOWN, 'sandbox container "%s" is not running' % c.sandbox_id)
            if c.plan["fail_start"]:
                c.state = pb.CONTAINER_EXITED
                c.exit_code = 128
                c.finished_at = now_ns()
                c.reason = "StartError"
                c.message = c.plan["fail_start"]
                raise Abort(SC.UNKNOWN, "failed to create containerd task: failed to create shim task: "
                            "OCI runtime create failed: %s: unknown" % c.plan["fail_start"])
            c.state = pb.CONTAINER_RUNNING
            c.started_at = now_ns()
            if c.plan["after_s"] is not None:
                c.exit_at = c.started_at + int(c.plan["after_s"] * 1e9)
            self._log_line(c, "stdout", "fakecri: started %s" % " ".join(
                list(c.config.command) + list(c.config.args)))
            self._event(c, pb.CONTAINER_STARTED_EVENT)
        self._reap()
        return pb.StartContainerResponse()

    def rpc_StopContainer(self, req, ctx):
        with self.lock:
            c = self._find(self.containers, req.container_id, "container")
            if c.state != pb.CONTAINER_RUNNING:
                return pb.StopContainerResponse()  # created or exited: nothing to stop
            ignore = c.plan["ignore_term"]
            if not ignore:
                self._exit(c, 143, "Error")
                return pb.StopContainerResponse()
        # ignores SIGTERM: wait for the timeout (or its own exit), then SIGKILL. A caller
        # that goes away first (cancelled, or its process killed) leaves it running with
        # only SIGTERM sent, as containerd does (its SIGKILL uses the caller's context).
        deadline = time.monotonic() + max(0, req.timeout)
        while time.monotonic() < deadline:
            if not ctx.is_active():
                return pb.StopContainerResponse()
            self._reap()
            with self.lock:
                if c.state != pb.CONTAINER_RUNNING:
                    return pb.StopContainerResponse()
            time.sleep(0.02)
        with self.lock:
            if c.state == pb.CONTAINER_RUNNING:
                self._exit(c, 137, "Error")
        return pb.StopContainerResponse()

    def rpc_RemoveContainer(self, req, ctx):
        with self.lock:
            try:
                c = self._find(self.containers, req.container_id, "container")
            except Abort as e:
                if e.code == SC.NOT_FOUND:
                    return pb.RemoveContainerResponse()
                raise
            if c.state == pb.CONTAINER_RUNNING:
                self._exit(c, 137, "Error")
            del self.containers[c.id]
            self._event(c, pb.CONTAINER_DELETED_EVENT)
        return pb.RemoveContainerResponse()

    def _container_entry(self, c):
        """ListContainers entry of c, serialized once per state (big lists stay cheap)."""
        if c.entry is None or c.entry[0] != c.state:
            it = pb.Container(id=c.id, pod_sandbox_id=c.sandbox_id, state=c.state,
                              created_at=c.created_at, image_ref=c.image.id, image_id=c.image.id)
            it.metadata.CopyFrom(c.config.metadata)
            it.image.image = c.config.image.image
            it.labels.update(c.config.labels)
            it.annotations.update(c.config.annotations)
            b = it.SerializeToString()
            c.entry = (c.state, b"\x0a" + varint(len(b)) + b)
        return c.entry[1]

    def rpc_ListContainers(self, req, ctx):
        self._reap()
        f = req.filter
        out = []
        with self.lock:
            for c in self.containers.values():
                if f.id and not c.id.startswith(f.id):
                    continue
                if f.pod_sandbox_id and not c.sandbox_id.startswith(f.pod_sandbox_id):
                    continue
                if f.HasField("state") and c.state != f.state.state:
                    continue
                if not self._labels_match(c.config.labels, f.label_selector):
                    continue
                out.append(self._container_entry(c))
        return b"".join(out)  # a serialized ListContainersResponse (field 1, repeated)

    def _container_status(self, c):
        st = pb.ContainerStatus(id=c.id, state=c.state, created_at=c.created_at,
                                started_at=c.started_at, finished_at=c.finished_at,
                                exit_code=c.exit_code, image_ref=c.image.digest,
                                image_id=c.image.id, reason=c.reason, message=c.message,
                                log_path=c.log_file)
        st.metadata.CopyFrom(c.config.metadata)
        st.image.image = c.image.name
        st.labels.update(c.config.labels)
        st.annotations.update(c.config.annotations)
        st.mounts.extend(c.config.mounts)
        st.resources.linux.CopyFrom(c.resources)
        return st

    def rpc_ContainerStatus(self, req, ctx):
        self._reap()
        with self.lock:
            c = self._find(self.containers, req.container_id, "container")
            r = pb.ContainerStatusResponse()
            r.status.CopyFrom(self._container_status(c))
            if req.verbose:
                r.info["info"] = json.dumps({"sandboxID": c.sandbox_id, "pid": 0,
                                             "fakecri": True})
        return r

    def rpc_UpdateContainerResources(self, req, ctx):
        with self.lock:
            c = self._find(self.containers, req.container_id, "container")
            if c.state not in (pb.CONTAINER_CREATED, pb.CONTAINER_RUNNING):
                raise Abort(SC.UNKNOWN, 'container "%s" is in %s state' % (
                    c.id, pb.ContainerState.Name(c.state)))
            c.resources.CopyFrom(req.linux)
        return pb.UpdateContainerResourcesResponse()

    def rpc_ExecSync(self, req, ctx):
        self._reap()
        with self.lock:
            c = self._find(self.containers, req.container_id, "container")
            if c.state != pb.CONTAINER_RUNNING:
                raise Abort(SC.UNKNOWN, "failed to exec in container: container is in %s state"
                            % pb.ContainerState.Name(c.state))
            argv = list(req.cmd)
            res = None
            for rule in self.exec_rules:
                if rule.get("container", "*") not in ("*", c.config.metadata.name, c.id):
                    continue
                if rule.get("argv0") and (not argv or argv[0] != rule["argv0"]):
                    continue
                if rule.get("count") is not None:
                    if rule["count"] <= 0:
                        continue
                    rule["count"] -= 1
                res = (int(rule.get("exit_code", 0)), rule.get("stdout", ""),
                       rule.get("stderr", ""), float(rule.get("latency_ms", 0)) / 1000.0)
                break
        if res is None:
            res = self._exec_builtin(argv)
        code, out, err, secs = res
        if req.timeout > 0 and secs > req.timeout:
            t_end = time.monotonic() + req.timeout
            while time.monotonic() < t_end and ctx.is_active():
                time.sleep(0.02)
            raise Abort(SC.DEADLINE_EXCEEDED, "failed to exec in container: timeout %ds exceeded: "
                        "context deadline exceeded" % req.timeout)
        t_end = time.monotonic() + secs
        while time.monotonic() < t_end and ctx.is_active():
            time.sleep(0.02)
        return pb.ExecSyncResponse(exit_code=code, stdout=out.encode(), stderr=err.encode())

    @staticmethod
    def _exec_builtin(argv):
        if not argv:
            return 0, "", "", 0.0
        prog, args = os.path.basename(argv[0]), argv[1:]
        if prog == "fake-exec":
            return (int(args[0]) if args else 0, args[1] if len(args) > 1 else "",
                    args[2] if len(args) > 2 else "",
                    (int(args[3]) if len(args) > 3 else 0) / 1000.0)
        if prog in ("sh", "bash", "ash") and len(args) >= 2 and args[0] == "-c":
            r = mini_sh(args[1])
            return r if r is not None else (0, "", "", 0.0)
        if prog == "true":
            return 0, "", "", 0.0
        if prog == "false":
            return 1, "", "", 0.0
        if prog == "echo":
            return 0, " ".join(args) + "\n", "", 0.0
        if prog == "sleep":
            t = parse_sleep(args[0] if args else "0")
            return 0, "", "", (t if t is not None else 1e9)
        return 0, "", "", 0.0

    def rpc_GetContainerEvents(self, req, ctx):
        if not self.events_enabled:
            raise Abort(SC.UNIMPLEMENTED, "method GetContainerEvents not implemented")
        q = queue.Queue()
        with self.lock:
            self.subscribers.add(q)
        try:
            while ctx.is_active() and not self.stopping.is_set():
                try:
                    yield q.get(timeout=0.1)
                except queue.Empty:
                    pass
        finally:
            with self.lock:
                self.subscribers.discard(q)

    # ---------------------------------------------------------------- images
    def rpc_ListImages(self, req, ctx):
        r = pb.ListImagesResponse()
        want = req.filter.image.image
        with self.lock:
            for im in self.images.values():
                if want and self._find_image(want) is not im:
                    continue
                r.images.append(im.to_pb())
        return r

    def rpc_ImageStatus(self, req, ctx):
        r = pb.ImageStatusResponse()
        with self.lock:
            im = self._find_image(req.image.image)
            if im is not None:
                r.image.CopyFrom(im.to_pb())
                if req.verbose:
                    r.info["info"] = json.dumps({"chainID": "sha256:" + sha("chain:" + im.name)})
        return r

    def rpc_PullImage(self, req, ctx):
        ref = req.image.image
        n = normalize_image(ref)
        with self.lock:
            need = self.auth_required.get(n)
            if need is not None:
                a = req.auth
                user, pw = a.username, a.password
                if a.auth and not user:
                    try:
                        user, pw = base64.b64decode(a.auth).decode().split(":", 1)
                    except Exception:
                        user, pw = "", ""
                if (user, pw) != (need["username"], need["password"]):
                    raise Abort(SC.UNKNOWN, 'failed to pull and unpack image "%s": failed to resolve '
                                'reference "%s": pulling from host %s failed with status code '
                                '[manifests %s]: 401 Unauthorized'
                                % (n, n, n.split("/", 1)[0], n.rsplit(":", 1)[-1]))
            im = self._find_image(ref)
            if im is None and (n in self.pullable or "*" in self.pullable):
                im = Image(n)
                self.images[im.name] = im
            if im is None:
                raise Abort(SC.UNKNOWN, 'failed to pull and unpack image "%s": failed to resolve '
                            'reference "%s": %s: not found' % (n, n, n))
        return pb.PullImageResponse(image_ref=im.id)

    def rpc_RemoveImage(self, req, ctx):
        with self.lock:
            im = self._find_image(req.image.image)
            if im is not None:
                del self.images[im.name]
        return pb.RemoveImageResponse()

    def rpc_ImageFsInfo(self, req, ctx):
        r = pb.ImageFsInfoResponse()
        with self.lock:
            used = sum(im.size for im in self.images.values())
            n = len(self.images)
        fs = r.image_filesystems.add(timestamp=now_ns())
        fs.fs_id.mountpoint = "/var/lib/fakecri/io.containerd.snapshotter.v1.overlayfs"
        fs.used_bytes.value = used
        fs.inodes_used.value = n * 100
        return r

    # ---------------------------------------------------------------- control
    def _start_control(self):
        try:
            os.unlink(self.control_path)
        except FileNotFoundError:
            pass
        s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        s.bind(self.control_path)
        s.listen(16)
        self.ctl_sock = s
        threading.Thread(target=self._ctl_accept, args=(s,), daemon=True).start()

    def _ctl_accept(self, s):
        while True:
            try:
                c, _ = s.accept()
            except OSError:
                return
            threading.Thread(target=self._ctl_conn, args=(c,), daemon=True).start()

    def _ctl_conn(self, c):
        f = c.makefile("rwb")
        try:
            for line in f:
                line = line.strip()
                if not line:
                    continue
                try:
                    reply = self.control(json.loads(line))
                except Exception as e:  # report, keep the connection
                    reply = {"ok": False, "error": "%s: %s" % (type(e).__name__, e)}
                f.write((json.dumps(reply) + "\n").encode())
                f.flush()
        except OSError:
            pass
        finally:
            try:
                f.close()
                c.close()
            except OSError:
                pass

    def _resolve_container(self, d):
        key = d.get("id") or d.get("name")
        with self.lock:
            if d.get("id"):
                return self._find(self.containers, d["id"], "container")
            hits = [c for c in self.containers.values() if c.config.metadata.name == key and
                    (not d.get("pod") or self.sandboxes[c.sandbox_id].config.metadata.name == d["pod"])]
            running = [c for c in hits if c.state == pb.CONTAINER_RUNNING]
            hits = running or sorted(hits, key=lambda c: c.created_at)
            if not hits:
                raise Abort(SC.NOT_FOUND, "no container %s" % key)
            return hits[-1]

    def control(self, d):
        """One control command (a dict); returns the reply dict. See README."""
        cmd = d.get("cmd")
        if cmd == "ping":
            return {"ok": True, "pid": os.getpid(), "socket": self.sock, "down": self.down}
        if cmd == "fault":
            r = Rule(d)
            with self.lock:
                self.rules.append(r)
            return {"ok": True}
        if cmd == "clear_faults":
            with self.lock:
                self.rules = []
                self.exec_rules = []
            return {"ok": True}
        if cmd == "faults":
            with self.lock:
                return {"ok": True, "faults": [r.desc() for r in self.rules]}
        if cmd == "goaway":
            kw = {"grace_ms": d.get("grace_ms", 1000), "restart": d.get("restart", True),
                  "down_ms": d.get("down_ms", 0)}
            if d.get("wait", True):
                self.goaway(**kw)
            else:
                threading.Thread(target=self.goaway, kwargs=kw, daemon=True).start()
            return {"ok": True}
        if cmd == "h2_goaway":
            if not self.proxy:
                return {"ok": False, "error": "h2_goaway needs the proxy (no --no-proxy)"}
            lasts = self.proxy.goaway(d.get("last_stream_id"), d.get("error_code", 0),
                                      d.get("debug", "").encode(), d.get("close_after_ms"))
            return {"ok": True, "last_stream_ids": lasts}
        if cmd == "h2_inject":
            if not self.proxy:
                return {"ok": False, "error": "h2_inject needs the proxy (no --no-proxy)"}
            n = self.proxy.inject(int(d.get("type", 0)), int(d.get("flags", 0)),
                                  d.get("stream_id", 0), bytes.fromhex(d.get("payload_hex", "")))
            return {"ok": True, "connections": n}
        if cmd == "cut":
            if not self.proxy:
                return {"ok": False, "error": "cut needs the proxy (no --no-proxy)"}
            with self.proxy.lock:
                self.proxy.cut_after = int(d.get("after_bytes", 0))
            return {"ok": True}
        if cmd == "connections":
            if not self.proxy:
                return {"ok": True, "connections": []}
            with self.proxy.lock:
                return {"ok": True, "connections": [
                    {"max_stream": p.max_stream, "open": sorted(p.open),
                     "goaway_last": p.goaway_last} for p in self.proxy.conns]}
        if cmd == "drop":
            return {"ok": True, "dropped": self.drop_connections()}
        if cmd == "down":
            with self.serve_lock:
                self._stop_grpc(d.get("grace_ms", 0) / 1000.0)
                if self.proxy:
                    self.proxy.drop_all()
                self._go_down()
            return {"ok": True}
        if cmd == "up":
            with self.serve_lock:
                self._go_up()
            return {"ok": True}
        if cmd == "status":
            with self.lock:
                if "runtime_ready" in d:
                    self.runtime_ready = bool(d["runtime_ready"])
                if "network_ready" in d:
                    self.network_ready = bool(d["network_ready"])
                self.status_reason = d.get("reason", "")
                self.status_message = d.get("message", "")
            return {"ok": True}
        if cmd == "version":
            with self.lock:
                for k in self.version:
                    if k in d:
                        self.version[k] = d[k]
            return {"ok": True}
        if cmd == "images":
            with self.lock:
                if "set" in d:
                    self.images = {}
                for spec in d.get("set", []) + d.get("add", []):
                    if isinstance(spec, str):
                        spec = {"name": spec}
                    im = Image(spec["name"], spec.get("size"), spec.get("uid"),
                               spec.get("username", ""), spec.get("pinned"))
                    self.images[im.name] = im
                for n in d.get("remove", []):
                    im = self._find_image(n)
                    if im:
                        del self.images[im.name]
                if "pullable" in d:
                    self.pullable = set(normalize_image(n) if n != "*" else n for n in d["pullable"])
                return {"ok": True, "images": sorted(self.images),
                        "pullable": sorted(self.pullable)}
        if cmd == "require_auth":
            with self.lock:
                n = normalize_image(d["image"])
                if d.get("username") is None:
                    self.auth_required.pop(n, None)
                else:
                    self.auth_required[n] = {"username": d["username"],
                                             "password": d.get("password", "")}
                    self.pullable.add(n)
            return {"ok": True}
        if cmd == "exec_result":
            with self.lock:
                self.exec_rules.insert(0, dict(d))
            return {"ok": True}
        if cmd == "container_exit":
            c = self._resolve_container(d)
            with self.lock:
                if c.state == pb.CONTAINER_RUNNING:
                    self._exit(c, int(d.get("code", 1)), d.get("reason"),
                               message=d.get("message", ""))
            return {"ok": True, "id": c.id}
        if cmd == "sandbox_notready":
            with self.lock:
                if d.get("id"):
                    s = self._find(self.sandboxes, d["id"], "sandbox")
                else:
                    hits = [s for s in self.sandboxes.values()
                            if s.config.metadata.name == d.get("name") and
                            (not d.get("namespace") or s.config.metadata.namespace == d["namespace"])
                            and s.state == pb.SANDBOX_READY]
                    if not hits:
                        return {"ok": False, "error": "no ready sandbox %s" % d.get("name")}
                    s = hits[0]
                self._stop_sandbox(s)
            return {"ok": True, "id": s.id}
        if cmd == "populate":
            return self._populate(int(d.get("pods", 10)), int(d.get("containers", 1)),
                                  d.get("prefix", "bench"))
        if cmd == "reset":
            with self.lock:
                self.sandboxes.clear()
                self.containers.clear()
            return {"ok": True}
        if cmd == "state":
            self._reap()
            with self.lock:
                return {"ok": True, "sandboxes": [
                    {"id": s.id, "name": s.config.metadata.name,
                     "namespace": s.config.metadata.namespace, "uid": s.config.metadata.uid,
                     "attempt": s.config.metadata.attempt, "ip": s.ip,
                     "state": pb.PodSandboxState.Name(s.state), "host_network": s.host_net}
                    for s in self.sandboxes.values()],
                    "containers": [
                    {"id": c.id, "sandbox_id": c.sandbox_id, "name": c.config.metadata.name,
                     "attempt": c.config.metadata.attempt, "image": c.image.name,
                     "state": pb.ContainerState.Name(c.state), "exit_code": c.exit_code,
                     "reason": c.reason} for c in self.containers.values()]}
        if cmd == "calls":
            with self.lock:
                return {"ok": True, "counts": dict(self.counts)}
        if cmd == "reset_calls":
            with self.lock:
                self.counts = {}
                self.requests = {}
            return {"ok": True}
        if cmd == "requests":
            n = int(d.get("n", 1))
            with self.lock:
                lst = self.requests.get(d["method"], [])[-n:]
                return {"ok": True, "requests": [json_format.MessageToDict(
                    m, preserving_proto_field_name=True) for m in lst]}
        if cmd == "events":
            self.events_enabled = bool(d.get("enabled", True))
            return {"ok": True}
        return {"ok": False, "error": "unknown cmd %r" % cmd}

    def _populate(self, pods, per, prefix):
        ids = []
        base = len(self.sandboxes)
        for i in range(pods):
            n = base + i
            cfg = pb.PodSandboxConfig()
            cfg.metadata.name = "%s-%d" % (prefix, n)
            cfg.metadata.namespace = "default"
            cfg.metadata.uid = "uid-%s-%d" % (prefix, n)
            cfg.labels["io.kubernetes.pod.name"] = cfg.metadata.name
            cfg.labels["io.kubernetes.pod.namespace"] = "default"
            cfg.labels["io.kubernetes.pod.uid"] = cfg.metadata.uid
            sid = self.rpc_RunPodSandbox(pb.RunPodSandboxRequest(config=cfg), None).pod_sandbox_id
            for j in range(per):
                cc = pb.ContainerConfig()
                cc.metadata.name = "c%d" % j
                cc.image.image = DEFAULT_IMAGES[0] if self._find_image(DEFAULT_IMAGES[0]) \
                    else next(iter(self.images))
                cc.command.extend(["sleep", "inf"])
                cc.labels.update(cfg.labels)
                cc.labels["io.kubernetes.container.name"] = cc.metadata.name
                cc.annotations["io.kubernetes.container.hash"] = "%08x" % (n * 31 + j)
                cc.annotations["io.kubernetes.container.restartCount"] = "0"
                cid = self.rpc_CreateContainer(pb.CreateContainerRequest(
                    pod_sandbox_id=sid, config=cc, sandbox_config=cfg), None).container_id
                self.rpc_StartContainer(pb.StartContainerRequest(container_id=cid), None)
            ids.append(sid)
        return {"ok": True, "sandboxes": len(ids), "containers": len(ids) * per}


def main(argv=None):
    ap = argparse.ArgumentParser(description="in-memory CRI runtime for tests")
    ap.add_argument("--socket", required=True, help="unix socket path to serve runtime.v1 on")
    ap.add_argument("--control", help="control socket (default SOCKET.ctl); '' for none")
    ap.add_argument("--images", help="comma-separated image names present at start "
                    "(default: %s)" % ",".join(DEFAULT_IMAGES))
    ap.add_argument("--pullable", default="", help="comma-separated names PullImage can "
                    "fetch ('*': any)")
    ap.add_argument("--no-proxy", action="store_true", help="serve grpc directly on the "
                    "socket (drop then restarts the server instead)")
    ap.add_argument("--no-events", action="store_true", help="GetContainerEvents answers "
                    "UNIMPLEMENTED, as containerd 1.6")
    ap.add_argument("--no-v1", action="store_true", help="serve no runtime.v1 service at all "
                    "(every call: UNIMPLEMENTED, as an old v1alpha2-only runtime)")
    ap.add_argument("--populate", default="", help="PODS[xCONTAINERS]: running pods at start")
    ap.add_argument("--workers", type=int, default=64)
    ap.add_argument("--ready-file", help="write 'ready' here once serving")
    ap.add_argument("-v", "--verbose", action="store_true")
    a = ap.parse_args(argv)
    images = None if a.images is None else [x for x in a.images.split(",") if x]
    f = FakeCRI(a.socket, control=a.control, images=images,
                pullable=[x for x in a.pullable.split(",") if x], proxy=not a.no_proxy,
                events=not a.no_events, workers=a.workers, quiet=not a.verbose,
                serve_v1=not a.no_v1)
    done = threading.Event()
    signal.signal(signal.SIGTERM, lambda *_: done.set())
    signal.signal(signal.SIGINT, lambda *_: done.set())
    f.start()
    if a.populate:
        p, _, c = a.populate.partition("x")
        f._populate(int(p), int(c or 1), "bench")
    if a.ready_file:
        with open(a.ready_file, "w") as rf:
            rf.write("ready\n")
    print("fakecri: ready socket=%s control=%s pid=%d" % (f.sock, f.control_path or "",
                                                          os.getpid()), flush=True)
    while not done.wait(0.5):
        pass
    f.stop()
    return 0


if __name__ == "__main__":
    sys.exit(main())
