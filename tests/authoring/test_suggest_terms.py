"""The words that a paper and code share: split identifiers, named Greek symbols, expanded abbreviations."""

from __future__ import annotations

from lmrbench.authoring.suggest.suggest_terms import fold, split_identifier, terms


def test_identifiers_split_at_snake_and_camel_case():
    assert split_identifier("logSoftmaxTemp_2") == ["log", "softmax", "temp", "2"]
    assert split_identifier("HTTPServer_retry") == ["http", "server", "retry"]
    assert split_identifier("policy_chosen_logps") == ["policy", "chosen", "logps"]


def test_plurals_fold_onto_the_singular_but_other_words_stay():
    assert [fold(w) for w in ("losses", "probabilities", "keys", "logits")] == ["loss", "probability", "key", "logit"]
    assert [fold(w) for w in ("loss", "focus", "basis")] == ["loss", "focus", "basis"]


def test_greek_symbols_of_an_equation_meet_the_names_code_gives_them():
    paper = terms("L = -log σ(β (r_w - r_l)) with temperature τ")
    code = terms("def f(beta, tau):\n    return sigmoid(beta * tau)", expand=True)
    assert {"sigma", "beta", "tau"} <= set(paper)
    assert {"beta", "tau", "temperature"} <= set(code)


def test_stop_words_and_python_names_say_nothing():
    assert terms("the loss of the model is used in this paper") == ["loss", "model"]
    assert terms("def f(self, x):\n    return np.asarray(x)") == []


def test_source_gives_its_names_comments_and_docstrings():
    src = 'def margin_loss(a):\n    """Hinge on the margin."""\n    # clip negatives\n    return a\n'
    words = terms(src)
    assert words[:2] == ["margin", "loss"] and {"hinge", "clip", "negative"} <= set(words)
