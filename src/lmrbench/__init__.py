"""lmrbench: author, validate and run research-code reproduction benchmarks (LMR-Bench format)."""

__version__ = "0.1.0"
