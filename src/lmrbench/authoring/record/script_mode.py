"""What a pytest-style test file prints when it is run as a script, as the official LMR-Bench evaluation runs it
(``python unit_test/unit_test_1.py``): a ``Passed`` or ``Failed`` line per test, also written to
``unit_test/logs/<file stem>.log``, where the official statistics count them (a file passes when it holds no
``Failed`` and at least one ``Passed``).

The block never spells the two words after "Test " as the official script-style tests do, so lmrbench keeps
running the file as a pytest file (the official markers would make it a weaker, script-style test).
"""

from __future__ import annotations

SCRIPT_MARK = "# lmrbench: when run as a script"
"""The first line of the block; a file that holds it (or any ``__main__`` block) is left as it is."""

SCRIPT_BLOCK = '''
if __name__ == "__main__":  # lmrbench: when run as a script (the official LMR-Bench evaluation runs it so)
    import traceback as _traceback
    from pathlib import Path as _Path

    _verdicts = []
    for _name, _test in list(globals().items()):
        if _name.startswith("test_") and callable(_test):
            try:
                _test()
                _verdicts.append(f"{_name}: Passed")
            except Exception:  # a failed check or an error: both fail the test
                _verdicts.append(f"{_name}: Failed\\n{_traceback.format_exc()}")
    _text = "\\n".join(_verdicts or ["no test found: Failed"]) + "\\n"
    print(_text, end="")
    _logs = _Path(__file__).resolve().parent / "logs"
    _logs.mkdir(exist_ok=True)
    (_logs / (_Path(__file__).stem + ".log")).write_text(_text)
    raise SystemExit(1 if any(": Failed" in v for v in _verdicts) or not _verdicts else 0)
'''


def has_main_block(source: str) -> bool:
    """True when the file already decides what it does as a script."""
    return SCRIPT_MARK in source or "__name__ == \"__main__\"" in source or "__name__ == '__main__'" in source


def with_script_block(source: str) -> str:
    """``source`` with the script block appended, unless it has one (or its own ``__main__`` block)."""
    if has_main_block(source):
        return source
    return source.rstrip("\n") + "\n\n" + SCRIPT_BLOCK
