"""Which function to make a task of: the paper's passages, ranking, callers, the draft."""
