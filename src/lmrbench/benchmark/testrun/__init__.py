"""Running one implementation's tests on one variant (golden, masked, a candidate) and deciding the outcome:
split runs (the candidate in a process of its own), pytest and legacy reports, and their merge."""
