"""What the benchmark runs after authoring: generation, evaluation, judging, the run folder and the scoreboard."""
