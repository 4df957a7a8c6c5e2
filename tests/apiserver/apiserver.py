#!/usr/bin/python3
"""klet's Kubernetes API server stand-in, for tests.

HTTP/2 over TLS (ALPN h2, and http/1.1 for plain curl), client-certificate and bearer-token
authentication, pods / nodes / leases / events with resourceVersion semantics, list paging,
watch with bookmarks and 410 after compaction, strategic-merge and merge patches, graceful
deletion, errors as Status objects, a request log, and a control port (plain HTTP/1.1 on
127.0.0.1) with fault switches for tests.

Usage: apiserver.py --certs DIR [--port 0] [--ctl-port 0] [--state-file F] [--token T=USER]...
    [--sar-allow USER]...
The state file receives "API_PORT CTL_PORT\n" once both ports listen.

The node proxy (as the real API server): pods/NAME/log and nodes/NAME/proxy/PATH go to the
node's kubelet (127.0.0.1, the port of its status.daemonEndpoints.kubeletEndpoint) over HTTPS
with the client certificate admin.crt (O=system:masters), the kubelet's certificate not
verified (no --kubelet-certificate-authority); the answer is streamed back. TokenReview
answers from the --token list (groups system:authenticated); SubjectAccessReview allows the
users given by --sar-allow and the group system:masters, and denies everyone else.

Control port (GET or POST; answers JSON):
  /healthz                         ok
  /log[?since=N]                   the request log (a JSON array), entries with seq > N
  /log/clear                       empties the request log
  /reset-watches[?mode=end|rst]    ends (or resets) every open watch stream
  /goaway                          GOAWAY on every connection; open streams end, then close
  /compact                         every resourceVersion below the current one becomes 410
  /fail?n=N&code=C[&retry_after=S][&match=SUBSTR]
                                   the next N matching API requests get status C
  /refuse?seconds=S[&drop=1]       stop listening for S seconds (drop=1: close connections)
  /stall?seconds=S                 stop reading from every open connection for S seconds
  /down[?mode=refuse|blackhole]    unreachable until /up: every open connection is dropped;
                                   refuse: the port is closed (connection refused);
                                   blackhole: connections are accepted and never answered.
                                   The store (objects, history, watch positions) is kept.
  /up                              listening again on the same port (blackholed connections
                                   are closed)
  /objects[?kind=pods]             every stored object
  /pods[?uid=U] (POST JSON body)   creates a pod (namespace from metadata, default "default");
                                   uid=U: with that metadata.uid instead of a new UUID (tests
                                   of hostile UIDs: a real server only issues UUIDs)
  /pods/NS/NAME (DELETE or ?method=DELETE[&grace=N])   deletes a pod like the API would
  /pods/NS/NAME/get                the stored pod
  /nodes/NAME/delete, /leases/NAME/delete   remove objects at once
  /stats                           connection and request counters
  /token-lifetime?seconds=S        TokenRequests get tokens expiring after S s (0: as asked)
  /rewind[?rv=N][&mode=status|event]
                                   the store goes back in time (restored from a backup, a new
                                   server on the same address): the resourceVersion counter
                                   restarts at N (default 1), history is dropped, open watches
                                   end; a watch or list from a newer resourceVersion then gets
                                   504 Too large resource version (mode=event: as an ERROR
                                   event in a 200 stream instead)
"""

import argparse
import asyncio
import base64
import copy
import json
import os
import random
import signal
import ssl
import sys
import time
import urllib.parse
import uuid

try:
    import h2.config
    import h2.connection
    import h2.events
    import h2.exceptions
    import h2.settings
    import hyperframe.frame
except ImportError:
    sys.stderr.write("apiserver.py: python3-h2 is missing\n")
    sys.exit(77)

MAX_BODY = 3 * 1024 * 1024
BOOKMARK_INTERVAL = 5.0


def now_rfc3339(t=None):
    return time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(time.time() if t is None else t))


class ApiError(Exception):
    def __init__(self, code, reason, message, details=None, headers=None):
        super().__init__(message)
        self.code = code
        self.reason = reason
        self.message = message
        self.details = details
        self.headers = headers or []

    def status(self):
        s = {"kind": "Status", "apiVersion": "v1", "metadata": {}, "status": "Failure",
             "message": self.message, "reason": self.reason, "code": self.code}
        if self.details:
            s["details"] = self.details
        return s


def not_found(kind, name):
    return ApiError(404, "NotFound", '%s "%s" not found' % (kind, name),
                    {"name": name, "kind": kind})


def conflict(kind, name, msg):
    return ApiError(409, "Conflict", 'Operation cannot be fulfilled on %s "%s": %s' %
                    (kind, name, msg), {"name": name, "kind": kind})


def too_large_rv(requested, current):
    """What the API server answers a read from a resourceVersion newer than its store
    (apimachinery's NewTooLargeResourceVersionError: a Timeout with a cause)."""
    return ApiError(504, "Timeout", "Timeout: Too large resource version: %d, current: %d" %
                    (requested, current),
                    {"causes": [{"reason": "ResourceVersionTooLarge",
                                 "message": "Too large resource version"}],
                     "retryAfterSeconds": 1}, [("retry-after", "1")])


# ---- patches -------------------------------------------------------------------------------

# Merge keys of the lists the API patches by key (strategic merge); other lists are replaced
# (container status lists carry no patch merge key in v1: they are atomic).
MERGE_KEYS = {
    "conditions": "type", "podIPs": "ip", "hostIPs": "ip",
    "addresses": "type", "volumesAttached": "name", "ownerReferences": "uid",
    "containers": "name", "initContainers": "name", "volumes": "name", "env": "name",
    "volumeMounts": "mountPath", "tolerations": None, "resourceClaimStatuses": "name",
}


def merge_patch(target, patch):
    """RFC 7386."""
    if not isinstance(patch, dict):
        return copy.deepcopy(patch)
    if not isinstance(target, dict):
        target = {}
    out = dict(target)
    for k, v in patch.items():
        if v is None:
            out.pop(k, None)
        else:
            out[k] = merge_patch(out.get(k), v)
    return out


def strategic_merge(target, patch):
    """A strategic merge patch over plain JSON, with the merge keys above, null deletion,
    $patch: replace/delete, $setElementOrder/<list> and $retainKeys (tolerated)."""
    if not isinstance(patch, dict):
        return copy.deepcopy(patch)
    if not isinstance(target, dict):
        target = {}
    if patch.get("$patch") == "replace":
        p = dict(patch)
        del p["$patch"]
        return copy.deepcopy(p)
    if patch.get("$patch") == "delete":
        return None
    out = dict(target)
    orders = {}
    for k, v in patch.items():
        if k.startswith("$setElementOrder/"):
            orders[k[len("$setElementOrder/"):]] = v
            continue
        if k.startswith("$deleteFromPrimitiveList/"):
            name = k[len("$deleteFromPrimitiveList/"):]
            if isinstance(out.get(name), list) and isinstance(v, list):
                out[name] = [x for x in out[name] if x not in v]
            continue
        if k.startswith("$"):
            continue  # $retainKeys and other directives: tolerated
        if v is None:
            out.pop(k, None)
        elif isinstance(v, list) and MERGE_KEYS.get(k):
            out[k] = merge_list(out.get(k) or [], v, MERGE_KEYS[k])
        elif isinstance(v, dict):
            r = strategic_merge(out.get(k), v)
            if r is None:
                out.pop(k, None)
            else:
                out[k] = r
        else:
            out[k] = copy.deepcopy(v)
    for name, order in orders.items():
        key = MERGE_KEYS.get(name)
        if not key or not isinstance(out.get(name), list) or not isinstance(order, list):
            continue
        rank = {}
        for i, e in enumerate(order):
            if isinstance(e, dict) and key in e:
                rank[e[key]] = i
        items = out[name]
        out[name] = sorted(items, key=lambda e: rank.get(e.get(key) if isinstance(e, dict)
                                                        else None, len(order)))
    return out


def merge_list(cur, patch, key):
    if any(isinstance(e, dict) and e.get("$patch") == "replace" for e in patch):
        return [copy.deepcopy(e) for e in patch if not (isinstance(e, dict) and "$patch" in e)]
    out = [copy.deepcopy(e) for e in cur]
    for e in patch:
        if not isinstance(e, dict) or key not in e:
            raise ApiError(422, "Invalid", "list element without merge key %s" % key)
        idx = next((i for i, c in enumerate(out) if isinstance(c, dict)
                    and c.get(key) == e[key]), None)
        if e.get("$patch") == "delete":
            if idx is not None:
                del out[idx]
            continue
        if idx is None:
            out.append(strategic_merge({}, e))
        else:
            out[idx] = strategic_merge(out[idx], e)
    return out


def json_patch(target, ops):
    doc = copy.deepcopy(target)
    for op in ops:
        path = [p.replace("~1", "/").replace("~0", "~") for p in op["path"].split("/")[1:]]
        parent = doc
        for p in path[:-1]:
            parent = parent[int(p)] if isinstance(parent, list) else parent[p]
        last = path[-1]
        o = op["op"]
        if o == "test":
            cur = parent[int(last)] if isinstance(parent, list) else parent.get(last)
            if cur != op.get("value"):
                raise ApiError(422, "Invalid", "test operation failed at %s" % op["path"])
        elif o in ("add", "replace"):
            if isinstance(parent, list):
                if last == "-":
                    parent.append(op["value"])
                elif o == "add":
                    parent.insert(int(last), op["value"])
                else:
                    parent[int(last)] = op["value"]
            else:
                parent[last] = op["value"]
        elif o == "remove":
            if isinstance(parent, list):
                del parent[int(last)]
            else:
                del parent[last]
        else:
            raise ApiError(422, "Invalid", "unsupported json patch op %s" % o)
    return doc


# ---- the store ------------------------------------------------------------------------------

class Kind:
    def __init__(self, plural, kind, group, version, namespaced, status_sub=True):
        self.plural = plural
        self.kind = kind
        self.group = group
        self.version = version
        self.namespaced = namespaced
        self.status_sub = status_sub

    @property
    def api_version(self):
        return self.version if not self.group else "%s/%s" % (self.group, self.version)


KINDS = {
    ("", "pods"): Kind("pods", "Pod", "", "v1", True),
    ("", "nodes"): Kind("nodes", "Node", "", "v1", False),
    ("", "events"): Kind("events", "Event", "", "v1", True, False),
    ("", "namespaces"): Kind("namespaces", "Namespace", "", "v1", False),
    ("coordination.k8s.io", "leases"): Kind("leases", "Lease", "coordination.k8s.io", "v1",
                                            True, False),
    # volumes: objects pods consume; serviceaccounts/NAME/token issues TokenRequests.
    ("", "configmaps"): Kind("configmaps", "ConfigMap", "", "v1", True, False),
    ("", "secrets"): Kind("secrets", "Secret", "", "v1", True, False),
    ("", "serviceaccounts"): Kind("serviceaccounts", "ServiceAccount", "", "v1", True, False),
    # TLS bootstrap: CSRs, approved through PUT .../approval (kubectl certificate approve) or
    # at once with --csr-auto-approve, then signed with the stand-in's CA.
    ("certificates.k8s.io", "certificatesigningrequests"): Kind(
        "certificatesigningrequests", "CertificateSigningRequest", "certificates.k8s.io", "v1",
        False),
    # RuntimeClasses: the kubelet resolves runtimeClassName to a handler; creating a pod
    # runs the RuntimeClass admission (overhead copied into spec.overhead).
    ("node.k8s.io", "runtimeclasses"): Kind("runtimeclasses", "RuntimeClass", "node.k8s.io",
                                            "v1", False, False),
}


def secret_string_data(obj):
    """A Secret's stringData is merged into data (base64), as the API server does."""
    sd = obj.pop("stringData", None) or {}
    if sd:
        data = obj.setdefault("data", {}) or {}
        for k, v in sd.items():
            data[k] = base64.b64encode(str(v).encode()).decode()
        obj["data"] = data


class Watcher:
    def __init__(self, kind, ns, pred):
        self.kind = kind
        self.ns = ns
        self.pred = pred
        self.queue = asyncio.Queue()
        self.closed = False


class Store:
    def __init__(self):
        self.rv = 1
        self.compacted = 0
        self.objs = {}          # (plural, ns, name) -> obj
        self.history = []       # (rv, plural, type, obj)
        self.watchers = set()
        self.snapshots = {}     # continue id -> (rv, [objs])

    def next_rv(self):
        self.rv += 1
        return self.rv

    def emit(self, kind, etype, obj, prev):
        rv = int(obj["metadata"]["resourceVersion"])
        obj = copy.deepcopy(obj)
        self.history.append((rv, kind.plural, etype, obj, prev))
        if len(self.history) > 20000:
            self.history = self.history[-10000:]
            self.compacted = max(self.compacted, self.history[0][0] - 1)
        for w in list(self.watchers):
            if w.kind is kind and (w.ns is None or obj["metadata"].get("namespace") == w.ns):
                w.queue.put_nowait((etype, obj, prev))

    def compact(self):
        self.compacted = self.rv
        self.history = []
        self.snapshots = {}

    def rewind(self, rv):
        """Back in time: the counter restarts at rv, history and list snapshots are gone,
        objects keep their content with resourceVersions no newer than rv."""
        self.rv = max(1, rv)
        self.compacted = 0
        self.history = []
        self.snapshots = {}
        for o in self.objs.values():
            md = o["metadata"]
            if int(md.get("resourceVersion") or 0) > self.rv:
                md["resourceVersion"] = str(self.rv)

    def put(self, kind, obj, etype):
        obj["metadata"]["resourceVersion"] = str(self.next_rv())
        obj["kind"] = kind.kind
        obj["apiVersion"] = kind.api_version
        md = obj["metadata"]
        key = (kind.plural, md.get("namespace", ""), md["name"])
        prev = self.objs.get(key)
        self.objs[key] = obj
        self.emit(kind, etype, obj, copy.deepcopy(prev) if prev is not None else None)
        return obj

    def remove(self, kind, ns, name):
        obj = self.objs.pop((kind.plural, ns, name))
        prev = copy.deepcopy(obj)
        obj["metadata"]["resourceVersion"] = str(self.next_rv())
        self.emit(kind, "DELETED", obj, prev)
        return obj

    def get(self, kind, ns, name):
        return self.objs.get((kind.plural, ns, name))

    def list(self, kind, ns):
        return [o for (p, n, _), o in sorted(self.objs.items())
                if p == kind.plural and (ns is None or n == ns)]


# ---- selectors ------------------------------------------------------------------------------

def field_value(obj, path):
    cur = obj
    for p in path.split("."):
        if not isinstance(cur, dict):
            return ""
        cur = cur.get(p)
    return "" if cur is None else str(cur)


def parse_selector(s, fields):
    """Returns a predicate for a fieldSelector (fields=True) or a labelSelector."""
    terms = []
    for t in [x.strip() for x in (s or "").split(",") if x.strip()]:
        if "!=" in t:
            k, v = t.split("!=", 1)
            terms.append((k.strip(), "!=", v.strip()))
        elif "==" in t:
            k, v = t.split("==", 1)
            terms.append((k.strip(), "=", v.strip()))
        elif "=" in t:
            k, v = t.split("=", 1)
            terms.append((k.strip(), "=", v.strip()))
        elif fields:
            raise ApiError(400, "BadRequest", "invalid field selector %r" % t)
        elif t.startswith("!"):
            terms.append((t[1:], "absent", None))
        else:
            terms.append((t, "exists", None))
    if fields:
        for k, _, _ in terms:
            if k not in ("metadata.name", "metadata.namespace", "spec.nodeName",
                         "status.phase", "spec.schedulerName", "spec.restartPolicy",
                         "status.podIP", "involvedObject.name", "involvedObject.uid"):
                raise ApiError(400, "BadRequest",
                               'field label not supported: %s' % k)

    def pred(obj):
        labels = obj.get("metadata", {}).get("labels") or {}
        for k, op, v in terms:
            cur = field_value(obj, k) if fields else labels.get(k)
            if op == "=" and cur != v:
                return False
            if op == "!=" and cur == v:
                return False
            if op == "exists" and k not in labels:
                return False
            if op == "absent" and k in labels:
                return False
        return True
    return pred


# ---- the API ---------------------------------------------------------------------------------

class Request:
    def __init__(self, method, path, headers, body, user, conn):
        self.method = method
        u = urllib.parse.urlsplit(path)
        self.path = u.path
        self.raw_path = path
        self.query = {k: v[-1] for k, v in urllib.parse.parse_qs(u.query,
                                                                  keep_blank_values=True).items()}
        self.headers = headers
        self.body = body
        self.user = user
        self.conn = conn

    def json(self):
        try:
            return json.loads(self.body.decode("utf-8") if self.body else "{}")
        except ValueError as e:
            raise ApiError(400, "BadRequest", "invalid JSON body: %s" % e)


class Response:
    def __init__(self, code, obj, headers=None):
        self.code = code
        self.obj = obj
        self.headers = headers or []


class WatchResponse:
    def __init__(self, gen, watcher):
        self.gen = gen
        self.watcher = watcher


class StreamResponse(WatchResponse):
    """A streamed body of raw bytes (the node proxy): gen yields bytes."""
    def __init__(self, gen, ctype):
        WatchResponse.__init__(self, gen, None)
        self.ctype = ctype


def stream_chunk(ev):
    if isinstance(ev, (bytes, bytearray)):
        return bytes(ev)
    return json.dumps(ev, separators=(",", ":")).encode() + b"\n"


class Api:
    def __init__(self, args):
        self.store = Store()
        self.args = args
        self.log = []
        self.seq = 0
        self.faults = []        # [remaining, code, retry_after, match]
        self.tokens = dict(t.split("=", 1) for t in (args.token or []))
        self.open_watches = set()
        self.store.put(KINDS[("", "namespaces")], {"metadata": {
            "name": "default", "uid": str(uuid.uuid4()),
            "creationTimestamp": now_rfc3339()}, "status": {"phase": "Active"}}, "ADDED")
        self.store.put(KINDS[("", "namespaces")], {"metadata": {
            "name": "kube-node-lease", "uid": str(uuid.uuid4()),
            "creationTimestamp": now_rfc3339()}, "status": {"phase": "Active"}}, "ADDED")

    def record(self, req, proto):
        self.seq += 1
        body = None
        if req.body:
            try:
                body = json.loads(req.body)
            except ValueError:
                body = req.body[:256].decode("utf-8", "replace")
        hdr_bytes = sum(len(k) + len(v) + 2 for k, v in req.headers.items())
        e = {"seq": self.seq, "t": round(time.time(), 3), "conn": req.conn, "proto": proto,
             "method": req.method, "path": req.path, "query": req.query, "user": req.user,
             "content_type": req.headers.get("content-type", ""), "body": body,
             "req_bytes": len(req.body or b"") + hdr_bytes + len(req.raw_path),
             "code": 0, "resp_bytes": 0}
        self.log.append(e)
        if len(self.log) > 100000:
            del self.log[:50000]
        return e

    def authenticate(self, req, peer_user):
        auth = req.headers.get("authorization", "")
        if auth.startswith("Bearer "):
            tok = auth[7:].strip()
            if tok in self.tokens:
                return self.tokens[tok]
            raise ApiError(401, "Unauthorized", "Unauthorized")
        if peer_user:
            return peer_user
        raise ApiError(401, "Unauthorized", "Unauthorized")

    def injected_fault(self, req):
        for f in self.faults:
            if f[0] > 0 and (not f[3] or f[3] in req.method + " " + req.raw_path):
                f[0] -= 1
                hdrs = []
                if f[2] is not None:
                    hdrs.append(("retry-after", str(f[2])))
                reason = {429: "TooManyRequests", 500: "InternalError",
                          503: "ServiceUnavailable", 504: "Timeout"}.get(f[1], "InternalError")
                self.faults = [x for x in self.faults if x[0] > 0]
                details = {"retryAfterSeconds": f[2]} if f[2] is not None else None
                return ApiError(f[1], reason, "injected fault %d" % f[1], details, hdrs)
        return None

    # -- routing --

    def route(self, path):
        """Returns (kind, ns, name, sub) for a resource path, or raises 404."""
        parts = [p for p in path.split("/") if p]
        watch = False
        if len(parts) >= 2 and parts[0] == "api" and parts[1] == "v1":
            group, rest = "", parts[2:]
        elif len(parts) >= 3 and parts[0] == "apis":
            group, rest = parts[1], parts[3:]
        else:
            raise ApiError(404, "NotFound", "the server could not find the requested resource")
        if rest and rest[0] == "watch":
            watch, rest = True, rest[1:]
        ns = None
        if len(rest) >= 3 and rest[0] == "namespaces":
            ns, rest = rest[1], rest[2:]
        if not rest:
            raise ApiError(404, "NotFound", "the server could not find the requested resource")
        kind = KINDS.get((group, rest[0]))
        if kind is None:
            raise ApiError(404, "NotFound", "the server could not find the requested resource")
        if kind.namespaced != (ns is not None) and len(rest) > 1:
            raise ApiError(404, "NotFound", "the server could not find the requested resource")
        name = rest[1] if len(rest) > 1 else None
        sub = rest[2] if len(rest) > 2 else None
        if len(rest) > 3 or (sub and sub != "status" and
                             not (sub == "token" and kind.plural == "serviceaccounts") and
                             not (sub == "approval" and
                                  kind.plural == "certificatesigningrequests")):
            raise ApiError(404, "NotFound", "the server could not find the requested resource")
        return kind, ns, name, sub, watch

    async def handle(self, req, peer_user):
        """Returns a Response or a WatchResponse; never raises."""
        try:
            req.user = self.authenticate(req, peer_user)
            f = self.injected_fault(req)
            if f:
                raise f
            if req.path in ("/healthz", "/livez", "/readyz"):
                return Response(200, "ok")
            nr = await self.node_routes(req)
            if nr is not None:
                return nr
            if req.path in ("/api", "/apis", "/api/v1", "/version") or \
                    req.path.startswith("/apis/") and req.path.count("/") <= 3:
                return Response(200, self.discovery(req.path))
            kind, ns, name, sub, watch = self.route(req.path)
            m = req.method
            if watch or (m == "GET" and name is None and
                         req.query.get("watch") in ("1", "true")):
                return self.watch(req, kind, ns, name)
            if m == "GET" and name is None:
                return self.list(req, kind, ns)
            if m == "GET":
                return Response(200, self.get(kind, ns, name))
            if m == "POST" and name is None:
                return self.create(req, kind, ns)
            if m == "POST" and sub == "token":
                return self.token_request(req, ns, name)
            if m == "PUT" and sub == "approval":
                return self.csr_approval(req, kind, name)
            if m == "PUT" and name:
                return self.update(req, kind, ns, name, sub)
            if m == "PATCH" and name:
                return self.patch(req, kind, ns, name, sub)
            if m == "DELETE" and name:
                return self.delete(req, kind, ns, name)
            raise ApiError(405, "MethodNotAllowed", "method %s not allowed on %s" % (m, req.path))
        except ApiError as e:
            return Response(e.code, e.status(), e.headers)
        except Exception as e:  # a bug in the stand-in: say so, keep serving
            import traceback
            traceback.print_exc()
            return Response(500, ApiError(500, "InternalError", "stand-in bug: %r" % e).status())

    # -- the node proxy, TokenReview and SubjectAccessReview (klet's node server) --

    async def node_routes(self, req):
        """pods/NAME/log, nodes/NAME/proxy/..., tokenreviews, subjectaccessreviews; None for
        any other path."""
        parts = [p for p in req.path.split("/") if p]
        if req.method == "POST" and req.path == "/apis/authentication.k8s.io/v1/tokenreviews":
            return self.token_review(req)
        if req.method == "POST" and \
                req.path == "/apis/authorization.k8s.io/v1/subjectaccessreviews":
            return self.subject_access_review(req)
        if req.path == "/apis" or req.path.startswith("/apis/metrics.k8s.io"):
            return await self.metrics_api(req, parts)
        if len(parts) == 7 and parts[:3] == ["api", "v1", "namespaces"] and \
                parts[4] == "pods" and parts[6] == "log" and req.method == "GET":
            return await self.pod_log(req, parts[3], parts[5])
        if len(parts) >= 5 and parts[:3] == ["api", "v1", "nodes"] and parts[4] == "proxy":
            path = "/" + "/".join(parts[5:])
            if req.path.endswith("/") and not path.endswith("/"):
                path += "/"
            q = urllib.parse.urlsplit(req.raw_path).query
            return await self.node_proxy(req.method, parts[3], path + ("?" + q if q else ""))
        return None

    # metrics.k8s.io, as metrics-server serves it: each node's /metrics/resource scraped
    # twice (a second apart, or against the previous scrape), CPU as the rate in between.

    async def scrape_resource(self, node):
        resp = await self.node_proxy("GET", node, "/metrics/resource")
        text = b"".join([b async for b in resp.gen]).decode()
        out = {}
        for line in text.splitlines():
            if not line or line.startswith("#"):
                continue
            name_labels, _, rest = line.partition(" ")
            name, _, labels = name_labels.partition("{")
            lab = dict(kv.split("=", 1) for kv in labels.rstrip("}").split(",") if "=" in kv)
            lab = {k: v.strip('"') for k, v in lab.items()}
            key = (name, lab.get("namespace"), lab.get("pod"), lab.get("container"))
            out[key] = float(rest.split(" ")[0])
        return time.monotonic(), out

    async def node_usage(self, node):
        if not hasattr(self, "scrapes"):
            self.scrapes = {}
        prev = self.scrapes.get(node)
        if prev is None or time.monotonic() - prev[0] > 60:
            prev = await self.scrape_resource(node)
            await asyncio.sleep(1)
        cur = await self.scrape_resource(node)
        self.scrapes[node] = cur
        dt = max(cur[0] - prev[0], 0.001)

        def cpu(key):
            return "%dn" % max(0, (cur[1].get(key, 0) - prev[1].get(key, 0)) / dt * 1e9)

        def mem(key):
            return "%dKi" % (cur[1].get(key, 0) // 1024)
        return cpu, mem, cur[1]

    async def metrics_api(self, req, parts):
        if req.path == "/apis":
            d = self.discovery("/apis")
            d["groups"].append({"name": "metrics.k8s.io", "versions": [
                {"groupVersion": "metrics.k8s.io/v1beta1", "version": "v1beta1"}],
                "preferredVersion": {"groupVersion": "metrics.k8s.io/v1beta1",
                                     "version": "v1beta1"}})
            return Response(200, d)
        if len(parts) == 3:
            return Response(200, {"kind": "APIResourceList", "apiVersion": "v1",
                                  "groupVersion": "metrics.k8s.io/v1beta1", "resources": [
                                      {"name": "nodes", "singularName": "", "namespaced": False,
                                       "kind": "NodeMetrics", "verbs": ["get", "list"]},
                                      {"name": "pods", "singularName": "", "namespaced": True,
                                       "kind": "PodMetrics", "verbs": ["get", "list"]}]})
        rest = parts[3:]
        ns = None
        if len(rest) >= 2 and rest[0] == "namespaces":
            ns, rest = rest[1], rest[2:]
        if not rest or rest[0] not in ("pods", "nodes") or len(rest) > 2:
            raise ApiError(404, "NotFound", "the server could not find the requested resource")
        want = rest[1] if len(rest) == 2 else None
        now = now_rfc3339()
        items = []
        for n in self.store.list(KINDS[("", "nodes")], None):
            node = n["metadata"]["name"]
            try:
                cpu, mem, cur = await self.node_usage(node)
            except ApiError:
                continue
            if rest[0] == "nodes":
                if want and want != node:
                    continue
                items.append({"metadata": {"name": node, "creationTimestamp": now},
                              "timestamp": now, "window": "1s", "usage": {
                                  "cpu": cpu(("node_cpu_usage_seconds_total", None, None, None)),
                                  "memory": mem(("node_memory_working_set_bytes", None, None,
                                                 None))}})
                continue
            pods = sorted({(k[1], k[2]) for k in cur if k[0] == "pod_cpu_usage_seconds_total"})
            for pns, pname in pods:
                if (ns and pns != ns) or (want and want != pname):
                    continue
                ctrs = sorted({k[3] for k in cur if k[0] == "container_cpu_usage_seconds_total"
                               and k[1] == pns and k[2] == pname})
                items.append({"metadata": {"name": pname, "namespace": pns,
                                           "creationTimestamp": now},
                              "timestamp": now, "window": "1s", "containers": [
                                  {"name": c, "usage": {
                                      "cpu": cpu(("container_cpu_usage_seconds_total", pns,
                                                  pname, c)),
                                      "memory": mem(("container_memory_working_set_bytes",
                                                     pns, pname, c))}} for c in ctrs]})
        kind = "NodeMetrics" if rest[0] == "nodes" else "PodMetrics"
        if want:
            if not items:
                raise ApiError(404, "NotFound", "%s \"%s\" not found" % (rest[0], want))
            return Response(200, dict(items[0], kind=kind, apiVersion="metrics.k8s.io/v1beta1"))
        return Response(200, {"kind": kind + "List", "apiVersion": "metrics.k8s.io/v1beta1",
                              "metadata": {}, "items": items})

    def token_review(self, req):
        spec = req.json().get("spec") or {}
        user = self.tokens.get(spec.get("token", ""))
        st = {"authenticated": False}
        if user:
            st = {"authenticated": True,
                  "user": {"username": user, "groups": ["system:authenticated"]}}
        return Response(201, {"apiVersion": "authentication.k8s.io/v1", "kind": "TokenReview",
                              "spec": spec, "status": st})

    def subject_access_review(self, req):
        spec = req.json().get("spec") or {}
        user = spec.get("user", "")
        ok = user in self.args.sar_allow or "system:masters" in (spec.get("groups") or [])
        st = {"allowed": ok}
        if not ok:
            st["reason"] = "the stand-in allows only %s and system:masters" % \
                (",".join(self.args.sar_allow) or "nobody else")
        return Response(201, {"apiVersion": "authorization.k8s.io/v1",
                              "kind": "SubjectAccessReview", "spec": spec, "status": st})

    async def pod_log(self, req, ns, name):
        pod = self.get(KINDS[("", "pods")], ns, name)
        ctrs = [c["name"] for c in pod.get("spec", {}).get("containers", [])]
        c = req.query.get("container")
        if not c:
            if len(ctrs) != 1:
                raise ApiError(400, "BadRequest",
                               "a container name must be specified for pod %s, choose one of: "
                               "[%s]" % (name, " ".join(ctrs)))
            c = ctrs[0]
        node = pod.get("spec", {}).get("nodeName")
        if not node:
            raise ApiError(400, "BadRequest", "pod %s does not have a host assigned" % name)
        q = {k: v for k, v in req.query.items()
             if k in ("follow", "previous", "timestamps", "tailLines", "limitBytes",
                      "sinceSeconds", "sinceTime", "stream")}
        path = "/containerLogs/%s/%s/%s" % (ns, name, urllib.parse.quote(c, safe=""))
        if q:
            path += "?" + urllib.parse.urlencode(q)
        return await self.node_proxy("GET", node, path)

    async def dial_node(self, node):
        """A TLS connection to the node's kubelet with the stand-in's client certificate."""
        n = self.get(KINDS[("", "nodes")], None, node)
        port = (n.get("status", {}).get("daemonEndpoints", {})
                .get("kubeletEndpoint", {}).get("Port"))
        if not port:
            raise ApiError(503, "ServiceUnavailable", "node %s has no kubelet port" % node)
        ctx = ssl.SSLContext(ssl.PROTOCOL_TLS_CLIENT)
        ctx.check_hostname = False
        ctx.verify_mode = ssl.CERT_NONE
        ctx.load_cert_chain(os.path.join(self.args.certs, "admin.crt"),
                            os.path.join(self.args.certs, "admin.key"))
        try:
            reader, writer = await asyncio.wait_for(
                asyncio.open_connection("127.0.0.1", port, ssl=ctx), 10)
        except (OSError, asyncio.TimeoutError) as e:
            raise ApiError(502, "ServiceUnavailable", "error dialing backend: %s" % e)
        return reader, writer, port

    def stream_target(self, req):
        """pods/NAME/exec|attach|portforward -> (node, kubelet path), as the API server's
        ExecLocation / AttachLocation / PortForwardLocation build them."""
        parts = [p for p in req.path.split("/") if p]
        if not (len(parts) == 7 and parts[:3] == ["api", "v1", "namespaces"] and
                parts[4] == "pods" and parts[6] in ("exec", "attach", "portforward")):
            return None
        ns, name, sub = parts[3], parts[5], parts[6]
        pod = self.get(KINDS[("", "pods")], ns, name)
        node = pod.get("spec", {}).get("nodeName")
        if not node:
            raise ApiError(400, "BadRequest", "pod %s does not have a host assigned" % name)
        q = urllib.parse.parse_qs(urllib.parse.urlsplit(req.raw_path).query,
                                  keep_blank_values=True)
        if sub == "portforward":
            params = [("port", p) for p in q.get("ports", [])]
            path = "/portForward/%s/%s" % (ns, name)
        else:
            ctrs = [c["name"] for c in pod.get("spec", {}).get("containers", [])]
            c = (q.get("container") or [""])[-1]
            if not c:
                if len(ctrs) != 1:
                    raise ApiError(400, "BadRequest",
                                   "a container name must be specified for pod %s" % name)
                c = ctrs[0]
            params = [(k2, "1") for k, k2 in (("stdin", "input"), ("stdout", "output"),
                                              ("stderr", "error"), ("tty", "tty"))
                      if (q.get(k) or [""])[-1] in ("true", "1")]
            params += [("command", x) for x in q.get("command", [])]
            path = "/%s/%s/%s/%s" % (sub, ns, name, urllib.parse.quote(c, safe=""))
        if params:
            path += "?" + urllib.parse.urlencode(params)
        return node, path

    async def node_proxy(self, method, node, path):
        reader, writer, port = await self.dial_node(node)
        writer.write(("%s %s HTTP/1.1\r\nHost: 127.0.0.1:%d\r\nConnection: close\r\n"
                      "User-Agent: klet-standin\r\n\r\n" % (method, path, port)).encode())
        try:
            head = await asyncio.wait_for(reader.readuntil(b"\r\n\r\n"), 30)
        except (OSError, asyncio.TimeoutError, asyncio.IncompleteReadError) as e:
            writer.close()
            raise ApiError(502, "ServiceUnavailable", "error reading from the node: %s" % e)
        lines = head.decode("latin-1").split("\r\n")
        code = int(lines[0].split(" ")[1])
        hdrs = {}
        for line in lines[1:]:
            if ":" in line:
                k, v = line.split(":", 1)
                hdrs[k.strip().lower()] = v.strip()
        chunked = "chunked" in hdrs.get("transfer-encoding", "")

        async def body():
            try:
                if not chunked:
                    while True:
                        b = await reader.read(65536)
                        if not b:
                            return
                        yield b
                while True:
                    size = int((await reader.readuntil(b"\r\n")).split(b";")[0], 16)
                    if size == 0:
                        return
                    b = await reader.readexactly(size + 2)
                    yield b[:-2]
            except (OSError, asyncio.IncompleteReadError, ValueError):
                return
            finally:
                writer.close()
        if code != 200:
            data = b"".join([b async for b in body()])
            raise ApiError(code, {400: "BadRequest", 401: "Unauthorized", 403: "Forbidden",
                                  404: "NotFound"}.get(code, "InternalError"),
                           data.decode("utf-8", "replace").strip())
        return StreamResponse(body(), hdrs.get("content-type", "text/plain"))

    def discovery(self, path):
        if path == "/version":
            return {"major": "1", "minor": "29", "gitVersion": "v1.29.0-klet-standin",
                    "platform": "linux/amd64"}
        if path == "/api":
            return {"kind": "APIVersions", "versions": ["v1"],
                    "serverAddressByClientCIDRs": [{"clientCIDR": "0.0.0.0/0",
                                                    "serverAddress": "127.0.0.1"}]}
        if path == "/apis":
            return {"kind": "APIGroupList", "apiVersion": "v1", "groups": [{
                "name": g,
                "versions": [{"groupVersion": g + "/v1", "version": "v1"}],
                "preferredVersion": {"groupVersion": g + "/v1", "version": "v1"}}
                for g in sorted({g for (g, _) in KINDS if g})]}
        group = "" if path == "/api/v1" else path.split("/")[2]
        res = []
        for (g, plural), k in KINDS.items():
            if g != group:
                continue
            verbs = ["create", "delete", "get", "list", "patch", "update", "watch"]
            res.append({"name": plural, "singularName": k.kind.lower(), "namespaced":
                        k.namespaced, "kind": k.kind, "verbs": verbs})
            if k.status_sub:
                res.append({"name": plural + "/status", "singularName": "", "namespaced":
                            k.namespaced, "kind": k.kind, "verbs": ["get", "patch", "update"]})
        gv = "v1" if not group else group + "/v1"
        return {"kind": "APIResourceList", "apiVersion": "v1", "groupVersion": gv,
                "resources": res}

    # -- verbs --

    def get(self, kind, ns, name):
        o = self.store.get(kind, ns or "", name)
        if o is None:
            raise not_found(kind.plural, name)
        return o

    def list(self, req, kind, ns):
        fpred = parse_selector(req.query.get("fieldSelector"), True)
        lpred = parse_selector(req.query.get("labelSelector"), False)
        limit = int(req.query.get("limit") or 0)
        cont = req.query.get("continue")
        st = self.store
        if cont:
            try:
                cid, off = json.loads(base64.urlsafe_b64decode(cont.encode()).decode())
            except (ValueError, TypeError):
                raise ApiError(400, "BadRequest", "invalid continue token")
            snap = st.snapshots.get(cid)
            if snap is None:
                raise ApiError(410, "Expired", "The provided continue parameter is too old to "
                               "display a consistent list result. You can start a new list "
                               "without the continue parameter.")
            rv, items = snap
        else:
            rvq = req.query.get("resourceVersion")
            if rvq not in (None, "", "0"):
                try:
                    n = int(rvq)
                except ValueError:
                    raise ApiError(400, "BadRequest", "invalid resourceVersion %r" % rvq)
                if n > st.rv:
                    raise too_large_rv(n, st.rv)
                if n < st.compacted and req.query.get("resourceVersionMatch") == "Exact":
                    raise ApiError(410, "Expired", "too old resource version: %d (%d)" %
                                   (n, st.compacted))
            rv = st.rv
            items = [copy.deepcopy(o) for o in st.list(kind, ns) if fpred(o) and lpred(o)]
            cid, off = None, 0
        page = items[off:off + limit] if limit > 0 else items[off:]
        md = {"resourceVersion": str(rv)}
        if limit > 0 and off + limit < len(items):
            if cid is None:
                cid = uuid.uuid4().hex
                st.snapshots[cid] = (rv, items)
            md["continue"] = base64.urlsafe_b64encode(
                json.dumps([cid, off + limit]).encode()).decode()
            md["remainingItemCount"] = len(items) - off - limit
        for o in page:
            o.pop("kind", None)
            o.pop("apiVersion", None)
        return Response(200, {"kind": kind.kind + "List", "apiVersion": kind.api_version,
                              "metadata": md, "items": page})

    def watch(self, req, kind, ns, name):
        fpred = parse_selector(req.query.get("fieldSelector"), True)
        lpred = parse_selector(req.query.get("labelSelector"), False)
        if name:
            base = fpred
            fpred = lambda o: base(o) and o["metadata"]["name"] == name  # noqa: E731
        bookmarks = req.query.get("allowWatchBookmarks") in ("1", "true")
        timeout = req.query.get("timeoutSeconds")
        timeout = float(timeout) if timeout else 1800.0 * (1 + random.random())
        rvq = req.query.get("resourceVersion") or ""
        st = self.store
        w = Watcher(kind, ns, lambda o: fpred(o) and lpred(o))
        backlog = []
        expired = None
        too_large = None
        if rvq in ("", "0"):
            for o in st.list(kind, ns):
                if w.pred(o):
                    backlog.append(("ADDED", copy.deepcopy(o)))
        else:
            try:
                n = int(rvq)
            except ValueError:
                raise ApiError(400, "BadRequest", "invalid resourceVersion %r" % rvq)
            if n < st.compacted:
                expired = n
            elif n > st.rv:
                too_large = too_large_rv(n, st.rv)
                if getattr(self, "too_large_mode", "status") != "event":
                    raise too_large
            else:
                # Replays what happened after n; objects that stop matching become DELETED.
                for rv, plural, etype, o, prev in st.history:
                    if rv <= n or plural != kind.plural:
                        continue
                    if ns is not None and o["metadata"].get("namespace") != ns:
                        continue
                    backlog.append((etype, o, prev))
        st.watchers.add(w)
        self.open_watches.add(w)
        api = self

        async def gen():
            try:
                if expired is not None:
                    err = ApiError(410, "Expired", "too old resource version: %d (%d)" %
                                   (expired, st.compacted)).status()
                    yield {"type": "ERROR", "object": err}
                    return
                if too_large is not None:
                    yield {"type": "ERROR", "object": too_large.status()}
                    return
                deadline = time.monotonic() + timeout
                last_bm = time.monotonic()
                queue = list(backlog)
                while True:
                    while queue:
                        ev = queue.pop(0)
                        if len(ev) == 2:
                            etype, o = ev
                        else:
                            # What a selector-filtered watch shows: the object entering,
                            # changing within, or leaving the selection.
                            etype, o, prev = ev
                            old = prev is not None and w.pred(prev)
                            new = etype != "DELETED" and w.pred(o)
                            if etype == "DELETED":
                                if not old:
                                    continue
                            elif old and new:
                                etype = "MODIFIED"
                            elif new:
                                etype = "ADDED"
                            elif old:
                                etype = "DELETED"
                            else:
                                continue
                        yield {"type": etype, "object": o}
                    if w.closed:
                        return
                    left = deadline - time.monotonic()
                    if left <= 0:
                        return
                    wait = left
                    if bookmarks:
                        wait = min(wait, max(0.01, last_bm + api.args.bookmark_interval -
                                             time.monotonic()))
                    try:
                        ev = await asyncio.wait_for(w.queue.get(), wait)
                        if ev is None:
                            return
                        queue.append(ev)
                    except asyncio.TimeoutError:
                        if bookmarks and time.monotonic() - last_bm >= \
                                api.args.bookmark_interval - 0.01:
                            last_bm = time.monotonic()
                            yield {"type": "BOOKMARK", "object": {
                                "kind": kind.kind, "apiVersion": kind.api_version,
                                "metadata": {"resourceVersion": str(st.rv)}}}
            finally:
                st.watchers.discard(w)
                api.open_watches.discard(w)
        return WatchResponse(gen(), w)

    def create(self, req, kind, ns, uid=None):
        obj = req.json()
        if not isinstance(obj, dict):
            raise ApiError(400, "BadRequest", "body is not an object")
        md = obj.setdefault("metadata", {})
        if not md.get("name") and md.get("generateName"):
            md["name"] = md["generateName"] + uuid.uuid4().hex[:5]
        if not md.get("name"):
            raise ApiError(422, "Invalid", "%s \"\" is invalid: metadata.name: Required value"
                           % kind.kind)
        if kind.namespaced:
            if md.get("namespace") not in (None, "", ns):
                raise ApiError(400, "BadRequest", "the namespace of the provided object does "
                               "not match the namespace sent on the request")
            md["namespace"] = ns
        else:
            md.pop("namespace", None)
        if self.store.get(kind, ns or "", md["name"]) is not None:
            raise ApiError(409, "AlreadyExists", '%s "%s" already exists' %
                           (kind.plural, md["name"]), {"name": md["name"], "kind": kind.plural})
        md["uid"] = uid or str(uuid.uuid4())
        md["creationTimestamp"] = now_rfc3339()
        if kind.plural == "secrets":
            secret_string_data(obj)
        for k in ("resourceVersion", "deletionTimestamp", "deletionGracePeriodSeconds"):
            md.pop(k, None)
        if kind.plural == "pods":
            spec = obj.setdefault("spec", {})
            spec.setdefault("terminationGracePeriodSeconds", 30)
            spec.setdefault("restartPolicy", "Always")
            spec.setdefault("dnsPolicy", "ClusterFirst")
            spec.setdefault("schedulerName", "default-scheduler")
            for c in spec.get("containers") or []:
                c.setdefault("terminationMessagePath", "/dev/termination-log")
                c.setdefault("terminationMessagePolicy", "File")
                img = c.get("image") or ""
                c.setdefault("imagePullPolicy", "Always" if img.endswith(":latest") or
                             ":" not in img.split("/")[-1] else "IfNotPresent")
            obj["status"] = {"phase": "Pending", "qosClass": "BestEffort"}
            self.runtime_class_admission(obj)
        if kind.plural == "events":
            obj.setdefault("count", 1)
        if kind.plural == "certificatesigningrequests":
            obj.setdefault("spec", {})["username"] = req.user or ""
            obj["status"] = {}
            if self.args.csr_auto_approve:
                self.csr_approve(obj, "AutoApproved", "approved by the stand-in")
        return Response(201, self.store.put(kind, obj, "ADDED"))

    def runtime_class_admission(self, pod):
        """The RuntimeClass admission plugin: a pod naming a class that does not exist is
        refused; the class's overhead.podFixed becomes the pod's spec.overhead (a different
        one given by the pod is refused)."""
        spec = pod["spec"]
        name = spec.get("runtimeClassName")
        if not name:
            return
        rc = self.store.get(KINDS[("node.k8s.io", "runtimeclasses")], "", name)
        pname = pod["metadata"]["name"]
        if rc is None:
            raise ApiError(403, "Forbidden", 'pods "%s" is forbidden: pod rejected: '
                           'RuntimeClass "%s" not found' % (pname, name))
        fixed = (rc.get("overhead") or {}).get("podFixed")
        if fixed:
            if spec.get("overhead") and spec["overhead"] != fixed:
                raise ApiError(403, "Forbidden", 'pods "%s" is forbidden: pod rejected: Pod\'s '
                               "Overhead doesn't match RuntimeClass's defined Overhead" % pname)
            spec["overhead"] = dict(fixed)

    # -- certificate signing requests --

    def csr_approve(self, obj, reason, message):
        obj.setdefault("status", {}).setdefault("conditions", []).append({
            "type": "Approved", "status": "True", "reason": reason, "message": message,
            "lastUpdateTime": now_rfc3339(), "lastTransitionTime": now_rfc3339()})
        self.csr_sign(obj)

    def csr_sign(self, obj):
        """Issues the certificate of an approved CSR with the stand-in's CA, valid for
        --csr-cert-seconds, as the kube-controller-manager's signer does."""
        import base64
        import datetime
        from cryptography import x509
        from cryptography.hazmat.primitives import hashes, serialization
        from cryptography.x509.oid import ExtendedKeyUsageOID
        if obj.get("status", {}).get("certificate"):
            return
        spec = obj.get("spec") or {}
        if spec.get("signerName") != "kubernetes.io/kube-apiserver-client-kubelet":
            obj["status"].setdefault("conditions", []).append({
                "type": "Failed", "status": "True", "reason": "SignerValidationFailure",
                "message": "unsupported signer %s" % spec.get("signerName"),
                "lastUpdateTime": now_rfc3339()})
            return
        csr = x509.load_pem_x509_csr(base64.b64decode(spec.get("request", "")))
        certs = self.args.certs
        with open(os.path.join(certs, "ca.crt"), "rb") as f:
            ca = x509.load_pem_x509_certificate(f.read())
        with open(os.path.join(certs, "ca.key"), "rb") as f:
            ca_key = serialization.load_pem_private_key(f.read(), None)
        now = datetime.datetime.utcnow()
        cert = (x509.CertificateBuilder().subject_name(csr.subject).issuer_name(ca.subject)
                .public_key(csr.public_key()).serial_number(x509.random_serial_number())
                .not_valid_before(now - datetime.timedelta(seconds=5))
                .not_valid_after(now + datetime.timedelta(seconds=self.args.csr_cert_seconds))
                .add_extension(x509.KeyUsage(True, False, False, False, False, False, False,
                                             False, False), critical=True)
                .add_extension(x509.ExtendedKeyUsage([ExtendedKeyUsageOID.CLIENT_AUTH]),
                               critical=False)
                .sign(ca_key, hashes.SHA256()))
        obj["status"]["certificate"] = base64.b64encode(
            cert.public_bytes(serialization.Encoding.PEM)).decode()

    def csr_approval(self, req, kind, name):
        """PUT .../approval: the conditions of the body replace the object's; an Approved one
        gets the certificate issued."""
        cur = copy.deepcopy(self.get(kind, None, name))
        new = req.json()
        conds = (new.get("status") or {}).get("conditions") or []
        cur.setdefault("status", {})["conditions"] = conds
        if any(c.get("type") == "Approved" for c in conds) and \
                not any(c.get("type") in ("Denied", "Failed") for c in conds):
            self.csr_sign(cur)
        return Response(200, self.store.put(kind, cur, "MODIFIED"))

    def check_preconditions(self, kind, cur, pre):
        if not pre:
            return
        md = cur["metadata"]
        if pre.get("uid") and pre["uid"] != md.get("uid"):
            raise conflict(kind.plural, md["name"], "Precondition failed: UID in precondition: "
                           "%s, UID in object meta: %s" % (pre["uid"], md.get("uid")))
        if pre.get("resourceVersion") and pre["resourceVersion"] != md.get("resourceVersion"):
            raise conflict(kind.plural, md["name"], "Precondition failed: ResourceVersion in "
                           "precondition: %s, ResourceVersion in object meta: %s" %
                           (pre["resourceVersion"], md.get("resourceVersion")))

    def apply_update(self, kind, cur, new, sub):
        """new replaces cur (for sub == status only the status changes)."""
        md = cur["metadata"]
        nmd = new.get("metadata") or {}
        if nmd.get("uid") and nmd["uid"] != md["uid"]:
            raise conflict(kind.plural, md["name"], "Precondition failed: UID in precondition: "
                           "%s, UID in object meta: %s" % (nmd["uid"], md["uid"]))
        if nmd.get("name") and nmd["name"] != md["name"]:
            raise ApiError(400, "BadRequest", "the name of the object (%s) does not match the "
                           "name on the URL (%s)" % (nmd["name"], md["name"]))
        if sub == "status" or (kind.status_sub and sub is None and kind.plural != "events"
                               and kind.plural != "leases"):
            out = copy.deepcopy(cur)
            if sub == "status":
                out["status"] = copy.deepcopy(new.get("status") or {})
            else:
                for k, v in new.items():
                    if k not in ("status", "metadata", "kind", "apiVersion"):
                        out[k] = copy.deepcopy(v)
                for k in ("labels", "annotations", "ownerReferences", "finalizers"):
                    if k in nmd:
                        out["metadata"][k] = copy.deepcopy(nmd[k])
                    else:
                        out["metadata"].pop(k, None)
        else:
            out = copy.deepcopy(new)
            out["metadata"] = dict(nmd)
            for k in ("uid", "creationTimestamp", "namespace", "name", "deletionTimestamp",
                      "deletionGracePeriodSeconds"):
                if k in md:
                    out["metadata"][k] = md[k]
        if out == cur:
            return cur  # a no-op update keeps its resourceVersion
        return self.store.put(kind, out, "MODIFIED")

    def token_request(self, req, ns, name):
        """POST serviceaccounts/NAME/token: a TokenRequest answered with a signed-looking token
        bound to the request's object; "default" exists in every namespace."""
        if name != "default" and \
                self.store.get(KINDS[("", "serviceaccounts")], ns, name) is None:
            raise not_found("serviceaccounts", name)
        tr = req.json()
        if not isinstance(tr, dict):
            raise ApiError(400, "BadRequest", "body is not an object")
        spec = tr.get("spec") or {}
        exp = int(spec.get("expirationSeconds") or 3600)
        if exp < 600:
            raise ApiError(422, "Invalid", "TokenRequest.authentication.k8s.io \"%s\" is "
                           "invalid: spec.expirationSeconds: Invalid value: %d: may not "
                           "specify a duration less than 10 minutes" % (name, exp))
        self.token_seq = getattr(self, "token_seq", 0) + 1
        now = time.time()
        if getattr(self, "token_lifetime", 0) > 0:
            exp = self.token_lifetime
        claims = {"aud": spec.get("audiences") or ["https://kubernetes.default.svc"],
                  "exp": int(now + exp), "iat": int(now), "seq": self.token_seq,
                  "sub": "system:serviceaccount:%s:%s" % (ns, name),
                  "kubernetes.io": {"namespace": ns, "serviceaccount": {"name": name},
                                    "pod": spec.get("boundObjectRef")}}
        enc = base64.urlsafe_b64encode(json.dumps(claims).encode()).decode().rstrip("=")
        tok = "eyJhbGciOiJSUzI1NiJ9.%s.standin" % enc
        out = {"apiVersion": "authentication.k8s.io/v1", "kind": "TokenRequest",
               "metadata": {"name": name, "namespace": ns}, "spec": spec,
               "status": {"token": tok, "expirationTimestamp": time.strftime(
                   "%Y-%m-%dT%H:%M:%SZ", time.gmtime(now + exp))}}
        return Response(201, out)

    def update(self, req, kind, ns, name, sub):
        cur = self.get(kind, ns, name)
        new = req.json()
        if not isinstance(new, dict):
            raise ApiError(400, "BadRequest", "body is not an object")
        if kind.plural == "secrets":
            secret_string_data(new)
        rv = (new.get("metadata") or {}).get("resourceVersion")
        if rv and rv != cur["metadata"]["resourceVersion"]:
            raise conflict(kind.plural, name, "the object has been modified; please apply your "
                           "changes to the latest version and try again")
        if not rv and kind.plural == "leases":
            raise ApiError(422, "Invalid", 'Lease "%s" is invalid: metadata.resourceVersion: '
                           'Invalid value: 0x0: must be specified for an update' % name)
        return Response(200, self.apply_update(kind, cur, new, sub))

    def patch(self, req, kind, ns, name, sub):
        cur = self.get(kind, ns, name)
        ct = req.headers.get("content-type", "").split(";")[0].strip()
        p = req.json()
        if ct == "application/strategic-merge-patch+json":
            if kind.group:
                raise ApiError(415, "UnsupportedMediaType", "strategic merge patch is not "
                               "supported for %s" % kind.plural)
            if not isinstance(p, dict):
                raise ApiError(400, "BadRequest", "patch is not an object")
            new = strategic_merge(cur, p)
        elif ct == "application/merge-patch+json":
            if not isinstance(p, dict):
                raise ApiError(400, "BadRequest", "patch is not an object")
            new = merge_patch(cur, p)
        elif ct == "application/json-patch+json":
            if not isinstance(p, list):
                raise ApiError(400, "BadRequest", "json patch is not a list")
            try:
                new = json_patch(cur, p)
            except (KeyError, IndexError, ValueError, TypeError) as e:
                raise ApiError(422, "Invalid", "json patch failed: %r" % e)
        else:
            raise ApiError(415, "UnsupportedMediaType", "the body of the request was in an "
                           "unknown format - accepted media types include: "
                           "application/json-patch+json, application/merge-patch+json, "
                           "application/apply-patch+yaml, application/strategic-merge-patch+json")
        if isinstance(p, dict):
            prv = (p.get("metadata") or {}).get("resourceVersion")
            if prv and prv != cur["metadata"]["resourceVersion"]:
                raise conflict(kind.plural, name, "the object has been modified; please apply "
                               "your changes to the latest version and try again")
        return Response(200, self.apply_update(kind, cur, new, sub))

    def delete(self, req, kind, ns, name):
        cur = self.get(kind, ns, name)
        opts = req.json() if req.body else {}
        if not isinstance(opts, dict):
            raise ApiError(400, "BadRequest", "DeleteOptions is not an object")
        self.check_preconditions(kind, cur, opts.get("preconditions"))
        grace = opts.get("gracePeriodSeconds")
        if req.query.get("gracePeriodSeconds") not in (None, ""):
            grace = int(req.query["gracePeriodSeconds"])
        if kind.plural == "pods":
            return self.delete_pod(kind, cur, grace)
        return Response(200, self.store.remove(kind, ns or "", name))

    def delete_pod(self, kind, cur, grace):
        md = cur["metadata"]
        spec = cur.get("spec") or {}
        phase = (cur.get("status") or {}).get("phase")
        if grace is None:
            grace = spec.get("terminationGracePeriodSeconds", 30)
        if not spec.get("nodeName") or phase in ("Succeeded", "Failed"):
            grace = 0
        if grace < 0:
            grace = 0
        if grace == 0:
            return Response(200, self.store.remove(kind, md["namespace"], md["name"]))
        old = md.get("deletionGracePeriodSeconds")
        if old is not None and old <= grace:
            return Response(200, cur)   # a graceful delete can only shorten the period
        out = copy.deepcopy(cur)
        out["metadata"]["deletionTimestamp"] = now_rfc3339(time.time() + grace)
        out["metadata"]["deletionGracePeriodSeconds"] = grace
        return Response(200, self.store.put(kind, out, "MODIFIED"))

    # -- control actions --

    def reset_watches(self, mode):
        n = 0
        for w in list(self.open_watches):
            w.closed = True
            w.reset_mode = mode
            w.queue.put_nowait(None)
            n += 1
        return n


# ---- transports ------------------------------------------------------------------------------

def peer_user_of(transport):
    sslobj = transport.get_extra_info("ssl_object")
    if sslobj is None:
        return None
    cert = sslobj.getpeercert()
    if not cert:
        return None
    for rdn in cert.get("subject", ()):
        for k, v in rdn:
            if k == "commonName":
                return v
    return None


def encode_body(obj):
    if isinstance(obj, (bytes, bytearray)):
        return bytes(obj), "text/plain"
    if isinstance(obj, str):
        return obj.encode(), "text/plain; charset=utf-8"
    return json.dumps(obj, separators=(",", ":")).encode() + b"\n", "application/json"


class Server:
    def __init__(self, args):
        self.args = args
        self.api = Api(args)
        self.conns = {}
        self.next_conn = 0
        self.server = None
        self.stats = {"connections": 0, "h2": 0, "http1": 0, "refused_until": 0}
        self.down = ""          # "", "refuse" or "blackhole" (/down, /up)
        self.hole = None        # the blackhole listener
        self.hole_conns = []
        ctx = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
        ctx.minimum_version = ssl.TLSVersion.TLSv1_2
        ctx.load_cert_chain(os.path.join(args.certs, "server.crt"),
                            os.path.join(args.certs, "server.key"))
        ctx.load_verify_locations(os.path.join(args.certs, "ca.crt"))
        ctx.verify_mode = ssl.CERT_OPTIONAL
        ctx.set_alpn_protocols(["h2", "http/1.1"] if not args.no_h2 else ["http/1.1"])
        self.ctx = ctx

    async def listen(self, port):
        loop = asyncio.get_running_loop()
        self.server = await loop.create_server(lambda: Conn(self), "127.0.0.1", port,
                                               ssl=self.ctx, reuse_address=True)
        return self.server.sockets[0].getsockname()[1]

    async def refuse(self, seconds, drop):
        port = self.port
        if self.server is not None:
            self.server.close()
            self.server = None
        if drop:
            for c in list(self.conns.values()):
                c.abort()
        self.stats["refused_until"] = time.time() + seconds
        await asyncio.sleep(seconds)
        while True:
            try:
                await self.listen(port)
                return
            except OSError:
                await asyncio.sleep(0.2)


    async def go_down(self, mode):
        """Unreachable until go_up: open connections dropped, the port closed (refuse) or
        accepting connections that are never answered (blackhole)."""
        if self.down:
            return
        self.down = mode
        if self.server is not None:
            self.server.close()
            self.server = None
        for c in list(self.conns.values()):
            c.abort()
        if mode != "blackhole":
            return
        srv = self

        class Hole(asyncio.Protocol):
            def connection_made(self, transport):
                srv.hole_conns.append(transport)

            def data_received(self, data):
                pass
        loop = asyncio.get_running_loop()
        while self.hole is None:
            try:
                self.hole = await loop.create_server(Hole, "127.0.0.1", self.port,
                                                     reuse_address=True)
            except OSError:
                await asyncio.sleep(0.05)

    async def go_up(self):
        if not self.down:
            return
        if self.hole is not None:
            self.hole.close()
            self.hole = None
        for t in self.hole_conns:
            t.abort()
        self.hole_conns = []
        while True:
            try:
                await self.listen(self.port)
                break
            except OSError:
                await asyncio.sleep(0.05)
        self.down = ""


class Conn(asyncio.Protocol):
    """One client connection: HTTP/2 or HTTP/1.1 by ALPN."""

    def __init__(self, server):
        self.server = server
        self.api = server.api
        self.transport = None
        self.h2 = None
        self.buf = b""
        self.streams = {}       # h2 stream id -> {"headers", "body", "task"}
        self.window_waiters = []
        self.closed = False
        self.goaway = False
        self.busy = False
        self.stalled = False

    def connection_made(self, transport):
        self.transport = transport
        s = self.server
        s.next_conn += 1
        self.id = s.next_conn
        s.conns[self.id] = self
        s.stats["connections"] += 1
        self.peer_user = peer_user_of(transport)
        sslobj = transport.get_extra_info("ssl_object")
        alpn = sslobj.selected_alpn_protocol() if sslobj else None
        if alpn == "h2":
            s.stats["h2"] += 1
            cfg = h2.config.H2Configuration(client_side=False, header_encoding="utf-8",
                                            validate_inbound_headers=False)
            self.h2 = h2.connection.H2Connection(config=cfg)
            self.h2.local_settings = h2.settings.Settings(
                client=False, initial_values={
                    h2.settings.SettingCodes.MAX_CONCURRENT_STREAMS: s.args.max_streams,
                    h2.settings.SettingCodes.INITIAL_WINDOW_SIZE: 1 << 20})
            self.h2.initiate_connection()
            self.h2.increment_flow_control_window(16 << 20)
            self.flush()
        else:
            s.stats["http1"] += 1

    def connection_lost(self, exc):
        self.closed = True
        self.server.conns.pop(self.id, None)
        for st in self.streams.values():
            if st.get("task"):
                st["task"].cancel()
        self.wake_writers()

    def abort(self):
        if self.transport:
            self.transport.abort()

    def flush(self):
        if self.h2 is not None and not self.closed and not self.stalled:
            data = self.h2.data_to_send()
            if data:
                self.transport.write(data)

    def wake_writers(self):
        for f in self.window_waiters:
            if not f.done():
                f.set_result(None)
        self.window_waiters = []

    # -- HTTP/2 --

    def data_received(self, data):
        if self.h2 is None:
            return self.h1_data(data)
        try:
            events = self.h2.receive_data(data)
        except h2.exceptions.ProtocolError:
            self.flush()
            self.transport.close()
            return
        for ev in events:
            if isinstance(ev, h2.events.RequestReceived):
                hdrs = dict(ev.headers)
                self.streams[ev.stream_id] = {"headers": hdrs, "body": b""}
                if ev.stream_ended:
                    self.dispatch(ev.stream_id)
            elif isinstance(ev, h2.events.DataReceived):
                st = self.streams.get(ev.stream_id)
                self.h2.acknowledge_received_data(ev.flow_controlled_length, ev.stream_id)
                if st is None:
                    continue
                st["body"] += ev.data
                if len(st["body"]) > MAX_BODY:
                    self.h2.reset_stream(ev.stream_id, 0x7)
                    self.streams.pop(ev.stream_id, None)
                    continue
                if ev.stream_ended:
                    self.dispatch(ev.stream_id)
            elif isinstance(ev, h2.events.StreamEnded):
                st = self.streams.get(ev.stream_id)
                if st is not None and "task" not in st:
                    self.dispatch(ev.stream_id)
            elif isinstance(ev, h2.events.StreamReset):
                st = self.streams.pop(ev.stream_id, None)
                if st and st.get("task"):
                    st["task"].cancel()
            elif isinstance(ev, h2.events.WindowUpdated):
                self.wake_writers()
            elif isinstance(ev, h2.events.RemoteSettingsChanged):
                self.wake_writers()
            elif isinstance(ev, h2.events.ConnectionTerminated):
                self.transport.close()
        self.flush()

    def dispatch(self, sid):
        st = self.streams[sid]
        h = st["headers"]
        req = Request(h.get(":method", "GET"), h.get(":path", "/"),
                      {k: v for k, v in h.items() if not k.startswith(":")}, st["body"],
                      None, self.id)
        st["task"] = asyncio.ensure_future(self.serve_h2(sid, req))

    async def send_h2_data(self, sid, data, end):
        while data:
            if self.closed:
                raise ConnectionError("closed")
            if sid not in self.streams:
                raise ConnectionError("stream gone")
            n = min(self.h2.local_flow_control_window(sid), self.h2.max_outbound_frame_size,
                    len(data))
            if n <= 0:
                f = asyncio.get_running_loop().create_future()
                self.window_waiters.append(f)
                await f
                continue
            self.h2.send_data(sid, data[:n], end_stream=(end and n == len(data)))
            data = data[n:]
            self.flush()
        if end and not data:
            pass

    async def serve_h2(self, sid, req):
        entry = self.api.record(req, "h2")
        try:
            resp = await self.api.handle(req, self.peer_user)
            entry["user"] = req.user
            if isinstance(resp, WatchResponse):
                entry["code"] = 200
                entry["watch"] = True
                self.h2.send_headers(sid, [(":status", "200"),
                                           ("content-type", getattr(resp, "ctype",
                                                                    "application/json"))])
                self.flush()
                async for ev in resp.gen:
                    b = stream_chunk(ev)
                    entry["resp_bytes"] += len(b)
                    await self.send_h2_data(sid, b, False)
                if resp.watcher is not None and \
                        getattr(resp.watcher, "reset_mode", None) == "rst":
                    self.h2.reset_stream(sid, 0x8)
                else:
                    self.h2.end_stream(sid)
                self.flush()
            else:
                body, ctype = encode_body(resp.obj)
                entry["code"] = resp.code
                entry["resp_bytes"] = len(body)
                hdrs = [(":status", str(resp.code)), ("content-type", ctype),
                        ("content-length", str(len(body)))] + list(resp.headers)
                self.h2.send_headers(sid, hdrs, end_stream=not body)
                self.flush()
                if body:
                    await self.send_h2_data(sid, body, True)
        except (ConnectionError, asyncio.CancelledError, h2.exceptions.StreamClosedError):
            pass
        except h2.exceptions.ProtocolError:
            pass
        finally:
            self.streams.pop(sid, None)
            self.maybe_close_after_goaway()

    def send_goaway(self):
        if self.h2 is None:
            self.transport.close()
            return
        self.goaway = True
        last = self.h2.highest_inbound_stream_id
        # Written by hand: python-h2 refuses to send anything after its own GOAWAY, while a
        # draining server must still finish the streams it accepted.
        self.flush()
        self.transport.write(hyperframe.frame.GoAwayFrame(
            stream_id=0, last_stream_id=last, error_code=0).serialize())
        self.maybe_close_after_goaway()

    def maybe_close_after_goaway(self):
        if self.goaway and not self.streams and not self.closed:
            self.transport.close()

    # -- HTTP/1.1 --

    def h1_data(self, data):
        if getattr(self, "tunnel", None) is not None:
            self.tunnel.write(data)
            return
        self.buf += data
        if len(self.buf) > MAX_BODY + 65536:
            self.transport.close()
            return
        if self.busy:
            return
        self.h1_next()

    def h1_next(self):
        i = self.buf.find(b"\r\n\r\n")
        if i < 0:
            return
        head = self.buf[:i].decode("latin-1").split("\r\n")
        try:
            method, path, _ = head[0].split(" ", 2)
        except ValueError:
            self.transport.close()
            return
        hdrs = {}
        raw_hdrs = []
        for line in head[1:]:
            if ":" in line:
                k, v = line.split(":", 1)
                hdrs[k.strip().lower()] = v.strip()
                raw_hdrs.append((k.strip(), v.strip()))
        n = int(hdrs.get("content-length", "0") or 0)
        if len(self.buf) < i + 4 + n:
            return
        body = self.buf[i + 4:i + 4 + n]
        self.buf = self.buf[i + 4 + n:]
        self.busy = True
        req = Request(method, path, hdrs, body, None, self.id)
        if "upgrade" in hdrs:
            req.raw_headers = raw_hdrs  # repeated ones (X-Stream-Protocol-Version) kept
            self.streams[1] = {"task": asyncio.ensure_future(self.serve_upgrade(req))}
            return
        self.streams[1] = {"task": asyncio.ensure_future(self.serve_h1(req))}

    def h1_write_head(self, code, hdrs):
        reason = {200: "OK", 201: "Created", 401: "Unauthorized", 404: "Not Found",
                  409: "Conflict", 410: "Gone", 429: "Too Many Requests"}.get(code, "Status")
        lines = ["HTTP/1.1 %d %s" % (code, reason)] + ["%s: %s" % kv for kv in hdrs]
        self.transport.write(("\r\n".join(lines) + "\r\n\r\n").encode("latin-1"))

    async def serve_upgrade(self, req):
        """exec / attach / portforward: the upgrade request goes to the node, then bytes
        flow both ways until one side closes (the API server's UpgradeAwareHandler)."""
        entry = self.api.record(req, "http/1.1")
        writer = None
        try:
            req.user = self.api.authenticate(req, self.peer_user)
            target = self.api.stream_target(req)
            if target is None:
                raise ApiError(400, "BadRequest", "upgrade not supported on %s" % req.path)
            node, path = target
            reader, writer, port = await self.api.dial_node(node)
        except ApiError as e:
            body, ctype = encode_body(e.status())
            entry["code"] = e.code
            self.h1_write_head(e.code, [("Content-Type", ctype),
                                        ("Content-Length", str(len(body)))])
            self.transport.write(body)
            self.streams.pop(1, None)
            self.busy = False
            return
        head = "%s %s HTTP/1.1\r\nHost: 127.0.0.1:%d\r\n" % (req.method, path, port)
        for k, v in req.raw_headers:
            if k.lower() not in ("host", "authorization"):
                head += "%s: %s\r\n" % (k, v)
        writer.write(head.encode("latin-1") + b"\r\n" + (req.body or b""))
        self.tunnel = writer
        if self.buf:
            writer.write(self.buf)
            self.buf = b""
        entry["code"] = 101
        try:
            while not self.closed:
                b = await reader.read(65536)
                if not b:
                    break
                self.transport.write(b)
        except (OSError, asyncio.CancelledError):
            pass
        finally:
            writer.close()
            self.streams.pop(1, None)
            if not self.closed:
                self.transport.close()

    async def serve_h1(self, req):
        entry = self.api.record(req, "http/1.1")
        try:
            resp = await self.api.handle(req, self.peer_user)
            entry["user"] = req.user
            if isinstance(resp, WatchResponse):
                entry["code"] = 200
                entry["watch"] = True
                self.h1_write_head(200, [("Content-Type", getattr(resp, "ctype",
                                                                  "application/json")),
                                         ("Transfer-Encoding", "chunked")])
                async for ev in resp.gen:
                    if self.closed:
                        return
                    b = stream_chunk(ev)
                    entry["resp_bytes"] += len(b)
                    self.transport.write(b"%x\r\n%s\r\n" % (len(b), b))
                self.transport.write(b"0\r\n\r\n")
            else:
                body, ctype = encode_body(resp.obj)
                entry["code"] = resp.code
                entry["resp_bytes"] = len(body)
                self.h1_write_head(resp.code, [("Content-Type", ctype),
                                               ("Content-Length", str(len(body)))] +
                                   list(resp.headers))
                self.transport.write(body)
        except asyncio.CancelledError:
            return
        finally:
            self.streams.pop(1, None)
        self.busy = False
        if not self.closed:
            if self.goaway:
                self.transport.close()
            else:
                self.h1_next()


# ---- control port ----------------------------------------------------------------------------

class Control:
    def __init__(self, server):
        self.server = server
        self.api = server.api

    async def handle(self, reader, writer):
        try:
            head = await reader.readuntil(b"\r\n\r\n")
            lines = head.decode("latin-1").split("\r\n")
            method, path, _ = lines[0].split(" ", 2)
            hdrs = {}
            for line in lines[1:]:
                if ":" in line:
                    k, v = line.split(":", 1)
                    hdrs[k.strip().lower()] = v.strip()
            n = int(hdrs.get("content-length", "0") or 0)
            body = await reader.readexactly(n) if n else b""
            try:
                code, out = await self.command(method, path, body)
            except ApiError as e:
                code, out = e.code, e.status()
            except Exception as e:  # bad input to the control port
                code, out = 400, {"error": repr(e)}
            data = json.dumps(out, separators=(",", ":")).encode() + b"\n"
            writer.write(b"HTTP/1.1 %d X\r\nContent-Type: application/json\r\n"
                         b"Content-Length: %d\r\nConnection: close\r\n\r\n" % (code, len(data)))
            writer.write(data)
            await writer.drain()
        except (asyncio.IncompleteReadError, ConnectionError, ValueError):
            pass
        finally:
            writer.close()

    async def command(self, method, path, body):
        u = urllib.parse.urlsplit(path)
        q = {k: v[-1] for k, v in urllib.parse.parse_qs(u.query).items()}
        p = [x for x in u.path.split("/") if x]
        api, st, srv = self.api, self.api.store, self.server
        if method == "DELETE":
            q["method"] = "DELETE"
        if not p or p == ["healthz"]:
            return 200, "ok"
        if p == ["log"]:
            since = int(q.get("since", "0"))
            return 200, [e for e in api.log if e["seq"] > since]
        if p == ["log", "clear"]:
            api.log = []
            return 200, {"cleared": True, "seq": api.seq}
        if p == ["reset-watches"]:
            return 200, {"reset": api.reset_watches(q.get("mode", "end"))}
        if p == ["goaway"]:
            n = 0
            for c in list(srv.conns.values()):
                c.send_goaway()
                n += 1
            # Open watch streams end shortly after, as a draining server's would.
            asyncio.get_running_loop().call_later(0.3, api.reset_watches, "end")
            return 200, {"goaway": n}
        if p == ["compact"]:
            st.compact()
            return 200, {"compacted": st.compacted}
        if p == ["fail"]:
            ra = q.get("retry_after")
            api.faults.append([int(q.get("n", "1")), int(q.get("code", "503")),
                               int(ra) if ra is not None else None, q.get("match")])
            return 200, {"faults": api.faults}
        if p == ["refuse"]:
            secs = float(q.get("seconds", "1"))
            asyncio.ensure_future(srv.refuse(secs, q.get("drop") in ("1", "true")))
            await asyncio.sleep(0.05)
            return 200, {"refusing": secs}
        if p == ["down"]:
            mode = q.get("mode", "refuse")
            if mode not in ("refuse", "blackhole"):
                raise ValueError("mode must be refuse or blackhole")
            await srv.go_down(mode)
            return 200, {"down": mode}
        if p == ["up"]:
            await srv.go_up()
            return 200, {"down": ""}
        if p == ["rewind"]:
            return 200, self.rewind(q)
        if p == ["token-lifetime"]:
            # volumes: tokens issued from now on expire after S seconds (0: as asked).
            api.token_lifetime = int(q.get("seconds", "0"))
            return 200, {"token_lifetime": api.token_lifetime}
        if p == ["stall"]:
            secs = float(q.get("seconds", "1"))
            conns = list(srv.conns.values())
            # Neither reads nor writes: to the client, a silent peer.
            for c in conns:
                c.transport.pause_reading()
                c.stalled = True

            def resume():
                for c in conns:
                    c.stalled = False
                    if not c.closed:
                        c.transport.resume_reading()
                        c.flush()
            asyncio.get_running_loop().call_later(secs, resume)
            return 200, {"stalled": len(conns)}
        if p == ["objects"]:
            return 200, [o for (plural, _, _), o in sorted(st.objs.items())
                         if not q.get("kind") or plural == q["kind"]]
        if p == ["stats"]:
            s = dict(srv.stats)
            s.update({"down": srv.down, "rv": st.rv, "compacted": st.compacted, "open_watches":
                      len(api.open_watches), "open_connections": len(srv.conns),
                      "requests": api.seq})
            return 200, s
        kinds = {"pods": KINDS[("", "pods")], "nodes": KINDS[("", "nodes")],
                 "leases": KINDS[("coordination.k8s.io", "leases")],
                 "events": KINDS[("", "events")]}
        if p == ["pods"] and method == "POST":
            obj = json.loads(body)
            ns = (obj.get("metadata") or {}).get("namespace") or "default"
            r = api.create(Request("POST", "/", {}, body, "ctl", 0), kinds["pods"], ns,
                           uid=q.get("uid"))
            return r.code, r.obj
        if len(p) >= 3 and p[0] == "pods":
            ns, name = p[1], p[2]
            if len(p) == 4 and p[3] == "get":
                return 200, api.get(kinds["pods"], ns, name)
            if len(p) == 4 and p[3] == "status" and method in ("POST", "PUT", "PATCH"):
                cur = api.get(kinds["pods"], ns, name)
                new = merge_patch(cur, {"status": json.loads(body)})
                return 200, api.apply_update(kinds["pods"], cur, new, "status")
            if q.get("method") == "DELETE" or (len(p) == 4 and p[3] == "delete"):
                cur = api.get(kinds["pods"], ns, name)
                grace = int(q["grace"]) if "grace" in q else None
                r = api.delete_pod(kinds["pods"], cur, grace)
                return r.code, r.obj
            return 200, api.get(kinds["pods"], ns, name)
        if len(p) == 3 and p[0] in ("nodes", "leases") and p[2] == "delete":
            k = kinds[p[0]]
            ns = "kube-node-lease" if p[0] == "leases" else ""
            if st.get(k, ns, p[1]) is None:
                raise not_found(p[0], p[1])
            return 200, st.remove(k, ns, p[1])
        return 404, {"error": "unknown control command %s" % u.path}


def control_rewind(self, q):
    """/rewind: the store goes back in time; open watches end (their clients re-watch from
    a resourceVersion the store no longer has)."""
    mode = q.get("mode", "status")
    if mode not in ("status", "event"):
        raise ValueError("mode must be status or event")
    api = self.api
    before = api.store.rv
    api.store.rewind(int(q.get("rv", "1")))
    api.too_large_mode = mode
    api.reset_watches("end")
    return {"rv": api.store.rv, "was": before, "mode": mode}


Control.rewind = control_rewind


# ---- fleet-scale mode (--scale; tests/scale/scale.py) -----------------------------------------
# Kept apart from the rest: installed by scale_install() when --scale is given, changing
# nothing otherwise. (1) Event fan-out indexed by the watch's single-value field selector
# (spec.nodeName=X, metadata.name=X): an event wakes only the watches it concerns instead of
# every watch of its kind. (2) Byte counters at the transport (TLS payload in and out).
# (3) Control paths: /scale/stats?since=SEQ aggregates the request log (by verb and resource,
# LISTs, per-second rate) and /scale/pods (POST, a JSON array) creates many pods at once.

SCALE_IDX_FIELDS = ("spec.nodeName", "metadata.name")


def scale_index_key(req):
    fs = (req.query.get("fieldSelector") or "").strip()
    if not fs or "," in fs or "!=" in fs:
        return None
    k, _, v = fs.replace("==", "=").partition("=")
    k = k.strip()
    return (k, v.strip()) if k in SCALE_IDX_FIELDS else None


def scale_obj_value(obj, field):
    if obj is None:
        return None
    if field == "spec.nodeName":
        return (obj.get("spec") or {}).get("nodeName")
    return (obj.get("metadata") or {}).get("name")


def scale_emit(self, kind, etype, obj, prev):
    """Store.emit with the fan-out restricted to the watches an event concerns."""
    rv = int(obj["metadata"]["resourceVersion"])
    obj = copy.deepcopy(obj)
    self.history.append((rv, kind.plural, etype, obj, prev))
    if len(self.history) > self.scale_history:
        self.history = self.history[-(self.scale_history // 2):]
        self.compacted = max(self.compacted, self.history[0][0] - 1)
    ns = obj["metadata"].get("namespace")
    for w in list(self.watchers):
        if w.kind is not kind or (w.ns is not None and ns != w.ns):
            continue
        key = getattr(w, "scale_key", None)
        if key is not None and scale_obj_value(obj, key[0]) != key[1] and \
                scale_obj_value(prev, key[0]) != key[1]:
            continue
        w.queue.put_nowait((etype, obj, prev))
    if kind.plural == "pods":
        scale_pod_times(self, etype, obj)


def scale_pod_times(st, etype, obj):
    """Creation and first Running (all containers ready) times of each pod, as stored."""
    md = obj["metadata"]
    key = md.get("namespace", "") + "/" + md["name"]
    t = st.scale_times.get(key)
    if etype == "ADDED" and (t is None or t[2] != md.get("uid")):
        st.scale_times[key] = t = [time.time(), None, md.get("uid"),
                                   (obj.get("spec") or {}).get("nodeName")]
    if t is None or t[1] is not None or etype == "DELETED":
        return
    status = obj.get("status") or {}
    cs = status.get("containerStatuses") or []
    if status.get("phase") == "Running" and cs and all(c.get("ready") for c in cs):
        t[1] = time.time()


def scale_pods(st, since):
    phases = {}
    for (plural, _, _), o in st.objs.items():
        if plural == "pods":
            ph = (o.get("status") or {}).get("phase", "")
            phases[ph] = phases.get(ph, 0) + 1
    lat = {k: [round(t[1] - t[0], 3) if t[1] else None, t[3]]
           for k, t in st.scale_times.items() if t[0] >= since}
    return {"phases": phases, "lat": lat}


def scale_list(self, kind, ns):
    """Store.list without sorting every object of every kind (events pile up at scale)."""
    return [o for (p, n, _), o in sorted(kv for kv in self.objs.items()
                                         if kv[0][0] == kind.plural)
            if ns is None or n == ns]


def scale_resource(e):
    parts = [x for x in e["path"].split("/") if x]
    if parts[:2] == ["api", "v1"]:
        rest = parts[2:]
    elif parts[:1] == ["apis"] and len(parts) >= 3:
        rest = parts[3:]
    else:
        return e["method"], e["path"]
    watch = bool(rest) and rest[0] == "watch"
    if watch:
        rest = rest[1:]
    if len(rest) >= 2 and rest[0] == "namespaces":
        rest = rest[2:] if len(rest) > 2 else ["namespaces"]
    if not rest:
        return e["method"], "discovery"
    res = rest[0] + ("/" + rest[2] if len(rest) > 2 else "")
    verb = e["method"]
    if e.get("watch") or watch or e["query"].get("watch") in ("1", "true"):
        verb = "WATCH"
    elif verb == "GET" and len(rest) == 1:
        verb = "LIST"
    return verb, res


def scale_stats(api, srv, since):
    by, per_s, codes = {}, {}, {}
    n = 0
    for e in reversed(api.log):
        if e["seq"] <= since:
            break
        n += 1
        verb, res = scale_resource(e)
        k = verb + " " + res
        by[k] = by.get(k, 0) + 1
        sec = int(e["t"])
        per_s[sec] = per_s.get(sec, 0) + 1
        c = str(e.get("code", 0))
        codes[c] = codes.get(c, 0) + 1
    return {"seq": api.seq, "requests": n, "by": by, "per_second": per_s, "codes": codes,
            "bytes_in": srv.scale_bytes[0], "bytes_out": srv.scale_bytes[1],
            "open_watches": len(api.open_watches), "open_connections": len(srv.conns),
            "rv": api.store.rv, "compacted": api.store.compacted, "pid": os.getpid()}


def scale_install(srv, history):
    api = srv.api
    st = api.store
    st.scale_history = history
    st.emit = scale_emit.__get__(st)
    st.list = scale_list.__get__(st)
    st.scale_times = {}
    srv.scale_bytes = [0, 0]
    orig_watch = api.watch

    def watch(req, kind, ns, name):
        r = orig_watch(req, kind, ns, name)
        if isinstance(r, WatchResponse) and not name:
            r.watcher.scale_key = scale_index_key(req)
        return r
    api.watch = watch

    orig_made = Conn.connection_made
    orig_recv = Conn.data_received

    def connection_made(self, transport):
        w = transport.write

        def write(data):
            srv.scale_bytes[1] += len(data)
            return w(data)
        transport.write = write
        return orig_made(self, transport)

    def data_received(self, data):
        srv.scale_bytes[0] += len(data)
        return orig_recv(self, data)
    Conn.connection_made = connection_made
    Conn.data_received = data_received

    orig_command = Control.command

    async def command(self, method, path, body):
        u = urllib.parse.urlsplit(path)
        q = {k: v[-1] for k, v in urllib.parse.parse_qs(u.query).items()}
        if u.path == "/scale/stats":
            return 200, scale_stats(api, srv, int(q.get("since", "0")))
        if u.path == "/scale/pods" and method != "POST":
            return 200, scale_pods(api.store, float(q.get("since", "0")))
        if u.path == "/scale/pods" and method == "POST":
            made = 0
            for obj in json.loads(body):
                ns = (obj.get("metadata") or {}).get("namespace") or "default"
                r = api.create(Request("POST", "/", {}, json.dumps(obj).encode(), "ctl", 0),
                               KINDS[("", "pods")], ns)
                made += r.code == 201 or r.code == 200
            return 200, {"created": made}
        return await orig_command(self, method, path, body)
    Control.command = command


async def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--certs", required=True)
    ap.add_argument("--port", type=int, default=0)
    ap.add_argument("--ctl-port", type=int, default=0)
    ap.add_argument("--state-file")
    ap.add_argument("--token", action="append", help="TOKEN=USER (repeatable)")
    ap.add_argument("--max-streams", type=int, default=100)
    ap.add_argument("--sar-allow", action="append", default=[],
                    help="SubjectAccessReview allows USER (repeatable)")
    ap.add_argument("--bookmark-interval", type=float, default=BOOKMARK_INTERVAL)
    ap.add_argument("--no-h2", action="store_true", help="offer only http/1.1 in ALPN")
    ap.add_argument("--csr-auto-approve", action="store_true",
                    help="approve and sign certificate signing requests at once")
    ap.add_argument("--csr-cert-seconds", type=int, default=365 * 86400,
                    help="lifetime of the certificates it signs")
    ap.add_argument("--scale", type=int, default=0, metavar="HISTORY",
                    help="fleet-scale mode keeping HISTORY events (tests/scale/scale.py)")
    args = ap.parse_args()
    srv = Server(args)
    if args.scale:
        scale_install(srv, args.scale)
    srv.port = await srv.listen(args.port)
    ctl = Control(srv)
    cserver = await asyncio.start_server(ctl.handle, "127.0.0.1", args.ctl_port)
    cport = cserver.sockets[0].getsockname()[1]
    if args.state_file:
        tmp = args.state_file + ".tmp"
        with open(tmp, "w") as f:
            f.write("%d %d\n" % (srv.port, cport))
        os.rename(tmp, args.state_file)
    sys.stderr.write("apiserver: listening on https://127.0.0.1:%d control http://127.0.0.1:%d\n"
                     % (srv.port, cport))
    stop = asyncio.get_running_loop().create_future()
    for s in (signal.SIGTERM, signal.SIGINT):
        asyncio.get_running_loop().add_signal_handler(s, lambda: stop.done() or
                                                      stop.set_result(None))
    await stop


if __name__ == "__main__":
    asyncio.run(main())
