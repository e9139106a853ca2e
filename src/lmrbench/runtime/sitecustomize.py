"""Start call recording in every Python process of a recorded command, then run the sitecustomize it shadows.

Only active when ``LMRBENCH_RECORD_SPEC`` is set; see ``lmrbench_record``.
"""

import importlib.machinery
import os
import sys

from lmrbench_protocol import ENV_RECORD_SPEC

if os.environ.get(ENV_RECORD_SPEC):
    try:
        import lmrbench_record

        lmrbench_record.install()
    except Exception as exc:  # never stop the author's program
        sys.stderr.write(f"lmrbench: recording could not start: {type(exc).__name__}: {exc}\n")


def _run_shadowed() -> None:
    here = os.path.dirname(os.path.abspath(__file__))
    paths = [p for p in sys.path if os.path.abspath(p or os.curdir) != here]
    spec = importlib.machinery.PathFinder.find_spec("sitecustomize", paths)
    if spec is None or spec.loader is None or spec.origin == os.path.abspath(__file__):
        return
    from importlib.util import module_from_spec

    module = module_from_spec(spec)
    spec.loader.exec_module(module)


_run_shadowed()
