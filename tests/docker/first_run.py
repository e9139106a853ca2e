"""A fresh machine in a container: Python only (no Docker socket, no mmdebstrap, no registry), the project's
files copied in, and the README's first command run as it stands."""

from __future__ import annotations

import io
import re
import subprocess
import tarfile
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
HOST_CA = Path("/etc/ssl/certs/ca-certificates.crt")
"""The host's trust store, copied in so that a network which intercepts TLS is trusted as on the host."""


def readme_command(n: int) -> str:
    """The ``n``-th command (1-based) of the README's quick start block."""
    text = (REPO / "README.md").read_text()
    block = text.split("## Quick start", 1)[1].split("```bash", 1)[1].split("```", 1)[0]
    commands = [ln.strip() for ln in block.splitlines() if ln.strip() and not ln.strip().startswith("#")]
    return commands[n - 1]


def project_tar(prefix: str = "") -> bytes:
    """The project's tracked files (as a clone would have them) in a tar under ``<prefix>lmrbench/``, and the
    host's trust store as ``<prefix>host-ca.crt``."""
    files = subprocess.run(["git", "ls-files", "-z"], cwd=REPO, capture_output=True, check=True).stdout
    buf = io.BytesIO()
    with tarfile.open(fileobj=buf, mode="w") as tar:
        for rel in filter(None, files.decode().split("\0")):
            path = REPO / rel
            if path.is_file() and not path.is_symlink():
                tar.add(str(path), arcname=f"{prefix}lmrbench/{rel}", recursive=False)
        if HOST_CA.is_file():
            tar.add(str(HOST_CA), arcname=f"{prefix}host-ca.crt")
    return buf.getvalue()


def run_fresh_machine(image: str, command: str, timeout: int = 1500) -> tuple[int, str]:
    """Run ``command`` in /root/lmrbench of a new container of ``image``; return (exit status, output).

    The machine's home is in memory (a tmpfs at /root, the project copied there from /src): the install writes
    some 10,000 files, and on an engine whose storage driver is fuse-overlayfs each write goes through a FUSE
    daemon (the install took 44 s on an idle machine, 31 s in memory)."""
    import docker

    client = docker.from_env(timeout=timeout + 60)
    env = {"PIP_DISABLE_PIP_VERSION_CHECK": "1", "HOME": "/root",
           "PATH": "/usr/sbin:/usr/bin:/sbin:/bin"}
    if HOST_CA.is_file():
        env.update({"PIP_CERT": "/root/host-ca.crt", "SSL_CERT_FILE": "/root/host-ca.crt"})
    container = client.containers.create(
        image, ["sh", "-c", f"cp -a /src/. /root/ && cd /root/lmrbench && {command}"], user="0:0", environment=env,
        working_dir="/root", tmpfs={"/root": "size=4g,exec"},
    )
    try:
        container.put_archive("/", project_tar("src/"))
        container.start()
        status = container.wait(timeout=timeout)
        out = container.logs(stdout=True, stderr=True).decode(errors="replace")
        return int(status.get("StatusCode", -1)), out
    finally:
        container.remove(force=True)
        client.close()


def table_counts(output: str) -> tuple[int, int]:
    """(valid, total) read from validate's last line before the results folder."""
    found = re.search(r"; valid: (\d+)/(\d+)", output)
    assert found, output[-3000:]
    return int(found.group(1)), int(found.group(2))
