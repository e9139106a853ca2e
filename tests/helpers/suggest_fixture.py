"""Repositories and papers for ``task suggest``: a numpy "mlkit" of about 30 functions (utilities, and six methods
of six papers), an example script and tests, and a PDF (made with PyMuPDF) of a paper that describes one method.

Every repository holds all six methods, so the five a paper does not describe are distractors that look like
methods too; the paper's experiments, related work and setup talk about optimizers, metrics and data the way
papers do, so the utilities share its words as well.
"""

from __future__ import annotations

import ast
import re
import subprocess
import textwrap
from dataclasses import dataclass
from pathlib import Path

import pymupdf

UTILS = {
    "mlkit/metrics.py": '''
        """Evaluation metrics."""

        import numpy as np


        def accuracy(predictions, labels):
            """Share of predictions equal to the labels."""
            return float(np.mean(np.asarray(predictions) == np.asarray(labels)))


        def precision_recall_f1(predictions, labels, positive=1):
            """Precision, recall and F1 score of the positive class."""
            tp = np.sum((predictions == positive) & (labels == positive))
            fp = np.sum((predictions == positive) & (labels != positive))
            fn = np.sum((predictions != positive) & (labels == positive))
            precision = tp / max(tp + fp, 1)
            recall = tp / max(tp + fn, 1)
            f1 = 2 * precision * recall / max(precision + recall, 1e-12)
            return float(precision), float(recall), float(f1)


        def confusion_matrix(predictions, labels, num_classes):
            """Counts of (label, prediction) pairs."""
            matrix = np.zeros((num_classes, num_classes), dtype=np.int64)
            for p, t in zip(predictions, labels):
                matrix[t, p] += 1
            return matrix


        def mean_squared_error(predictions, targets):
            """Mean of squared differences."""
            return float(np.mean((np.asarray(predictions) - np.asarray(targets)) ** 2))


        def top_k_accuracy(scores, labels, k=5):
            """Share of rows whose label is among the k highest scores."""
            top = np.argsort(-scores, axis=1)[:, :k]
            return float(np.mean([label in row for row, label in zip(top, labels)]))
    ''',
    "mlkit/data.py": '''
        """Loading, splitting and batching data."""

        import csv

        import numpy as np


        def load_csv(path):
            """Rows of a CSV file as a float array."""
            with open(path) as fh:
                return np.array([[float(x) for x in row] for row in csv.reader(fh)])


        def train_test_split(features, labels, test_fraction=0.2, seed=0):
            """Shuffle the examples and split off a test set."""
            order = np.random.default_rng(seed).permutation(len(features))
            cut = int(len(features) * (1 - test_fraction))
            return features[order[:cut]], features[order[cut:]], labels[order[:cut]], labels[order[cut:]]


        def one_hot(labels, num_classes):
            """One-hot encoding of integer class labels."""
            out = np.zeros((len(labels), num_classes))
            out[np.arange(len(labels)), labels] = 1.0
            return out


        def standardize(features, eps=1e-8):
            """Zero mean and unit variance per feature column."""
            return (features - features.mean(axis=0)) / (features.std(axis=0) + eps)


        def batch_iterator(features, labels, batch_size):
            """Consecutive mini-batches of the data set."""
            for start in range(0, len(features), batch_size):
                yield features[start:start + batch_size], labels[start:start + batch_size]
    ''',
    "mlkit/optim.py": '''
        """Optimizers and learning rate schedules."""

        import numpy as np


        def sgd_step(params, grads, lr=0.1, weight_decay=0.0):
            """One step of stochastic gradient descent with weight decay."""
            return {k: p - lr * (grads[k] + weight_decay * p) for k, p in params.items()}


        def clip_by_norm(grads, max_norm):
            """Scale the gradients so that their global norm is at most max_norm."""
            norm = np.sqrt(sum(float(np.sum(g ** 2)) for g in grads.values()))
            scale = min(1.0, max_norm / max(norm, 1e-12))
            return {k: g * scale for k, g in grads.items()}


        def cosine_schedule(step, total_steps, base_lr, min_lr=0.0):
            """Cosine decay of the learning rate."""
            progress = min(step / max(total_steps, 1), 1.0)
            return min_lr + 0.5 * (base_lr - min_lr) * (1 + np.cos(np.pi * progress))


        def warmup_linear_schedule(step, warmup_steps, total_steps, base_lr):
            """Linear warmup, then linear decay of the learning rate."""
            if step < warmup_steps:
                return base_lr * step / max(warmup_steps, 1)
            return base_lr * max(0.0, (total_steps - step) / max(total_steps - warmup_steps, 1))


        class Adam:
            """The Adam optimizer over a dict of parameters."""

            def __init__(self, lr=1e-3, beta1=0.9, beta2=0.999, eps=1e-8):
                self.lr, self.beta1, self.beta2, self.eps = lr, beta1, beta2, eps
                self.m, self.v, self.t = {}, {}, 0

            def step(self, params, grads):
                """Update the parameters with bias-corrected first and second moment estimates."""
                self.t += 1
                out = {}
                for k, g in grads.items():
                    self.m[k] = self.beta1 * self.m.get(k, 0.0) + (1 - self.beta1) * g
                    self.v[k] = self.beta2 * self.v.get(k, 0.0) + (1 - self.beta2) * g * g
                    m_hat = self.m[k] / (1 - self.beta1 ** self.t)
                    v_hat = self.v[k] / (1 - self.beta2 ** self.t)
                    out[k] = params[k] - self.lr * m_hat / (np.sqrt(v_hat) + self.eps)
                return out
    ''',
    "mlkit/utils.py": '''
        """Numerical helpers."""

        import random

        import numpy as np


        def set_seed(seed):
            """Seed Python's and numpy's random number generators."""
            random.seed(seed)
            np.random.seed(seed)


        def softmax(logits, axis=-1):
            """Numerically stable softmax."""
            shifted = logits - logits.max(axis=axis, keepdims=True)
            e = np.exp(shifted)
            return e / e.sum(axis=axis, keepdims=True)


        def log_softmax(logits, axis=-1):
            """Logarithm of the softmax, computed stably."""
            shifted = logits - logits.max(axis=axis, keepdims=True)
            return shifted - np.log(np.exp(shifted).sum(axis=axis, keepdims=True))


        def sigmoid(x):
            """The logistic function."""
            return 1.0 / (1.0 + np.exp(-x))


        def moving_average(values, window):
            """Running mean over a sliding window."""
            kernel = np.ones(window) / window
            return np.convolve(values, kernel, mode="valid")


        def pairwise_distances(a, b):
            """Euclidean distances between the rows of a and the rows of b."""
            diff = a[:, None, :] - b[None, :, :]
            return np.sqrt((diff ** 2).sum(axis=-1))


        def cosine_similarity(a, b, eps=1e-8):
            """Cosine similarity between the rows of a and the rows of b."""
            a = a / (np.linalg.norm(a, axis=1, keepdims=True) + eps)
            b = b / (np.linalg.norm(b, axis=1, keepdims=True) + eps)
            return a @ b.T


        class EarlyStopping:
            """Stop training when the validation loss stops improving."""

            def __init__(self, patience=3):
                self.patience, self.best, self.bad_epochs = patience, float("inf"), 0

            def should_stop(self, validation_loss):
                """Record one epoch's validation loss; True once it has not improved for patience epochs."""
                if validation_loss < self.best:
                    self.best, self.bad_epochs = validation_loss, 0
                else:
                    self.bad_epochs += 1
                return self.bad_epochs >= self.patience
    ''',
    "mlkit/layers.py": '''
        """Layers of a small multilayer perceptron."""

        import numpy as np


        def relu(x):
            """Rectified linear unit."""
            return np.maximum(x, 0.0)


        def linear_forward(x, weight, bias):
            """Affine map x W + b."""
            return x @ weight + bias


        class MLP:
            """A two-layer perceptron with ReLU."""

            def __init__(self, weights):
                self.weights = weights

            def forward(self, x):
                """Hidden layer with ReLU, then the output layer."""
                hidden = relu(linear_forward(x, self.weights["w1"], self.weights["b1"]))
                return linear_forward(hidden, self.weights["w2"], self.weights["b2"])
    ''',
}


@dataclass(frozen=True)
class Method:
    """A method of a paper: its function in mlkit/methods.py and the paper that describes it."""

    name: str
    code: str
    call: str
    """Lines of examples/train.py that call it (numpy as np, rng a Generator)."""
    title: str
    abstract: str
    method: str
    """The method section's text: how the paper explains it, with its equation."""
    algorithm: str
    """The lines of the paper's algorithm box."""
    related: str


METHODS = [
    Method(
        "info_nce_loss",
        '''
        def info_nce_loss(query, keys, positive_index, temperature=0.07):
            """Contrastive loss of each query against its positive key among the negatives."""
            q = query / np.linalg.norm(query, axis=1, keepdims=True)
            k = keys / np.linalg.norm(keys, axis=1, keepdims=True)
            logits = q @ k.T / temperature
            logits = logits - logits.max(axis=1, keepdims=True)
            log_prob = logits - np.log(np.exp(logits).sum(axis=1, keepdims=True))
            return float(-log_prob[np.arange(len(q)), positive_index].mean())
        ''',
        "loss = info_nce_loss(rng.normal(size=(8, 16)), rng.normal(size=(8, 16)), np.arange(8), temperature=0.1)",
        "Representation Learning with Contrastive Predictive Coding of Views",
        "We learn representations by contrasting each view of an example with the views of other examples. "
        "A contrastive objective with a temperature identifies the positive key among many negative keys.",
        "Each encoded query q is compared with a set of keys that contains one positive key k+ and many negative "
        "keys. Queries and keys are normalized to unit length, and their similarity is scaled by a temperature τ. "
        "The contrastive loss is the negative log probability of the positive key: L = -log exp(q·k+/τ) / Σ_j "
        "exp(q·k_j/τ), averaged over the queries of a batch. A small temperature sharpens the distribution over "
        "keys and weighs hard negative keys more.",
        "Algorithm 1 Contrastive loss\n1: normalize queries q and keys k to unit length\n2: logits ← q kᵀ / τ\n"
        "3: loss ← - mean log softmax(logits)[positive]",
        "Cross entropy with label smoothing and knowledge distillation with soft teacher targets also shape "
        "the output distribution of a network.",
    ),
    Method(
        "dpo_loss",
        '''
        def dpo_loss(policy_chosen_logps, policy_rejected_logps, reference_chosen_logps, reference_rejected_logps,
                     beta=0.1):
            """Direct preference optimization: a logistic loss on the policy's and the reference model's log ratios."""
            chosen = policy_chosen_logps - reference_chosen_logps
            rejected = policy_rejected_logps - reference_rejected_logps
            margin = beta * (chosen - rejected)
            return float(np.mean(np.logaddexp(0.0, -margin)))
        ''',
        "loss = dpo_loss(rng.normal(size=16), rng.normal(size=16), rng.normal(size=16), rng.normal(size=16), beta=0.1)",
        "Direct Preference Optimization: Your Language Model is Secretly a Reward Model",
        "We fit a language model policy to human preferences without reinforcement learning. The policy is "
        "trained with a simple classification loss on preferred and dispreferred responses.",
        "Given a prompt x, a preferred (chosen) response y_w and a dispreferred (rejected) response y_l, the "
        "policy π_θ is compared with a frozen reference model π_ref through log probability ratios. The direct "
        "preference optimization objective is L = -log σ(β log π_θ(y_w|x)/π_ref(y_w|x) - β log π_θ(y_l|x)/"
        "π_ref(y_l|x)), where σ is the logistic function and β controls how far the policy may move from the "
        "reference. The loss is averaged over the preference pairs of a batch.",
        "Algorithm 1 Preference optimization step\n1: compute log probabilities of chosen and rejected responses "
        "under the policy and the reference\n2: margin ← β (chosen log ratio - rejected log ratio)\n"
        "3: loss ← mean -log σ(margin)",
        "Reward models trained on preference comparisons, and contrastive objectives, are alternatives.",
    ),
    Method(
        "focal_loss",
        '''
        def focal_loss(probs, labels, gamma=2.0, alpha=0.25):
            """Cross entropy down-weighted on well classified examples."""
            p_t = np.where(labels == 1, probs, 1.0 - probs)
            alpha_t = np.where(labels == 1, alpha, 1.0 - alpha)
            return float(np.mean(-alpha_t * (1.0 - p_t) ** gamma * np.log(np.clip(p_t, 1e-12, 1.0))))
        ''',
        "loss = focal_loss(rng.uniform(0.01, 0.99, size=32), rng.integers(0, 2, size=32), gamma=2.0)",
        "Focal Loss for Dense Object Detection",
        "The extreme imbalance between foreground and background examples dominates the training of dense "
        "detectors. We reshape the cross entropy so that easy, well classified examples contribute little.",
        "For binary classification let p be the predicted probability of the positive class and p_t = p for a "
        "positive example and 1 - p otherwise. The focal loss adds a modulating factor (1 - p_t)^γ to the cross "
        "entropy: FL(p_t) = -α_t (1 - p_t)^γ log(p_t). The focusing parameter γ reduces the loss of easy "
        "examples, and the balancing weight α_t gives the positive class weight α and the negative class 1 - α.",
        "Algorithm 1 Focal loss\n1: p_t ← p if y = 1 else 1 - p\n2: α_t ← α if y = 1 else 1 - α\n"
        "3: loss ← mean -α_t (1 - p_t)^γ log p_t",
        "Hard example mining and class re-balancing with a weighted cross entropy address the same imbalance.",
    ),
    Method(
        "label_smoothing_cross_entropy",
        '''
        def label_smoothing_cross_entropy(logits, labels, smoothing=0.1):
            """Cross entropy against targets mixed with the uniform distribution."""
            n_classes = logits.shape[1]
            shifted = logits - logits.max(axis=1, keepdims=True)
            log_p = shifted - np.log(np.exp(shifted).sum(axis=1, keepdims=True))
            targets = np.full(logits.shape, smoothing / n_classes)
            targets[np.arange(len(labels)), labels] += 1.0 - smoothing
            return float(-(targets * log_p).sum(axis=1).mean())
        ''',
        "loss = label_smoothing_cross_entropy(rng.normal(size=(8, 5)), rng.integers(0, 5, size=8), smoothing=0.1)",
        "Rethinking the Inception Architecture: Regularizing Classifiers by Label Smoothing",
        "Classifiers trained on one-hot targets become over-confident. We regularize the classifier by "
        "smoothing its target distribution towards the uniform distribution over classes.",
        "For K classes and a ground-truth class y, the usual one-hot target q(k) = δ_{k,y} is replaced by the "
        "smoothed target q'(k) = (1 - ε) δ_{k,y} + ε / K, where ε is the smoothing parameter. The loss is the "
        "cross entropy between the smoothed target and the predicted distribution p = softmax(z) of the logits "
        "z: H(q', p) = -Σ_k q'(k) log p(k), averaged over the examples.",
        "Algorithm 1 Label smoothing\n1: q' ← (1 - ε) one-hot(y) + ε / K\n2: log p ← log softmax(z)\n"
        "3: loss ← mean over examples of -Σ_k q'(k) log p(k)",
        "Confidence penalties and knowledge distillation from a teacher also soften the targets.",
    ),
    Method(
        "distillation_loss",
        '''
        def distillation_loss(student_logits, teacher_logits, labels, temperature=4.0, alpha=0.5):
            """Knowledge distillation: match the teacher's softened outputs, plus the hard-label loss."""
            def log_soft(z):
                z = z - z.max(axis=1, keepdims=True)
                return z - np.log(np.exp(z).sum(axis=1, keepdims=True))

            teacher = np.exp(log_soft(teacher_logits / temperature))
            soft = (teacher * (np.log(teacher + 1e-12) - log_soft(student_logits / temperature))).sum(axis=1)
            hard = -log_soft(student_logits)[np.arange(len(labels)), labels]
            return float(np.mean(alpha * temperature ** 2 * soft + (1 - alpha) * hard))
        ''',
        "loss = distillation_loss(rng.normal(size=(8, 5)), rng.normal(size=(8, 5)), rng.integers(0, 5, size=8))",
        "Distilling the Knowledge in a Neural Network",
        "A small student network is trained to reproduce the outputs of a large teacher network. The "
        "teacher's softened class probabilities carry more information than the hard labels.",
        "The teacher's logits v and the student's logits z are divided by a temperature T before the softmax, "
        "which gives soft targets. The student minimises a weighted sum of the Kullback-Leibler divergence "
        "between the teacher's and the student's softened distributions, scaled by T², and the ordinary cross "
        "entropy with the hard labels: L = α T² KL(softmax(v/T) || softmax(z/T)) + (1 - α) CE(y, softmax(z)).",
        "Algorithm 1 Distillation step\n1: soft targets ← softmax(teacher logits / T)\n2: soft loss ← KL("
        "soft targets || softmax(student logits / T)) T²\n3: loss ← α soft loss + (1 - α) cross entropy",
        "Label smoothing regularizes targets without a teacher; contrastive objectives learn representations.",
    ),
    Method(
        "gae_advantages",
        '''
        def gae_advantages(rewards, values, gamma=0.99, lam=0.95):
            """Generalized advantage estimation over one episode (values has one more entry than rewards)."""
            advantages = np.zeros(len(rewards))
            running = 0.0
            for t in reversed(range(len(rewards))):
                delta = rewards[t] + gamma * values[t + 1] - values[t]
                running = delta + gamma * lam * running
                advantages[t] = running
            return advantages
        ''',
        "adv = gae_advantages(rng.normal(size=20), rng.normal(size=21), gamma=0.99, lam=0.95)",
        "High-Dimensional Continuous Control Using Generalized Advantage Estimation",
        "Policy gradient methods suffer from the high variance of their gradient estimates. We estimate the "
        "advantage function with an exponentially weighted sum of temporal difference residuals.",
        "Let V be the value function and δ_t = r_t + γ V(s_{t+1}) - V(s_t) the temporal difference residual of "
        "the reward r_t at time step t. The generalized advantage estimator is the exponentially weighted "
        "average A_t = Σ_l (γλ)^l δ_{t+l}, computed backwards over an episode. The discount γ and the parameter "
        "λ trade bias for variance: λ = 0 gives the one-step residual and λ = 1 the Monte Carlo return minus "
        "the value baseline.",
        "Algorithm 1 Advantage estimation\n1: for t = T-1 down to 0 do\n2: δ_t ← r_t + γ V(s_{t+1}) - V(s_t)\n"
        "3: A_t ← δ_t + γ λ A_{t+1}",
        "Trust region policy optimization and actor-critic methods use such advantage estimates.",
    ),
]

SETUP = (
    "We train every model with the Adam optimizer, a learning rate of 0.001 with linear warmup and cosine "
    "decay, a batch size of 64 and gradient clipping at norm 1.0. Features are standardized, the data set is "
    "split into a training set and a test set, and we report accuracy, precision, recall and F1 score, with "
    "early stopping on the validation loss. Each experiment is repeated with three random seeds."
)
INTRO = (
    "Deep networks trained with stochastic gradient descent reach high accuracy on many benchmarks, yet the "
    "choice of training objective still matters. In this work we study one such objective and show that it "
    "is simple to implement and improves results across data sets."
)


def write_files(root: Path, files: dict[str, str]) -> None:
    """Write dedented ``files`` (relative path -> text) under ``root``."""
    for rel, text in files.items():
        path = root / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(textwrap.dedent(text).lstrip())


ANONYMOUS = "compute_objective"
"""The name the target gets in an anonymous repository (which also drops its docstring)."""


def _local_names(code: str) -> list[str]:
    """The parameters and local variables of the one function in ``code`` (nested functions' too)."""
    tree = ast.parse(code)
    names: list[str] = []
    for node in ast.walk(tree):
        if isinstance(node, ast.arg) or (isinstance(node, ast.Name) and isinstance(node.ctx, ast.Store)):
            name = node.arg if isinstance(node, ast.arg) else node.id
            if name not in names:
                names.append(name)
    return names


def _method_code(m: Method, anonymous: bool, obfuscated: bool = False) -> tuple[str, dict[str, str]]:
    """The method's source and the renaming of its parameters (``obfuscated``: every local named ``v<k>``)."""
    code = textwrap.dedent(m.code).strip() + "\n"
    renamed: dict[str, str] = {}
    if anonymous or obfuscated:
        code = code.replace(f"def {m.name}(", f"def {ANONYMOUS}(", 1)
        lines = code.splitlines(keepends=True)
        doc = next(i for i, ln in enumerate(lines) if ln.strip().startswith('"""'))
        code = "".join(lines[:doc] + lines[doc + 1 :])
    if obfuscated:
        renamed = {name: f"v{k}" for k, name in enumerate(_local_names(code))}
        code = re.sub(r"\b[A-Za-z_]\w*\b", lambda mt: renamed.get(mt.group(), mt.group()), code)
    return code, renamed


def repo_files(target: Method, anonymous: bool = False, obfuscated: bool = False) -> dict[str, str]:
    """The repository's files: utilities, the six methods, an example that calls ``target``, tests. An
    ``anonymous`` repository names the target ``compute_objective`` and gives it no docstring; an ``obfuscated``
    one also names its parameters and variables ``v0``, ``v1``... (only its calls and operations are left)."""
    codes = {m.name: _method_code(m, m is target and anonymous, m is target and obfuscated) for m in METHODS}
    methods = '"""Training objectives and estimators."""\n\nimport numpy as np\n\n\n' + "\n\n".join(
        codes[m.name][0] for m in METHODS
    )
    call = target.call
    if anonymous or obfuscated:
        call = call.replace(f"{target.name}(", f"{ANONYMOUS}(")
        for old, new in codes[target.name][1].items():
            call = re.sub(rf"\b{old}=", f"{new}=", call)
    train = f"""\
        import sys
        from pathlib import Path

        sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

        import numpy as np

        from mlkit.methods import *  # noqa: F403
        from mlkit.metrics import accuracy
        from mlkit.utils import softmax

        rng = np.random.default_rng(0)
        for step in range(3):
            {call}
        print("accuracy", accuracy(softmax(rng.normal(size=(4, 3))).argmax(axis=1), np.array([0, 1, 2, 0])))
    """
    tests = """\
        import numpy as np

        from mlkit.metrics import accuracy, precision_recall_f1


        def test_accuracy():
            assert accuracy(np.array([1, 0, 1]), np.array([1, 1, 1])) == 2 / 3


        def test_f1():
            p, r, f1 = precision_recall_f1(np.array([1, 0, 1]), np.array([1, 1, 0]))
            assert f1 == 0.5
    """
    return {**UTILS, "mlkit/__init__.py": "", "mlkit/methods.py": methods, "examples/train.py": train,
            "tests/test_metrics.py": tests, "requirements.txt": "numpy\n"}


def paper_text(target: Method) -> list[tuple[str, str]]:
    """(heading, body) of each section of the paper about ``target``."""
    return [
        ("Abstract", target.abstract),
        ("1 Introduction", INTRO + " " + target.abstract),
        ("2 Related Work", target.related + " Optimizers such as Adam and schedules of the learning rate are "
         "orthogonal to our contribution."),
        ("3 Method", target.method),
        (target.algorithm.split("\n", 1)[0], target.algorithm.split("\n", 1)[1]),
        ("4 Experiments", SETUP),
        ("5 Conclusion", "We presented a simple objective and showed that it improves accuracy."),
        ("References", "[1] D. Kingma and J. Ba. Adam: A method for stochastic optimization. 2015."),
    ]


def write_paper(target: Method, pdf: Path) -> Path:
    """A two-page PDF of the paper about ``target`` (a font with Greek letters, subset on save)."""
    doc = pymupdf.open()
    font = pymupdf.Font("cjk")
    sections = paper_text(target)
    for number, half in enumerate((sections[:4], sections[4:])):
        page = doc.new_page(width=595, height=842)
        page.insert_font(fontname="F0", fontbuffer=font.buffer)
        y = 50.0
        if number == 0:
            page.insert_textbox(pymupdf.Rect(50, y, 545, y + 50), target.title, fontsize=13, fontname="F0", align=1)
            y += 60
        for heading, body in half:
            if heading.startswith("Algorithm"):
                text = heading + "\n" + body
            else:
                text = heading + "\n" + textwrap.fill(body, 100)
            height = 14 * (text.count("\n") + 2)
            page.insert_textbox(pymupdf.Rect(50, y, 545, y + height), text, fontsize=9.5, fontname="F0")
            y += height + 8
    doc.subset_fonts()
    doc.save(pdf, garbage=3, deflate=True)
    doc.close()
    return pdf


def make_pair(
    folder: Path, target: Method, *, git: bool = True, anonymous: bool = False, obfuscated: bool = False
) -> tuple[Path, Path]:
    """Write ``folder/repo`` (a git repository when ``git``) and ``folder/paper.pdf``; return both."""
    repo = folder / "repo"
    write_files(repo, repo_files(target, anonymous, obfuscated))
    if git:
        run = {"cwd": repo, "check": True, "capture_output": True}
        subprocess.run(["git", "init", "-q", "-b", "main"], **run)  # type: ignore[call-overload]
        subprocess.run(["git", "add", "-A"], **run)  # type: ignore[call-overload]
        subprocess.run(["git", "-c", "user.name=t", "-c", "user.email=t@e", "commit", "-qm", "init"], **run)  # type: ignore[call-overload]
    return repo, write_paper(target, folder / "paper.pdf")


def target_ref(target: Method, anonymous: bool = False) -> str:
    """``mlkit/methods.py::name``: the function the paper describes (``anonymous``: also when obfuscated)."""
    return f"mlkit/methods.py::{ANONYMOUS if anonymous else target.name}"
