"""What a task runs in: images, framework layers, wheelhouses, requirements, container labels."""
