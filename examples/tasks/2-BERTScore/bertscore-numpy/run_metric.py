"""Score candidate sentences against references: python run_metric.py"""

import numpy as np

from bertscore_np.embed import embed, idf_weights, sentence_idf
from bertscore_np.score import greedy_cos_idf

REFERENCES = [
    "the cat sat on the mat",
    "a quick brown fox jumps over the lazy dog",
    "language models can reproduce research code",
]
CANDIDATES = [
    "a cat was sitting on the mat",
    "the lazy dog was jumped over by a fox",
    "research code is hard to reproduce",
]


def main():
    idf, default = idf_weights(REFERENCES)
    for ref, hyp in zip(REFERENCES, CANDIDATES):
        p, r, f = greedy_cos_idf(embed(ref), sentence_idf(ref, idf, default), embed(hyp),
                                 sentence_idf(hyp, idf, default))
        print(f"P={p:.4f} R={r:.4f} F1={f:.4f}  {hyp!r}")
    sanity_checks()


def sanity_checks():
    """Degenerate inputs: a candidate identical to its reference, opposite embeddings (precision and recall of
    opposite signs), and orthogonal ones (precision and recall 0: F1 defined as 0)."""
    same = np.array([[1.0, 2.0, 0.5], [0.0, 1.0, -1.0]])
    p, r, f = greedy_cos_idf(same, np.array([1.0, 2.0]), same.copy(), np.array([1.0, 2.0]))
    print(f"identical: P={p:.4f} R={r:.4f} F1={f:.4f}")
    p, r, f = greedy_cos_idf(np.array([[3.0, 4.0], [-1.0, 0.0]]), np.array([1.0, 3.0]), np.array([[1.0, 0.0]]),
                             np.array([1.0]))
    print(f"opposite:  P={p:.4f} R={r:.4f} F1={f:.4f}")
    p, r, f = greedy_cos_idf(np.array([[3.0, 4.0], [-1.0, 0.0]]), np.array([1.0, 1.0]), np.array([[1.0, 0.0]]),
                             np.array([1.0]))
    print(f"opposite, equal idf: P={p:.4f} R={r:.4f} F1={f:.4f}")
    p, r, f = greedy_cos_idf(np.array([[0.0, 2.0]]), np.array([1.0]), np.array([[1.5, 0.0]]), np.array([1.0]))
    print(f"orthogonal: P={p:.4f} R={r:.4f} F1={f:.4f}")


if __name__ == "__main__":
    main()
