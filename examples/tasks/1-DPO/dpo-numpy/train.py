"""Train a toy policy with DPO on synthetic preferences: python train.py --steps 2"""

import argparse

import numpy as np

from dpo.trainers import LogLinearPolicy, dpo_step, preference_loss


def synthetic_batch(rng, batch_size, vocab_size, length):
    """Chosen responses favour even tokens, rejected ones odd tokens."""
    prompt = rng.integers(0, vocab_size, size=(batch_size, 3))
    chosen = 2 * rng.integers(0, vocab_size // 2, size=(batch_size, length))
    rejected = 2 * rng.integers(0, vocab_size // 2, size=(batch_size, length)) + 1
    return {"prompt": prompt, "chosen": chosen, "rejected": rejected}


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--steps", type=int, default=2)
    parser.add_argument("--beta", type=float, default=0.1)
    args = parser.parse_args()
    rng = np.random.default_rng(0)
    policy, reference = LogLinearPolicy(8, seed=1), LogLinearPolicy(8, seed=2)
    settings = [
        {"label_smoothing": 0.0, "reference_free": False},
        {"label_smoothing": 0.2, "reference_free": False},
        {"label_smoothing": 0.0, "reference_free": True},
    ]
    probe = synthetic_batch(rng, 4, 8, 5)
    for cfg in settings:
        losses, chosen, rejected = preference_loss(
            policy.logps(probe["prompt"], probe["chosen"]),
            policy.logps(probe["prompt"], probe["rejected"]),
            reference.logps(probe["prompt"], probe["chosen"]),
            reference.logps(probe["prompt"], probe["rejected"]),
            args.beta,
            **cfg,
        )
        print(f"initial {cfg} loss {losses.mean():.4f} margin {(chosen - rejected).mean():.4f}")
    for step in range(args.steps):
        for cfg in settings:
            batch = synthetic_batch(rng, 4, 8, 5)
            loss = dpo_step(policy, reference, batch, args.beta, lr=0.5, **cfg)
            print(f"step {step} {cfg} loss {loss:.4f}")


if __name__ == "__main__":
    main()
