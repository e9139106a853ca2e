"""Turning a repository into a task, one sub-package per family: suggest, task, check, record, mutants."""
