"""Python protobuf and gRPC code for runtime.v1, generated from schema/cri/api.proto.

load() returns (api_pb2, api_pb2_grpc). The code is generated with grpc_tools.protoc
at run time into a cache directory outside the source tree, keyed by the .proto's
hash ($KLET_FAKECRI_GENDIR, default $TMPDIR/klet-cripb-UID-HASH); nothing generated is
ever written next to the sources. $KLET_CRI_PROTO overrides the .proto path.
"""
import hashlib
import importlib
import os
import shutil
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))


def proto_path():
    p = os.environ.get("KLET_CRI_PROTO")
    if p:
        return p
    return os.path.normpath(os.path.join(HERE, "..", "..", "schema", "cri", "api.proto"))


def _generate(proto, out):
    from grpc_tools import protoc  # python3-grpc-tools
    inc = os.path.dirname(proto)
    args = ["protoc", "-I" + inc]
    # well-known types shipped with grpc_tools, if present
    try:
        import pkg_resources  # noqa: F401
        wk = pkg_resources.resource_filename("grpc_tools", "_proto")
        if os.path.isdir(wk):
            args.append("-I" + wk)
    except Exception:
        pass
    args += ["--python_out=" + out, "--grpc_python_out=" + out, proto]
    rc = protoc.main(args)
    if rc != 0:
        raise RuntimeError("grpc_tools.protoc failed on %s (exit %d)" % (proto, rc))


def load():
    proto = proto_path()
    with open(proto, "rb") as f:
        digest = hashlib.sha256(f.read()).hexdigest()[:16]
    gendir = os.environ.get("KLET_FAKECRI_GENDIR") or os.path.join(
        tempfile.gettempdir(), "klet-cripb-%d-%s" % (os.getuid(), digest))
    if not os.path.exists(os.path.join(gendir, "api_pb2_grpc.py")):
        os.makedirs(os.path.dirname(gendir) or ".", exist_ok=True)
        tmp = tempfile.mkdtemp(prefix=".cripb-", dir=os.path.dirname(gendir) or ".")
        try:
            _generate(proto, tmp)
            try:
                os.rename(tmp, gendir)
            except OSError:
                # someone else won the race, or KLET_FAKECRI_GENDIR exists: copy in
                os.makedirs(gendir, exist_ok=True)
                for n in ("api_pb2.py", "api_pb2_grpc.py"):
                    shutil.copy(os.path.join(tmp, n), os.path.join(gendir, n + ".tmp"))
                    os.replace(os.path.join(gendir, n + ".tmp"), os.path.join(gendir, n))
        finally:
            shutil.rmtree(tmp, ignore_errors=True)
    if gendir not in sys.path:
        sys.path.insert(0, gendir)
    sys.dont_write_bytecode = True
    return importlib.import_module("api_pb2"), importlib.import_module("api_pb2_grpc")
