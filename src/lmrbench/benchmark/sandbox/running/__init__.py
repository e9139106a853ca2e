"""The transports: the Docker runner and the local runner, and trying requirements in an image."""
