"""The Docker sandbox image: a tiny root file system that runs the host's own Python, mounted read-only.

There is no image registry to pull from, so the image is built here, offline, in well under a second: a tar of
an empty skeleton (`/etc/passwd`, `/etc/group`, `/etc/hosts`, mount points, and the host's `/bin -> usr/bin`
style links) brought in with `docker import`. At run time `DockerSandbox` mounts the host's `/usr` (and `/lib*`
where those are real directories), the loader cache, and the test interpreter's install and venv, all read-only,
and the workspace read-write. Tests therefore run with exactly the interpreter and packages they have on the host,
behind the container's walls: no network, memory/CPU/pids limits, a read-only root, and nothing else of the host.

Run `skillbank sandbox build-image` (or `python -m sandbox.exec.image`) once per engine.
"""

from __future__ import annotations

import argparse
import io
import os
import tarfile
from pathlib import Path
from typing import TYPE_CHECKING

from pydantic import BaseModel

if TYPE_CHECKING:
    from docker import DockerClient

DEFAULT_IMAGE = "skillbank-sandbox:latest"
#: Label on the image (and on warm containers) naming the skeleton's version.
IMAGE_LABEL = "skillbank.sandbox"
IMAGE_VERSION = "1"
#: Top-level host directories that hold programs and libraries; mounted read-only when they are real dirs.
SYSTEM_DIRS = ("usr", "bin", "sbin", "lib", "lib32", "lib64", "libx32")
#: Host files under /etc that programs need to start (the dynamic loader's cache, alternatives' links).
SYSTEM_ETC = ("ld.so.cache", "ld.so.conf", "ld.so.conf.d", "alternatives", "localtime")
_SKELETON_DIRS = ("etc", "tmp", "proc", "dev", "sys", "run", "var", "var/tmp", "home", "root", "workspace", "usr")


class ImageInfo(BaseModel):
    """A built sandbox image."""

    tag: str
    image_id: str
    size_bytes: int


def system_mounts(root: Path = Path("/")) -> list[Path]:
    """Host paths the container needs read-only: the program dirs that are real directories, and `SYSTEM_ETC`."""
    mounts = [root / name for name in SYSTEM_DIRS if (root / name).is_dir() and not (root / name).is_symlink()]
    mounts += [root / "etc" / name for name in SYSTEM_ETC if (root / "etc" / name).exists()]
    return mounts


def skeleton_tar(uid: int | None = None, gid: int | None = None, root: Path = Path("/")) -> bytes:
    """The image's root file system as an uncompressed tar (a few KiB)."""
    uid = os.getuid() if uid is None else uid
    gid = os.getgid() if gid is None else gid
    buf = io.BytesIO()
    with tarfile.open(fileobj=buf, mode="w") as tar:
        for name in _SKELETON_DIRS:
            info = tarfile.TarInfo(name)
            info.type, info.mode = tarfile.DIRTYPE, 0o1777 if name in ("tmp", "var/tmp") else 0o755
            tar.addfile(info)
        for name in SYSTEM_DIRS:
            host = root / name
            if host.is_symlink():
                info = tarfile.TarInfo(name)
                info.type, info.linkname = tarfile.SYMTYPE, os.readlink(host)
                tar.addfile(info)
        users = ["root:x:0:0:root:/root:/bin/sh", "nobody:x:65534:65534:nobody:/nonexistent:/usr/sbin/nologin"]
        groups = ["root:x:0:", "nogroup:x:65534:"]
        if uid not in (0, 65534):
            users.append(f"sandbox:x:{uid}:{gid}:skillbank sandbox:/tmp:/bin/sh")
        if gid not in (0, 65534):
            groups.append(f"sandbox:x:{gid}:")
        files = {
            "etc/passwd": "\n".join(users) + "\n",
            "etc/group": "\n".join(groups) + "\n",
            "etc/hosts": "127.0.0.1\tlocalhost\n::1\tlocalhost ip6-localhost ip6-loopback\n",
            "etc/nsswitch.conf": "passwd: files\ngroup: files\nhosts: files\n",
            "etc/hostname": "sandbox\n",
        }
        for name, text in files.items():
            data = text.encode()
            info = tarfile.TarInfo(name)
            info.size, info.mode = len(data), 0o644
            tar.addfile(info, io.BytesIO(data))
    return buf.getvalue()


def build_image(client: DockerClient, tag: str = DEFAULT_IMAGE) -> ImageInfo:
    """Build (or rebuild) the sandbox image on the engine `client` and return it."""
    repository, version = tag, "latest"
    if ":" in tag.rsplit("/", 1)[-1]:
        repository, version = tag.rsplit(":", 1)
    changes = [f"LABEL {IMAGE_LABEL}={IMAGE_VERSION}", 'CMD ["/bin/sh"]', "WORKDIR /workspace"]
    client.api.import_image_from_data(skeleton_tar(), repository=repository, tag=version, changes=changes)
    image = client.images.get(tag)
    return ImageInfo(tag=tag, image_id=image.id, size_bytes=int(image.attrs.get("Size") or 0))


def main(argv: list[str] | None = None) -> None:
    """`python -m sandbox.exec.image [--tag TAG] [--base-url URL]`: build the image on the local engine."""
    from sandbox.exec.docker_engine import open_client

    parser = argparse.ArgumentParser(prog="python -m sandbox.exec.image", description=__doc__.splitlines()[0])
    parser.add_argument("--tag", default=DEFAULT_IMAGE, help=f"image tag (default {DEFAULT_IMAGE})")
    parser.add_argument("--base-url", default=None, help="Docker engine address (default: DOCKER_HOST)")
    args = parser.parse_args(argv)
    with open_client(args.base_url) as client:
        info = build_image(client, args.tag)
    print(f"built {info.tag} ({info.image_id[:19]}, {info.size_bytes} bytes)")


if __name__ == "__main__":
    main()
