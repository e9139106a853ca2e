"""The one line of a failed pip run or image build that names the cause.

pip's last lines are often noise ("pip is looking at multiple versions of torch to determine which version is
compatible...", a notice about a newer pip); the cause is an ``ERROR:`` line, sometimes with the conflict it
explains a few lines below. A build that failed elsewhere (apt, a missing file) names its cause in the last line
that reads like an error.
"""

from __future__ import annotations

import re

_NOISE = re.compile(
    r"pip is looking at multiple versions|^\s*(INFO|WARNING|\[notice\]|DEPRECATION)[: ]|^\s*Removing intermediate"
    r"|^\s*---> |^\s*Step \d+/\d+ :|^\s*(Collecting|Downloading|Processing|Looking in)\b",
    re.IGNORECASE,
)
_ERRORISH = re.compile(r"error|not found|no such|cannot|can't|unable|failed|denied|requires a different python|^E: ",
                       re.IGNORECASE)
_CONFLICT = re.compile(r"^\s*\S+ [^ ]+ depends on ")
_PREAMBLE = "Ignored the following versions that require a different python version"
"""pip's first ``ERROR:`` line whenever an index holds versions for other Pythons: never the cause itself."""
_FROM = re.compile(r"Could not find a version that satisfies the requirement \S+ \(from ([^)]*)\)")
_VERSIONS = re.compile(r"Could not find a version that satisfies the requirement .*\(from versions: ([^)]*)\)")
_NO_DIST = re.compile(r"No matching distribution found for (\S+)")


def failure_headline(output: str) -> str:
    """The line of ``output`` that names why pip or a build failed ('' when it holds no line at all)."""
    lines = [line.strip() for line in output.splitlines() if line.strip()]
    errors = [i for i, line in enumerate(lines) if line.startswith("ERROR:") and _PREAMBLE not in line]
    missing = next((m for line in lines if (m := _NO_DIST.search(line))), None)
    if missing:  # name the requirement, and why: the versions there are, or none (only a source distribution?)
        found = next((m.group(1) for line in lines if (m := _VERSIONS.search(line))), "")
        parent = next((m.group(1) for line in lines if (m := _FROM.search(line))), "")
        why = (f"no wheel that fits for this Python and platform (wheels there: {found})" if found and found != "none"
               else "no wheel for this Python and platform (a source distribution only, or none)")
        needed = f" (required by {parent})" if parent and not parent.startswith("versions") else ""
        return f"ERROR: No matching distribution found for {missing.group(1)}{needed}: {why}"
    if errors:
        first = lines[errors[0]]
        if "conflicting dependencies" in first or "ResolutionImpossible" in first:
            why = next((line for line in lines[errors[0]:] if _CONFLICT.match(line)), "")
            return f"{first} {why}".strip()
        return first
    useful = [line for line in lines if not _NOISE.search(line)]
    causes = [line for line in useful if not line.startswith("The command '/bin/sh")]
    for line in reversed(causes):
        if _ERRORISH.search(line):
            return line
    return useful[-1] if useful else (lines[-1] if lines else "")
