"""Agents at work on a task's agent view inside a container of the task's own image (see docs/agents.md)."""
