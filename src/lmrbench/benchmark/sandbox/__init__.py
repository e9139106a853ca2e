"""The transports that run a task's code (``core.sandbox.Transport``), in two rooms:

- ``environments``: what a task runs in — base images, task images and their framework layers, wheelhouses, the
  requirements they are built from, and the labels and sweep of lmrbench's containers;
- ``running``: the transports themselves — the Docker runner (a fresh container per run, a long-lived one for a
  warm boot) and the local runner (a cached venv, a process group per run), and ``image try``.

What runs in them (the boot script, its payload, the warm pool) is the harness's (``harness/sandbox.py``); the
choice between them is ``benchmark.execution.sandboxes``."""
