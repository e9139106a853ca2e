"""The paper's tables from run folders: unit-test accuracy, the judge's three verdicts, human labels and their
consensus, per category and per run (``lmrbench report``). Reads runs and labels; runs nothing."""
