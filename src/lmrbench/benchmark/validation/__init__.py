"""Proving a task valid: golden passes, masked fails, mutants die; result store and weakness."""
