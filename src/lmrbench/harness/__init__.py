"""The process boundary: how a variant of an implementation (golden, masked, a mutant, a candidate) becomes a test
run in a sandbox and a typed report. Split runs (the candidate in a worker process of its own, the tests and
recorded data in a trusted one), pytest and official script-style runs, the payload a sandbox streams, and the
decision. The sandbox implementations (``benchmark.sandbox``: Docker, local venvs) are plugins of the
``core.sandbox.Sandbox`` protocol; this package never imports them."""
