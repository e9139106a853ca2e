"""Task creation: clone, mask, goal functions, golden files, info.json, the paper, the new-task draft."""
