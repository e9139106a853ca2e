"""Human-evaluation labels: the per-annotator store, assignment with overlap, review sessions, the official
results layout in and out, and agreement between humans, the judge and the unit tests."""
