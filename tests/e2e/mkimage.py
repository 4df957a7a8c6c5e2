#!/usr/bin/python3
"""mkimage.py NAME TAG MIB OUT — an OCI image-layout tarball for tests: one uncompressed layer
holding a static busybox (/bin/busybox, from KLET_BUSYBOX or /bin/busybox) and MIB MiB of
bytes derived from NAME (so that each image has its own layers and ID). Import with
ctr -n k8s.io images import --snapshotter overlayfs OUT."""
import hashlib
import io
import json
import os
import sys
import tarfile

name, tag, mib, out = sys.argv[1], sys.argv[2], int(sys.argv[3]), sys.argv[4]
arch = {"x86_64": "amd64", "aarch64": "arm64"}.get(os.uname().machine, os.uname().machine)


def sha(b):
    return "sha256:" + hashlib.sha256(b).hexdigest()


def tar(items):
    buf = io.BytesIO()
    with tarfile.open(fileobj=buf, mode="w", format=tarfile.PAX_FORMAT) as tf:
        for path, data, mode in items:
            ti = tarfile.TarInfo(path)
            ti.mtime = 0
            ti.mode = mode
            if data is None:
                ti.type = tarfile.DIRTYPE
                tf.addfile(ti)
            else:
                ti.size = len(data)
                tf.addfile(ti, io.BytesIO(data))
    return buf.getvalue()


with open(os.environ.get("KLET_BUSYBOX", "/bin/busybox"), "rb") as f:
    bb = f.read()
seed = hashlib.sha256(name.encode()).digest()
filler = bytearray()
block = seed
while len(filler) < mib << 20:
    block = hashlib.sha256(block).digest()
    filler += block * 1024  # 32 KiB steps, distinct per image
layer = tar([("bin", None, 0o755), ("bin/busybox", bb, 0o755), ("data", bytes(filler[: mib << 20]), 0o644)])
config = {"architecture": arch, "os": "linux",
          "config": {"Env": ["PATH=/bin"], "Cmd": ["/bin/busybox", "sleep", "3600"]},
          "rootfs": {"type": "layers", "diff_ids": [sha(layer)]}}
config_b = json.dumps(config, sort_keys=True).encode()
manifest = {"schemaVersion": 2, "mediaType": "application/vnd.oci.image.manifest.v1+json",
            "config": {"mediaType": "application/vnd.oci.image.config.v1+json",
                       "digest": sha(config_b), "size": len(config_b)},
            "layers": [{"mediaType": "application/vnd.oci.image.layer.v1.tar",
                        "digest": sha(layer), "size": len(layer)}]}
manifest_b = json.dumps(manifest, sort_keys=True).encode()
index = {"schemaVersion": 2, "manifests": [{
    "mediaType": "application/vnd.oci.image.manifest.v1+json", "digest": sha(manifest_b),
    "size": len(manifest_b), "platform": {"architecture": arch, "os": "linux"},
    "annotations": {"io.containerd.image.name": name + ":" + tag,
                    "org.opencontainers.image.ref.name": tag}}]}
items = [("oci-layout", b'{"imageLayoutVersion":"1.0.0"}', 0o644),
         ("index.json", json.dumps(index).encode(), 0o644),
         ("blobs", None, 0o755), ("blobs/sha256", None, 0o755)]
for b in (layer, config_b, manifest_b):
    items.append(("blobs/sha256/" + sha(b)[7:], b, 0o644))
with open(out, "wb") as f:
    f.write(tar(items))
