"""The exception hierarchy (kofs/errors.py)."""

from __future__ import annotations

import pytest

from kofs.errors import CoverageError, InputError, KofsError, ParameterError, ResourceError
from kofs.io._open import table_errors


@pytest.mark.parametrize("cls", [InputError, ParameterError, CoverageError])
def test_input_and_parameter_errors_are_value_errors(cls):
    err = cls("bad", path="f.tsv", line=3)
    assert isinstance(err, KofsError) and isinstance(err, ValueError)
    assert str(err) == "f.tsv:3: bad" and err.exit_code == 2


def test_resource_error_is_not_a_value_error():
    assert not issubclass(ResourceError, ValueError)


def test_table_errors_lets_a_kofs_error_through_unchanged():
    with pytest.raises(InputError, match=r"^x\.tsv: precise message$"):
        with table_errors("x.tsv", "table"):
            raise InputError("precise message", path="x.tsv")
    with pytest.raises(InputError, match="table cannot be parsed"):
        with table_errors("x.tsv", "table"):
            raise ValueError("other")
