"""Parameter declarations (kofs.registry.Param) and their one validation path."""

from __future__ import annotations

import math

import pytest

from kofs.aggregate import AGGREGATORS
from kofs.errors import ParameterError
from kofs.rankers import RANKERS, run_ranker
from kofs.registry import Param, resolve_params
from kofs.types import Expression

P = {
    "k": Param(5, int, "neighbours", low=1),
    "t": Param(None, float, "width", low=0, closed="right"),
    "lam": Param(0.5, float, "decay", low=0, high=1, closed="left"),
    "w": Param(0.5, float, "weight", low=0, high=1, closed="neither"),
    "how": Param("a", str, "mode", choices=("a", "b")),
    "flag": Param(False, bool, "switch"),
}


@pytest.mark.parametrize(
    ("key", "text"),
    [
        ("k", "an int in [1, inf)"),
        ("t", "a float in (0, inf) or None"),
        ("lam", "a float in [0, 1)"),
        ("w", "a float in (0, 1)"),
        ("how", "one of 'a', 'b'"),
        ("flag", "a boolean"),
    ],
)
def test_allowed_in_words(key, text):
    assert P[key].allowed() == text


@pytest.mark.parametrize(
    ("given", "expect"),
    [
        ({}, {"k": 5, "t": None, "lam": 0.5, "w": 0.5, "how": "a", "flag": False}),
        ({"k": "3", "t": "0.1", "lam": 0, "w": 0.999, "how": "b", "flag": "yes"}, None),
        ({"t": None}, None),
    ],
)
def test_valid_values_are_coerced(given, expect):
    out = resolve_params("ranker 'x'", P, given)
    if expect is not None:
        assert out == expect
    assert isinstance(out["k"], int) and isinstance(out["flag"], bool)


@pytest.mark.parametrize(
    ("given", "message"),
    [
        ({"k": 0}, "ranker 'x': parameter 'k' must be an int in [1, inf), got 0"),
        ({"k": None}, "ranker 'x': parameter 'k' must be an int in [1, inf), got None"),
        ({"k": "abc"}, "ranker 'x': parameter 'k' must be an int in [1, inf), got 'abc'"),
        ({"t": 0.0}, "ranker 'x': parameter 't' must be a float in (0, inf) or None, got 0.0"),
        ({"t": math.nan}, "ranker 'x': parameter 't' must be a float in (0, inf) or None, got nan"),
        ({"t": math.inf}, "ranker 'x': parameter 't' must be a float in (0, inf) or None, got inf"),
        ({"k": -math.inf}, "ranker 'x': parameter 'k' must be an int in [1, inf), got -inf"),
        ({"lam": 1.0}, "ranker 'x': parameter 'lam' must be a float in [0, 1), got 1.0"),
        ({"lam": -0.1}, "ranker 'x': parameter 'lam' must be a float in [0, 1), got -0.1"),
        ({"w": 0}, "ranker 'x': parameter 'w' must be a float in (0, 1), got 0"),
        ({"how": "c"}, "ranker 'x': parameter 'how' must be one of 'a', 'b', got 'c'"),
        ({"flag": "maybe"}, "ranker 'x': parameter 'flag' must be a boolean, got 'maybe'"),
    ],
)
def test_one_message_names_owner_parameter_allowed_and_value(given, message):
    with pytest.raises(ParameterError) as err:
        resolve_params("ranker 'x'", P, given)
    assert str(err.value) == message


def test_unknown_parameter_hint():
    with pytest.raises(ParameterError, match=r"unknown parameter 'kk' \(did you mean 'k'\?\)"):
        resolve_params("ranker 'x'", P, {"kk": 1})


def test_declarations_are_checked():
    with pytest.raises(RuntimeError, match="closed"):
        Param(1, int, "x", closed="open")
    with pytest.raises(RuntimeError, match="default 0"):
        Param(0, int, "x", low=1)
    assert Param(None, int, "x", none_ok=False).none_ok is False


def test_every_registered_default_is_allowed():
    for spec in (*RANKERS, *AGGREGATORS):
        for key, p in spec.params.items():
            assert p.accepts(p.default), (spec.name, key)
            assert p.none_ok == (p.default is None), (spec.name, key)


@pytest.mark.parametrize(
    ("ranker", "params", "allowed"),
    [
        ("laplacian", {"t": 0}, "a float in (0, inf) or None"),
        ("spec-phi1", {"delta": 0.0}, "a float in [1e-150, 1e+150] or None"),
        ("spec-phi1", {"alpha": 1.5}, "a float in [0, 1] or None"),
    ],
)
def test_declared_bounds_reach_the_runner(ranker, params, allowed):
    e = Expression([[0.0, 1.0], [1.0, 0.0], [2.0, 2.0]], ["a", "b"], ["s1", "s2", "s3"])
    with pytest.raises(ParameterError, match=rf"ranker '{ranker}': parameter .* must be "):
        run_ranker(ranker, e, params=params)
    with pytest.raises(ParameterError) as err:
        run_ranker(ranker, e, params=params)
    assert allowed in str(err.value)
