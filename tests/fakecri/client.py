#!/usr/bin/env python3
"""A generic runtime.v1 client (Python grpcio) for shell tests and benchmarks.

  client.py [--timeout SEC] SOCKET METHOD [JSON]

METHOD is a RuntimeService or ImageService method name (e.g. ListContainers,
PullImage); JSON is the request in protobuf JSON form (field names as in the .proto).
Prints the response as one JSON line (proto field names, defaults included) and
exits 0, or prints "ERROR CODE: message" on stderr and exits 2.
Embedded: cri = Client(sock); cri.call("Version", {}) -> dict (raises grpc.RpcError).
"""
import json
import os
import sys

sys.dont_write_bytecode = True
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

import grpc  # noqa: E402
from google.protobuf import json_format  # noqa: E402

import cripb  # noqa: E402

pb, pb_grpc = cripb.load()


class Client:
    def __init__(self, sock, timeout=30.0):
        if sock.startswith("unix://"):
            sock = sock[len("unix://"):]
        self.timeout = timeout
        self.chan = grpc.insecure_channel("unix:" + sock, options=[
            ("grpc.max_receive_message_length", 16 << 20)])
        self.stubs = {
            "RuntimeService": pb_grpc.RuntimeServiceStub(self.chan),
            "ImageService": pb_grpc.ImageServiceStub(self.chan),
        }
        self.methods = {}
        for sname, sd in pb.DESCRIPTOR.services_by_name.items():
            for m in sd.methods:
                self.methods[m.name] = (sname, m)

    def call_pb(self, method, req=None, timeout=None):
        sname, m = self.methods[method]
        if req is None:
            req = getattr(pb, m.input_type.name)()
        elif isinstance(req, dict):
            req = json_format.ParseDict(req, getattr(pb, m.input_type.name)())
        fn = getattr(self.stubs[sname], method)
        return fn(req, timeout=timeout or self.timeout)

    def call(self, method, req=None, timeout=None):
        r = self.call_pb(method, req, timeout)
        if self.methods[method][1].server_streaming:
            return r
        return json_format.MessageToDict(r, preserving_proto_field_name=True,
                                         including_default_value_fields=True)

    def close(self):
        self.chan.close()


def main(argv):
    timeout = 30.0
    if len(argv) > 2 and argv[1] == "--timeout":
        timeout = float(argv[2])
        argv = argv[:1] + argv[3:]
    if len(argv) < 3:
        print(__doc__, file=sys.stderr)
        return 64
    c = Client(argv[1], timeout)
    req = json.loads(argv[3]) if len(argv) > 3 else {}
    try:
        r = c.call(argv[2], req)
    except grpc.RpcError as e:
        print("ERROR %s: %s" % (e.code().name, e.details()), file=sys.stderr)
        return 2
    print(json.dumps(r, sort_keys=True))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
