"""The neutral task model every layer above schemas shares: a loaded task folder and task set (``taskset``)
and the interface of a place that runs a task's code (``sandbox``). Nothing here runs code or talks to Docker."""
