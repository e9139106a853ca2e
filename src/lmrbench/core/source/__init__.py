"""Source code as lmrbench reads and rewrites it: the function index, the LibCST splice of a candidate into the
pristine file, and the one tree builder that recording and runs share."""
