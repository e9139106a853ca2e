"""Decode with contrastive decoding from two prompts: python generate.py --steps 6"""

import argparse

from cdecode.decoding import greedy_decode
from cdecode.models import expert_and_amateur


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--steps", type=int, default=6)
    args = parser.parse_args()
    expert, amateur = expert_and_amateur()
    prompts = [[expert.index["the"]], [expert.index["a"], expert.index["good"]]]
    # alpha=1 keeps only the expert's own top token: one step of plain greedy decoding of the expert
    first = greedy_decode(expert, amateur, prompts, 1, alpha=1.0)
    print("alpha=1.0 (expert greedy): " + " | ".join(expert.vocab[seq[-1]] for seq in first))
    for alpha, temperature in [(0.1, 1.0), (0.5, 0.7)]:
        out = greedy_decode(expert, amateur, prompts, args.steps, alpha=alpha, temperature=temperature)
        for seq in out:
            print(f"alpha={alpha} T={temperature}: " + " ".join(expert.vocab[i] for i in seq))


if __name__ == "__main__":
    main()
