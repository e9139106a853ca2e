"""The rules behind the inputs a driver never gives, in-process: what counts as a parameter read through an alias,
which non-finite results are outside a function's domain, and how a call is reshaped, mixed or filled."""

from __future__ import annotations

import ast
import sys
from pathlib import Path

import numpy as np

from lmrbench.authoring.record.body_helpers import aliases
from lmrbench.authoring.record.body_reads import body_reads
from lmrbench.runtime import lmrbench_leaves
from lmrbench.runtime.lmrbench_values import Encoder

sys.path.insert(0, str(Path(lmrbench_leaves.__file__).parent))  # the runtime imports its siblings by shipped names
import lmrbench_input_text as input_text  # noqa: E402
import lmrbench_search as search  # noqa: E402
import lmrbench_variations as variations  # noqa: E402

BLOCK = '''
def block(tokens, lprobs, size=3):
    n = size
    out = lprobs.copy()
    if n <= 0:
        return out
    out[0, tokens[0, -n]] = -1.0
    return out
'''


def test_a_parameter_read_through_a_local_alias_is_compared_where_the_alias_is():
    func = ast.parse(BLOCK).body[0]
    assert isinstance(func, ast.FunctionDef)
    # ``n`` inside the subscript of ``out[...] = ...`` is read, not assigned: it stays an alias
    assert set(aliases(func)) == {"n"}
    reads = body_reads(BLOCK, "block", ["tokens", "lprobs", "size"])
    assert reads.signed == ["size"] and reads.bounds == {"size": ["0"]}
    reassigned = BLOCK.replace("    out = lprobs.copy()\n", "    out = lprobs.copy()\n    size = 2\n")
    assert "n" not in aliases(ast.parse(reassigned).body[0])  # type: ignore[arg-type]


def test_a_kind_of_non_finite_value_the_recorded_results_hold_is_inside_the_domain():
    masked = np.array([0.5, -np.inf])
    assert search.nonfinite((masked, {"x": np.array([np.nan])})) == {"-inf", "nan"}
    recorded = search.nonfinite([1.0, masked])  # the kinds the recorded results hold
    assert not search.outside(np.array([-np.inf, 1.0]), recorded)  # a banned token, as recorded calls give
    assert search.outside(np.array([np.nan]), recorded)
    assert search.outside(float("inf"), search.nonfinite([np.array([1.0])]))


def _case(**arguments: object) -> tuple[dict, dict]:
    enc = Encoder()
    args = [{"name": k, "kind": "positional_or_keyword", "value": enc.encode(v, k)} for k, v in arguments.items()]
    return {"arguments": args, "self": None}, enc.arrays


def test_a_tied_head_count_is_cut_with_the_axes_of_its_length():
    case, arrays = _case(scores=np.zeros((2, 4, 5, 5)), n_heads=4)
    built = variations.build({"resize": ["n_heads"], "to": 3}, case, arrays)
    assert built is not None
    new, new_arrays = built
    assert lmrbench_leaves.get(new, new_arrays, "n_heads") == 3
    assert new_arrays[variations.array_key(new, "scores", new_arrays)].shape == (2, 3, 5, 5)
    assert variations.build({"resize": ["n_heads"], "to": 4}, case, arrays) is None  # not below it: nothing to cut


def test_a_shape_tuple_grows_by_the_axis_before_it_and_arrays_of_its_shape_follow():
    case, arrays = _case(x=np.ones((2, 5, 8)), shape=(8,), weight=np.ones(8))
    assert variations.shape_tuples(case, arrays) == ["shape"]
    new, new_arrays = variations.build({"grow": "shape"}, case, arrays)  # type: ignore[misc]
    assert lmrbench_leaves.node(new, "shape")["items"] == [5, 8]
    weight = new_arrays[variations.array_key(new, "weight", new_arrays)]
    assert weight.shape == (5, 8) and len({tuple(row) for row in weight}) == 5  # the copies differ


def test_timesteps_given_one_at_a_time_are_mixed_in_one_call():
    calls = [("case_1.npz", *_case(t=np.full(4, 9))), ("case_2.npz", *_case(t=np.full(4, 0))),
             ("case_3.npz", *_case(t=np.array([3, 1, 2, 0])))]
    _, case, arrays = calls[0]
    assert variations.mixed(case, arrays, calls) == {"t": [9, 0]}
    new, new_arrays = variations.build({"mix": "t", "values": [9, 0]}, case, arrays)  # type: ignore[misc]
    assert new_arrays[variations.array_key(new, "t", new_arrays)].tolist() == [9, 0, 9, 0]


def test_an_optional_mask_is_filled_with_bools_and_padded_targets_get_the_ignore_index():
    case, arrays = _case(target=np.array([2, 0, 1, 1, 2, 0]), pad_mask=None)
    spec = {"fill": "pad_mask", "like": "target", "with": "random", "bool": True, "ignore": True}
    new, new_arrays = variations.build(spec, case, arrays)  # type: ignore[misc]
    mask = new_arrays[variations.array_key(new, "pad_mask", new_arrays)]
    target = new_arrays[variations.array_key(new, "target", new_arrays)]
    assert mask.dtype == np.bool_ and mask.any() and not mask.all()
    assert (target[mask] == variations.IGNORED).all() and (target[~mask] >= 0).all()
    assert "pad_mask given (True/False entries" in input_text.input_text(spec)
    assert input_text.input_text({"arrays": "one_zero", "only": "counts"}) == "counts with its last entry 0"


def test_an_id_parameter_moves_with_its_holders_and_takes_the_place_of_the_id_it_lands_on():
    import lmrbench_probe as probe

    labels = np.array([0, 3, 1, 3, 0, 2])
    # blank 0 -> 3: the blanks become 3 and the labels 3 become 0, so no label equals the new blank
    assert probe._remapped(labels, 0, 3).tolist() == [3, 0, 1, 0, 3, 2]
    # a negative sentinel (-100 -> 2) is no id a label may hold: the labels 2 stay, ignored too
    padded = np.array([-100, 2, 1, -100])
    assert probe._remapped(padded, -100, 2).tolist() == [2, 2, 1, 2]


SCALER = '''
class Scaler:
    def update(self, grads, growth_interval=200, eps=1e-8):
        """Unscale. ``growth_interval`` (>= 1) finite steps grow the scale; ``eps`` non-negative; ``k`` at least 2."""
        return grads
'''


def test_a_bound_the_docstring_states_is_kept_by_every_value_tried():
    from lmrbench.authoring.record.amplify_plans import in_domain

    reads = body_reads(SCALER, "Scaler.update", ["grads", "growth_interval", "eps"])
    assert reads.lows == {"growth_interval": (1.0, False), "eps": (0.0, False), "k": (2.0, False)}
    assert in_domain("growth_interval", [400, 0, 1, 100], [200], reads) == [400, 1, 100]
    assert in_domain("self.eps", [0.0, -1e-8, 1e-7], [1e-8], reads) == [0.0, 1e-7]


def test_a_nan_reaches_the_arrays_of_a_list_argument_of_a_call_that_had_not_overflowed():
    case, arrays = _case(grads=[np.ones(3), np.ones(2)])
    filled = variations.arrays_filled(case, arrays, "nan", guarded=False)
    assert [np.isnan(a).sum() for a in filled.values()] == [1, 1]
    overflowed, arrays = _case(grads=[np.array([1.0, np.inf]), np.ones(2)])
    assert variations.arrays_filled(overflowed, arrays, "nan", guarded=False) == {}


GUARDED = '''
class Scaler:
    def update(self, found_inf):
        if found_inf:
            self.scale = max(self.scale * self.backoff, self.min_scale)
            self.good = 0
        else:
            self.good += 1
            if self.good >= self.interval:
                self.scale = min(self.scale * 2.0, self.max_scale)
        return self.scale
'''


def test_a_leaf_a_guard_or_a_comparison_meets_is_tried_near_the_other_leaves_of_each_call():
    reads = body_reads(GUARDED, "Scaler.update", ["self", "found_inf"])
    assert reads.relatives["self.min_scale"] == ["self.scale", "self.backoff"]
    assert reads.relatives["self.max_scale"] == ["self.scale"]
    assert reads.relatives["self.interval"] == ["self.good"] and reads.relatives["self.good"] == ["self.interval"]
    case, arrays = _case(found_inf=True)
    case["self"] = {"$": "dict", "items": [["scale", 8192.0], ["backoff", 0.5], ["min_scale", 1.0], ["good", 5],
                                           ["interval", 200]]}
    # the floor near this call's scale (either side, never on it); a count at the other's edge, and never below 0
    assert variations.near(case, arrays, "self.min_scale", {"to": ["self.scale"], "low": None}) == [4096.0, 12288.0]
    assert variations.near(case, arrays, "self.interval", {"to": ["self.good"], "low": 0}) == [4, 5, 6]
    case["self"]["items"][3][1] = 0
    assert variations.near(case, arrays, "self.interval", {"to": ["self.good"], "low": 1}) == [1]


def test_a_count_of_blocks_of_rows_is_cut_with_its_rows_and_never_below_a_count_the_call_held_it_above():
    student, teacher = np.arange(48.0).reshape(12, 4), np.zeros((4, 4))
    case, arrays = _case(student=student, teacher=teacher)
    case["self"] = {"$": "dict", "items": [["ncrops", 6], ["n_global", 2]]}
    assert variations.blocked(case, arrays, "self.ncrops", 3) == ["student"]  # 4 rows are not blocks of 6
    built = variations.build({"set": {"self.ncrops": 3}, "blocks": "student"}, case, arrays)
    assert built is not None
    new, new_arrays = built
    cut = new_arrays[variations.array_key(new, "student", new_arrays)]
    assert np.array_equal(cut, student[:6]) and lmrbench_leaves.get(new, new_arrays, "self.ncrops") == 3
    assert variations.blocked(case, arrays, "self.ncrops", 1) == []  # fewer crops than global crops


def test_an_update_of_self_in_a_branch_is_dropped_by_a_mutant_and_named_with_the_case_that_kills_it():
    from lmrbench.authoring.mutants.mutant_hints import kill_hint
    from lmrbench.authoring.mutants.mutants import generate_mutants

    made = [m.description for m in generate_mutants(GUARDED, "Scaler.update") if m.kind == "drop_update"]
    assert [d.split(": ", 1)[1] for d in made] == [
        "drop the update `self.scale = max(self.scale * self.backoff, s...` under `if found_inf`",
        "drop the update `self.good = 0` under `if found_inf`",
        "drop the update `self.good += 1` under the else of `if found_inf`",
        "drop the update `self.scale = min(self.scale * 2.0, self.max_s...` under `if self.good >= self.interval`"]
    assert kill_hint("drop_update", made[1]) == ("a case where `found_inf` holds and the update changes self.good "
                                                 "(it starts at another value than the update gives it)")


SCALED = '''
def freqs(config, dim):
    scaling = config.scaling or {}
    kind = scaling.get("kind", "plain")
    head = getattr(config, "head_dim", None) or dim
    if kind not in ("plain", "linear"):
        raise ValueError(kind)
    low = config.low if config.low is not None else config.eps
    return head * low * (scaling.get("floor") or 32)
'''


def test_values_read_with_a_default_or_through_locals_are_the_leaves_they_name():
    reads = body_reads(SCALED, "freqs", ["config", "dim"])
    assert reads.literals == {'config.scaling["kind"]': ["plain", "linear"]}
    assert {'config.scaling["kind"]', "config.head_dim", 'config.scaling["floor"]', "config.low"} <= set(reads.paths)
    assert reads.gets == {'config.scaling["kind"]': "plain", 'config.scaling["floor"]': 32}
    # a setting left None stands in for the one it falls back to: it is tried near that one's value
    assert reads.relatives["config.low"] == ["config.eps"]
    case, arrays = _case(config={"low": None, "eps": 0.2})
    assert variations.near(case, arrays, 'config["low"]', {"to": ['config["eps"]'], "low": None}) == [0.1, 1.5 * 0.2]


CHECKED = '''
class Capped:
    def loss(self, adv):
        cfg = self.config
        if cfg.cap <= 1.0:
            raise ValueError(f"cap {cfg.cap}")
        return adv * cfg.cap
'''


def test_a_value_checked_before_it_is_used_is_also_pinned_where_it_is_used_and_searched_first():
    from lmrbench.authoring.mutants.mutants import generate_mutants
    from lmrbench.authoring.record.search_plans import focus

    pins = [m for m in generate_mutants(CHECKED, "Capped.loss", nested={"self.config.cap": [3.0]})
            if m.kind == "pin_nested"]
    assert [m.description for m in pins] == [
        "pin self.config.cap to 3.0 (its recorded value)",
        "pin self.config.cap to 3.0 (its recorded value) where it is computed with, not where it is checked "
        "(read 3 of 3)"]
    assert "return adv * 3.0" in pins[1].source and "if cfg.cap <= 1.0" in pins[1].source
    reads = body_reads(CHECKED, "Capped.loss", ["adv"])
    assert focus(CHECKED, "Capped.loss", reads, [pins[1].source]) == [["self.config.cap"]]
    specs = [{"set": {"self.config.eps": 1.0}}, {"set": {"self.config.cap": 1.5}}]
    assert search.aimed(specs, [{"id": "m", "focus": ["self.config.cap"]}]) == specs[::-1]


CONFIG_READS = '''
def rope(config, scores, dones, max_length=None):
    if max_length is None:
        max_length = config.n_positions
    head_dim = getattr(config, "head_dim", None) or config.hidden_size // config.num_heads
    scaling = config.scaling or {}
    factor = scaling.get("attention_factor")
    if scaling.get("mscale") and scaling.get("mscale_all_dim"):
        factor = 2.0
    keep = 1.0 - np.asarray(dones, dtype=np.float64)
    return scores[:max_length, :head_dim] * factor * keep
'''


def test_a_setting_left_unset_is_tried_as_what_it_falls_back_to_and_a_key_the_config_lacks_gets_numbers():
    from lmrbench.authoring.record.amplify_plans import UNSET_TRIES, unset_settings
    from lmrbench.authoring.record.body_forms import _converts
    from lmrbench.authoring.record.body_values import value_of

    reads = body_reads(CONFIG_READS, "rope", ["config", "scores", "dones", "max_length"])
    assert reads.fallbacks["config.head_dim"] == ["config.hidden_size // config.num_heads"]
    assert reads.fallbacks["max_length"] == ["config.n_positions"]  # ``if max_length is None: max_length = ...``
    assert set(reads.tested) == {'config.scaling["mscale"]', 'config.scaling["mscale_all_dim"]'}
    assert reads.gets['config.scaling["attention_factor"]'] is None
    assert value_of("config.hidden_size // config.num_heads", {"config.hidden_size": 64, "config.num_heads": 4}) == 16
    assert value_of("np.log(config.hidden_size)", {"config.hidden_size": 64}) is None
    seen = {"config.hidden_size": [64], "config.num_heads": [4], "config.n_positions": [32]}
    settings = unset_settings(reads, seen)
    assert settings["config.head_dim"] == [8, 32]  # half and twice the 16 it falls back to: a head size
    assert settings['config.scaling["attention_factor"]'] == list(UNSET_TRIES)
    assert "max_length" not in settings  # an argument left None is the search's (the path of a setting only)
    assert _converts(ast.parse(CONFIG_READS), ["config", "scores", "dones", "max_length"]) == ["dones"]


def test_an_object_of_the_repository_s_own_class_is_recorded_as_its_attributes(tmp_path, monkeypatch):
    from lmrbench.runtime.lmrbench_values import Decoder

    (tmp_path / "lm_model.py").write_text(
        "import numpy as np\n\n\nclass Config:\n    def __init__(self):\n        self.n_positions = 16\n\n\n"
        "class Bigram:\n    def __init__(self):\n        self.logp = np.zeros((3, 3))\n"
        "        self.config = Config()\n\n"
        "    def score(self, i, j):\n        return float(self.logp[i, j])\n\n\n"
        "class Slotted:\n    __slots__ = ('a',)\n")
    monkeypatch.syspath_prepend(str(tmp_path))
    import lm_model

    enc = Encoder("a")
    node = enc.encode(lm_model.Bigram(), "model")
    assert node["$"] == "dataclass" and node["type"] == "lm_model:Bigram"
    assert node["fields"]["config"]["fields"] == {"n_positions": 16}
    back = Decoder(enc.arrays).decode(node)
    assert type(back) is lm_model.Bigram and back.score(1, 2) == 0.0 and back.config.n_positions == 16
    for refused in (lm_model.Slotted(), type("Local", (), {"__module__": "__main__"})()):
        try:
            Encoder("b").encode(refused, "x")
        except Exception as exc:  # noqa: BLE001 - the codec's own error
            assert "cannot be saved faithfully" in str(exc)
        else:
            raise AssertionError(f"{type(refused).__name__} was saved")


def test_an_input_on_which_the_golden_code_overflows_makes_no_case():
    class Golden:
        checker = None

        def call(self, case, arrays):
            return np.minimum(np.exp(arrays["x"]), 2.0), None, None

    fine, overflowing = {"x": np.array([0.1, 0.5])}, {"x": np.array([1e3, 0.5])}
    case = {"arguments": [], "expected": None}
    assert search.golden_case(Golden(), case, fine)[0].tolist() == [float(np.exp(0.1)), float(np.exp(0.5))]
    try:
        search.golden_case(Golden(), case, overflowing)
    except FloatingPointError:
        pass
    else:
        raise AssertionError("a case was made of an input on which the golden code overflows")
