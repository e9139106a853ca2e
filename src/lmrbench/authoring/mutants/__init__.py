"""The mutants of a golden body: where to mutate, the mistakes to make, making them."""
