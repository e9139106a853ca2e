"""Where test runs execute: the unit of work, the scheduling loop, and the executors (threads, Ray)."""
