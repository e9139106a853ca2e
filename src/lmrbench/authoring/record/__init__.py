"""Recording: captured calls, probing and selecting cases, amplification, the recorded tests and testgen."""
