"""Running things against a task set: environments, validation, generation, evaluation, judging, reports."""
