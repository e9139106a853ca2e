"""Move functions between two versions of a file: bodies (golden unmasking) or whole defs (candidates).

Only the named functions are taken from the donor; everything else in the target is kept byte for byte.
"""

from __future__ import annotations

import libcst as cst

from lmrbench.core.source._cst import Located, outermost, pair_defs
from lmrbench.core.source.index import parse_python
from lmrbench.errors import LmrError


def _donor(donor: str, file: str, qualnames: list[str]) -> Located:
    try:
        return Located(donor, file, qualnames)
    except LmrError as exc:
        raise LmrError(f"{exc.problem} (in the donor)", file) from None


def splice_bodies(target: str, donor: str, qualnames: list[str], *, file: str = "<source>") -> str:
    """``target`` with the body of each named function taken from ``donor``.

    Splicing the golden file's bodies into its masked version gives back the golden bytes exactly.
    A name inside another named function comes with it.
    """
    qualnames = outermost(qualnames)
    tgt = Located(target, file, qualnames)
    src = _donor(donor, file, qualnames)
    replace: dict[int, cst.FunctionDef] = {}
    for q in qualnames:
        for t_def, d_def in pair_defs(tgt, src, q):
            replace[id(t_def)] = t_def.with_changes(body=d_def.body)
    return tgt.rebuild(replace)


def replace_functions(
    target: str, donor: str, qualnames: list[str], *, file: str = "<source>", donor_file: str = "<candidate>"
) -> str:
    """``target`` with each named def (decorators, signature and body) replaced by the donor's def.

    The donor may be a whole candidate file: only the named functions are taken, matched by qualified name
    (so a method comes from the same class). A function the target defines once and the donor several times
    in the same block is the donor's last definition, the one Python keeps. The comments and blank lines above
    each def stay the target's. LmrError for a donor that does not parse, lacks a function, or yields a file
    that no longer parses.
    """
    qualnames = outermost(qualnames)
    tgt = Located(target, file, qualnames)
    src = Located(donor, donor_file, qualnames)
    replace: dict[int, cst.FunctionDef] = {}
    for q in qualnames:
        t_defs, d_defs = tgt.defs(q), src.defs(q)
        pairs = [(t_defs[0], d_defs[-1])] if len(t_defs) == 1 and src.redefined(q) else pair_defs(tgt, src, q)
        for t_def, d_def in pairs:
            replace[id(t_def)] = d_def.with_changes(leading_lines=t_def.leading_lines)
    result = tgt.rebuild(replace)
    try:
        parse_python(result, file)
    except LmrError as exc:
        raise LmrError(f"the functions from {donor_file} do not fit: {exc.problem}", file) from None
    return result


def extract_function(source: str, qualname: str, *, file: str = "<source>") -> str:
    """The source text of a def (decorators, signature, body), dedented to column 0.

    A name defined several times gives each definition, separated by a blank line.
    """
    located = Located(source, file, [qualname])
    texts = []
    for which, node in enumerate(located.defs(qualname)):
        module = located.module_of(qualname, which)
        texts.append(module.code_for_node(node.with_changes(leading_lines=())))
    return "\n".join(texts)
