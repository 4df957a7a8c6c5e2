#!/bin/sh
# contrib/mkimages.sh DIR — builds two OCI image-layout tarballs without any registry:
#   DIR/busybox.tar  klet.local/busybox:1.35  Debian's static /bin/busybox (busybox-static),
#                    one symlink per applet, /etc/passwd, /etc/group, the usual empty dirs
#   DIR/pause.tar    klet.local/pause:3.9     contrib/pause.c built with gcc -static -Os
# Import: ctr --address SOCK -n k8s.io images import --snapshotter overlayfs DIR/busybox.tar
# The output is deterministic (same bytes on every run for the same inputs), so importing
# it again is a no-op. Needs: busybox-static, gcc with a static libc, python3.
# Environment: KLET_BUSYBOX (default /bin/busybox), CC (default gcc).
set -eu
[ $# -eq 1 ] || { echo "usage: $0 DIR" >&2; exit 64; }
here=$(cd "$(dirname "$0")" && pwd)
out=$1
mkdir -p "$out"
busybox=${KLET_BUSYBOX:-/bin/busybox}
[ -x "$busybox" ] || { echo "mkimages: $busybox missing (apt-get install busybox-static)" >&2; exit 1; }
case $(dpkg --print-architecture 2>/dev/null || uname -m) in
amd64 | x86_64) arch=amd64 variant= ;;
arm64 | aarch64) arch=arm64 variant=v8 ;;
armhf) arch=arm variant=v7 ;;
armel) arch=arm variant=v5 ;;
i386 | i686) arch=386 variant= ;;
ppc64el | ppc64le) arch=ppc64le variant= ;;
s390x) arch=s390x variant= ;;
riscv64) arch=riscv64 variant= ;;
*) echo "mkimages: unknown architecture" >&2; exit 1 ;;
esac
work=$(mktemp -d "${TMPDIR:-/tmp}/klet-mkimages.XXXXXX")
trap 'rm -rf "$work"' EXIT INT TERM
"${CC:-gcc}" -static -Os -s -o "$work/pause" "$here/pause.c"
"$busybox" --list-full >"$work/applets"
PY=python3
[ -x /usr/bin/python3 ] && PY=/usr/bin/python3
"$PY" - "$out" "$work" "$busybox" "$arch" "$variant" <<'PYEOF'
import hashlib, io, json, os, sys, tarfile

out, work, busybox, arch, variant = sys.argv[1:6]


def entry(tf, name, kind, data=b"", mode=0o644, target=""):
    ti = tarfile.TarInfo(name)
    ti.mtime = 0
    ti.uid = ti.gid = 0
    ti.uname = ti.gname = "root"
    ti.mode = mode
    if kind == "dir":
        ti.type = tarfile.DIRTYPE
        tf.addfile(ti)
    elif kind == "link":
        ti.type = tarfile.SYMTYPE
        ti.linkname = target
        ti.mode = 0o777
        tf.addfile(ti)
    else:
        ti.size = len(data)
        tf.addfile(ti, io.BytesIO(data))


def layer(items):
    """items: list of (name, kind, data, mode, target); written sorted, parents first."""
    buf = io.BytesIO()
    with tarfile.open(fileobj=buf, mode="w", format=tarfile.PAX_FORMAT) as tf:
        for name, kind, data, mode, target in sorted(items, key=lambda i: i[0]):
            entry(tf, name, kind, data, mode, target)
    return buf.getvalue()


def sha(b):
    return "sha256:" + hashlib.sha256(b).hexdigest()


def image_tar(path, name, tag, layer_bytes, cfg):
    platform = {"architecture": arch, "os": "linux"}
    if variant:
        platform["variant"] = variant
    config = dict(platform)
    config["config"] = cfg
    config["rootfs"] = {"type": "layers", "diff_ids": [sha(layer_bytes)]}
    config["history"] = [{"created_by": "klet contrib/mkimages.sh"}]
    config_b = json.dumps(config, sort_keys=True, separators=(",", ":")).encode()
    manifest = {
        "schemaVersion": 2,
        "mediaType": "application/vnd.oci.image.manifest.v1+json",
        "config": {"mediaType": "application/vnd.oci.image.config.v1+json",
                   "digest": sha(config_b), "size": len(config_b)},
        "layers": [{"mediaType": "application/vnd.oci.image.layer.v1.tar",
                    "digest": sha(layer_bytes), "size": len(layer_bytes)}],
    }
    manifest_b = json.dumps(manifest, sort_keys=True, separators=(",", ":")).encode()
    index = {
        "schemaVersion": 2,
        "mediaType": "application/vnd.oci.image.index.v1+json",
        "manifests": [{
            "mediaType": "application/vnd.oci.image.manifest.v1+json",
            "digest": sha(manifest_b), "size": len(manifest_b), "platform": platform,
            "annotations": {"io.containerd.image.name": name + ":" + tag,
                            "org.opencontainers.image.ref.name": tag}}],
    }
    index_b = json.dumps(index, sort_keys=True, separators=(",", ":")).encode()
    items = [("oci-layout", "file", b'{"imageLayoutVersion":"1.0.0"}', 0o644, ""),
             ("index.json", "file", index_b, 0o644, ""),
             ("blobs", "dir", b"", 0o755, ""), ("blobs/sha256", "dir", b"", 0o755, "")]
    for b in (layer_bytes, config_b, manifest_b):
        items.append(("blobs/sha256/" + sha(b)[7:], "file", b, 0o644, ""))
    tmp = path + ".tmp"
    with open(tmp, "wb") as f:
        f.write(layer(items))
    os.replace(tmp, path)
    print("mkimages: %s:%s -> %s (%s)" % (name, tag, path, sha(manifest_b)))


# busybox
with open(busybox, "rb") as f:
    bb = f.read()
dirs = {"bin", "sbin", "usr", "usr/bin", "usr/sbin", "etc", "dev", "proc", "sys", "root",
        "var", "var/www", "var/run", "home", "tmp"}
items = {"bin/busybox": ("file", bb, 0o755, "")}
with open(os.path.join(work, "applets")) as f:
    for line in f:
        p = line.strip().lstrip("/")
        if not p or p == "bin/busybox":
            continue
        d = os.path.dirname(p)
        while d:
            dirs.add(d)
            d = os.path.dirname(d)
        items[p] = ("link", b"", 0o777, "/bin/busybox")
items["etc/passwd"] = ("file", b"root:x:0:0:root:/root:/bin/sh\n"
                       b"nobody:x:65534:65534:nobody:/home:/bin/false\n", 0o644, "")
items["etc/group"] = ("file", b"root:x:0:\nnobody:x:65534:\n", 0o644, "")
items["etc/hosts"] = ("file", b"127.0.0.1 localhost\n", 0o644, "")
lst = [(n, k, data, mode, t) for n, (k, data, mode, t) in items.items()]
lst += [(d, "dir", b"", 0o1777 if d == "tmp" else (0o700 if d == "root" else 0o755), "")
        for d in dirs]
image_tar(os.path.join(out, "busybox.tar"), "klet.local/busybox", "1.35", layer(lst), {
    "Env": ["PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"],
    "Cmd": ["sh"], "WorkingDir": "/"})

# pause
with open(os.path.join(work, "pause"), "rb") as f:
    pz = f.read()
lst = [("pause", "file", pz, 0o755, "")]
image_tar(os.path.join(out, "pause.tar"), "klet.local/pause", "3.9", layer(lst), {
    "Env": ["PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"],
    "Entrypoint": ["/pause"], "WorkingDir": "/", "User": "65535:65535"})
PYEOF
