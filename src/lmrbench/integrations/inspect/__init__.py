"""lmrbench for Inspect AI (the ``inspect`` extra): the ``lmrbench`` sandbox provider and the ``lmr_bench`` task.

Registered through the ``inspect_ai`` entry point group (``registry``), so ``inspect eval lmrbench/lmr_bench -T
bench=DIR`` finds both once lmrbench is installed with the extra. Importing this package loads nothing of Inspect
AI; its modules do.
"""
