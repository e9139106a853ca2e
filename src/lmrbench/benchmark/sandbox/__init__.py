"""The sandboxes that run a task's code: Docker containers (``docker``) and local venvs (``local``), the images and
wheelhouses they are built from, the payload both stream into a run (``payload``), and the choice between them
(``choose``). The interface they implement lives in ``lmrbench.core.sandbox``."""
