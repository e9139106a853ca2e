"""Bigram language models estimated from a tiny corpus with add-k smoothing."""

import numpy as np

CORPUS = (
    "the model reads the paper . the model writes the code . the code runs the tests . "
    "the tests check the code . a good model writes good code . the paper explains the method ."
).split()


class BigramLM:
    """Next-token logits from bigram counts; a larger ``k`` gives a flatter, weaker (amateur) model."""

    def __init__(self, corpus, k):
        self.vocab = sorted(set(corpus))
        self.index = {w: i for i, w in enumerate(self.vocab)}
        counts = np.full((len(self.vocab), len(self.vocab)), float(k))
        for a, b in zip(corpus, corpus[1:]):
            counts[self.index[a], self.index[b]] += 1.0
        self.log_probs = np.log(counts / counts.sum(axis=1, keepdims=True))

    def logits(self, token_ids):
        """Logits for the next token after each sequence's last token, shape (batch, vocab)."""
        return self.log_probs[[seq[-1] for seq in token_ids]]


def expert_and_amateur():
    """The expert is trained on the whole corpus with little smoothing; the amateur on half with much."""
    return BigramLM(CORPUS, k=0.1), BigramLM(CORPUS[: len(CORPUS) // 2] + CORPUS, k=2.0)
