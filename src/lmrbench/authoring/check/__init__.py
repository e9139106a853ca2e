"""`task check`: findings, test smells and lint, leak and near-copy scans, data paths, Dockerfiles."""
