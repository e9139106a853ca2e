"""Turning a repository into a task: clone, index, mask, golden files, paper, tests, Dockerfile."""
