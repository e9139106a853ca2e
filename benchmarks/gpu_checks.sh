#!/usr/bin/env bash
# The checks that need a CUDA GPU and torch, which CI (no GPU, no torch) skips or emulates, run as one script on a
# machine that has both:
#   - the torch tests: recording and grading torch values and precision modes, and split grading of stateful
#     torch code (an optimiser's parameters, their state and a module's buffers living in device memory on both
#     sides of the split), each golden passing and a plausible wrong edit failing;
#   - benchmarks/cross_device.py: golden code recorded on the GPU and graded on the CPU, and back.
#
#   bash benchmarks/gpu_checks.sh [OUT_DIR]        (default gpu-checks/; each step's output is a file there)
#
# Needs python3 with torch (CUDA) and pytest. Where no index is reachable: WHEELS=folder names wheels of
# lmrbench's other dependencies to install into a temporary target first, and the local runner's venv for the
# torch task is this interpreter's own environment (which holds torch) instead of a download.
set -uo pipefail
cd "$(dirname "$0")/.."
out="${1:-${OUT:-gpu-checks}}"
mkdir -p "$out"
export PYTHONUNBUFFERED=1 PYTHONDONTWRITEBYTECODE=1
if [ -n "${WHEELS:-}" ]; then
    python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/lmrbench-site \
        "$WHEELS"/*.whl || exit 1
    export PYTHONPATH="/tmp/lmrbench-site${PYTHONPATH:+:$PYTHONPATH}"
    python3 - <<'EOF' || exit 1
import os, sys
sys.path[:0] = ["src"]
from lmrbench.benchmark.sandbox.environments.layers import named_companions
from lmrbench.benchmark.sandbox.environments.wheelhouse import HOST, requirements_hash
from lmrbench.defaults import cache_root
lines = ["torch"]
venv = cache_root() / "venvs" / requirements_hash([*lines, *named_companions(lines)], HOST)
venv.parent.mkdir(parents=True, exist_ok=True)
if not venv.exists():
    venv.symlink_to(sys.prefix)
print(f"the torch task's venv: {venv} -> {os.path.realpath(venv)}")
EOF
fi
export PYTHONPATH="src:tests${PYTHONPATH:+:$PYTHONPATH}"
{
    nvidia-smi -L
    python3 -c 'import torch, numpy; print("torch", torch.__version__, "cuda", torch.cuda.is_available(),
        torch.cuda.get_device_name(0) if torch.cuda.is_available() else "-", "numpy", numpy.__version__)'
} 2>&1 | tee "$out/machine.txt"
rc=0
timeout 300 python3 -m pytest -p no:cacheprovider -n 6 -q -o addopts="" \
    tests/authoring/test_torch_precision.py tests/authoring/test_torch_values.py tests/authoring/test_values.py \
    tests/authoring/test_precision_modes.py \
    "tests/benchmark/test_sandbox_conformance.py::test_torch_stateful_code_grades_split_as_it_runs_in_one_process" \
    -rs 2>&1 | tee "$out/torch_tests.txt" | tail -25 || rc=1
timeout 240 python3 benchmarks/cross_device.py 2>&1 | tee "$out/cross_device.txt" | tail -30 || rc=1
exit $rc
