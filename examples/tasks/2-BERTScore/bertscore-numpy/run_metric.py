"""Score candidate sentences against references: python run_metric.py"""

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


if __name__ == "__main__":
    main()
