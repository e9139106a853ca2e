"""A real Ray cluster on this machine for tests: a head and a worker node, started with the `ray` command as the
docs tell a user, in a temp folder of their own, and stopped by killing only their own processes (`ray stop`
would stop every cluster of the machine)."""

from __future__ import annotations

import contextlib
import os
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
from pathlib import Path

RAY = str(Path(sys.executable).with_name("ray"))


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


class LocalCluster:
    """``ray start --head`` plus ``ray start --address`` on 127.0.0.1, each node with ``cpus`` CPUs."""

    def __init__(self, cpus: tuple[int, int] = (1, 1), env: dict[str, str] | None = None) -> None:
        # unix socket paths must stay short: a temp folder directly under /tmp
        self.temp = Path(tempfile.mkdtemp(prefix="lmr-ray-", dir="/tmp"))
        port = free_port()
        self.address = f"127.0.0.1:{port}"
        self.env = {**os.environ, **(env or {}), "RAY_USAGE_STATS_ENABLED": "0"}
        head = [RAY, "start", "--head", f"--port={port}", "--node-ip-address=127.0.0.1", f"--num-cpus={cpus[0]}",
                f"--temp-dir={self.temp}", "--include-dashboard=false", "--disable-usage-stats",
                f"--dashboard-agent-listen-port={free_port()}",
                f"--dashboard-agent-grpc-port={free_port()}", f"--metrics-export-port={free_port()}"]
        worker = [RAY, "start", f"--address={self.address}", "--node-ip-address=127.0.0.1",
                  f"--num-cpus={cpus[1]}", "--disable-usage-stats", f"--dashboard-agent-listen-port={free_port()}",
                  f"--dashboard-agent-grpc-port={free_port()}", f"--metrics-export-port={free_port()}"]
        try:
            for argv in (head, worker):
                out = subprocess.run(argv, env=self.env, capture_output=True, text=True, timeout=180)
                if out.returncode != 0:
                    raise RuntimeError(f"{' '.join(argv[:3])} failed:\n{out.stdout[-3000:]}\n{out.stderr[-3000:]}")
            self.wait_for_nodes(2)
        except BaseException:
            self.stop()
            raise

    def wait_for_nodes(self, n: int, timeout: float = 60.0) -> None:
        code = ("import ray, sys; ray.init(address=sys.argv[1], logging_level='ERROR'); "
                "print(sum(1 for n in ray.nodes() if n['Alive']))")
        deadline = time.monotonic() + timeout
        while True:
            out = subprocess.run([sys.executable, "-c", code, self.address], env=self.env, capture_output=True,
                                 text=True, timeout=120)
            if out.returncode == 0 and out.stdout.strip().splitlines()[-1:] == [str(n)]:
                return
            if time.monotonic() > deadline:
                raise RuntimeError(f"the cluster has not {n} nodes: {out.stdout[-500:]} {out.stderr[-1500:]}")
            time.sleep(1)

    def pids(self) -> list[int]:
        """Every process of this cluster: those whose command line names its temp folder or address (the GCS,
        the raylets, the monitors), and all their descendants (workers and agents rename themselves)."""
        marks = (str(self.temp).encode(), self.address.encode())
        parent: dict[int, int] = {}
        roots = set()
        for proc in Path("/proc").glob("[0-9]*"):
            try:
                cmd = (proc / "cmdline").read_bytes()
                stat = (proc / "stat").read_text()
            except OSError:
                continue
            pid = int(proc.name)
            parent[pid] = int(stat.rsplit(")", 1)[1].split()[1])
            if any(m in cmd for m in marks) and pid != os.getpid():
                roots.add(pid)
        found = set(roots)
        grew = True
        while grew:
            kids = {p for p, pp in parent.items() if pp in found} - found
            grew = bool(kids)
            found |= kids
        return sorted(found)

    def stop(self) -> None:
        for _ in range(3):
            pids = self.pids()
            if not pids:
                break
            for pid in pids:
                with contextlib.suppress(OSError):
                    os.kill(pid, signal.SIGKILL)
            time.sleep(0.5)
        shutil.rmtree(self.temp, ignore_errors=True)
