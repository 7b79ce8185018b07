"""Polynomials in trip counts: arithmetic, printing as the paper does, evaluation, maxima."""

from __future__ import annotations

import pytest

from simulator.analyzer.errors import AnalyzerError
from simulator.analyzer.polynomial import MaxPolynomial, Polynomial

a = Polynomial.symbol("a")
b = Polynomial.symbol("b")


def test_it_prints_the_constant_first_like_the_paper() -> None:
    assert str(23 + 4 * a) == "23 + 4a"
    assert str(942 + 24 * a) == "942 + 24a"
    assert str(Polynomial.constant(384)) == "384"
    assert str(Polynomial()) == "0"


def test_it_multiplies_nested_trip_counts() -> None:
    assert str((2 + a) * b) == "2b + ab"
    assert str(a * a - 1) == "-1 + a^2"
    assert str(3 * Polynomial.symbol("n_iter")) == "3*n_iter"


def test_it_evaluates_and_substitutes() -> None:
    assert (942 + 24 * a).evaluate({"a": 4}) == 1038
    assert (a * b + 1).substitute({"a": 3}) == 3 * b + 1


def test_it_rejects_evaluation_without_a_value() -> None:
    with pytest.raises(AnalyzerError, match="needs a value for a"):
        (1 + a).evaluate({})


def test_max_keeps_only_undominated_candidates() -> None:
    assert str(MaxPolynomial.of([10 + a, 5 + a, Polynomial.constant(3)])) == "10 + a"
    both = MaxPolynomial.of([100 + a, 1 + 5 * a])
    assert len(both.candidates) == 2
    assert both.evaluate({"a": 1}) == 101
    assert both.evaluate({"a": 100}) == 501
    assert str(both).startswith("max(")


def test_max_distributes_over_addition_and_scaling() -> None:
    total = MaxPolynomial.of([a, Polynomial.constant(2)]) + 3
    assert total.evaluate({"a": 10}) == 13
    assert (MaxPolynomial.of([Polynomial.constant(24)]) * a).single == 24 * a
