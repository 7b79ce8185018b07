"""Polynomials in loop trip counts, and maxima of them (the latency bound of 000 section 5.1).

INS_cuda, INS_issued and GMem_bytes are sums of per-instruction counts times the trip counts of
the enclosing loops, so they are polynomials with non-negative coefficients in the trip-count
symbols (``23 + 4a``). Lat_bound is a longest path whose edge labels may be such polynomials, so
in general it is the maximum of several of them; `MaxPolynomial` keeps only the candidates that
no other candidate dominates coefficient-wise (trip counts are >= 0).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from fractions import Fraction

from simulator.analyzer.errors import UNDEFINED_SYMBOL, AnalyzerError

Number = int | float | Fraction
Monomial = tuple[tuple[str, int], ...]  # sorted (symbol, power) pairs; () is the constant


def _clean(value: Number) -> int | float:
    """Return `value` as an int when it is integral, else as a float."""
    if isinstance(value, Fraction):
        return int(value) if value.denominator == 1 else float(value)
    if isinstance(value, float) and value.is_integer():
        return int(value)
    return value


def _mul_monomials(left: Monomial, right: Monomial) -> Monomial:
    powers: dict[str, int] = dict(left)
    for symbol, power in right:
        powers[symbol] = powers.get(symbol, 0) + power
    return tuple(sorted(powers.items()))


@dataclass(frozen=True)
class Polynomial:
    """A polynomial with numeric coefficients in named symbols (trip counts)."""

    terms: Mapping[Monomial, Number] = field(default_factory=dict)

    def __post_init__(self) -> None:
        cleaned = {m: c for m, c in self.terms.items() if c != 0}
        object.__setattr__(self, "terms", cleaned)

    @classmethod
    def constant(cls, value: Number) -> Polynomial:
        """Return the constant polynomial `value`."""
        return cls({(): value})

    @classmethod
    def symbol(cls, name: str) -> Polynomial:
        """Return the polynomial consisting of the single symbol `name`."""
        return cls({((name, 1),): 1})

    @classmethod
    def coerce(cls, value: Polynomial | Number) -> Polynomial:
        """Return `value` as a polynomial."""
        return value if isinstance(value, Polynomial) else cls.constant(value)

    def __add__(self, other: Polynomial | Number) -> Polynomial:
        """Return the sum."""
        result = dict(self.terms)
        for monomial, coefficient in Polynomial.coerce(other).terms.items():
            result[monomial] = result.get(monomial, 0) + coefficient
        return Polynomial(result)

    __radd__ = __add__

    def __neg__(self) -> Polynomial:
        """Return the negation."""
        return Polynomial({m: -c for m, c in self.terms.items()})

    def __sub__(self, other: Polynomial | Number) -> Polynomial:
        """Return the difference."""
        return self + (-Polynomial.coerce(other))

    def __rsub__(self, other: Polynomial | Number) -> Polynomial:
        """Return `other` minus self."""
        return Polynomial.coerce(other) - self

    def __mul__(self, other: Polynomial | Number) -> Polynomial:
        """Return the product."""
        result: dict[Monomial, Number] = {}
        for m1, c1 in self.terms.items():
            for m2, c2 in Polynomial.coerce(other).terms.items():
                key = _mul_monomials(m1, m2)
                result[key] = result.get(key, 0) + c1 * c2
        return Polynomial(result)

    __rmul__ = __mul__

    def __eq__(self, other: object) -> bool:
        """Return whether both have the same terms (numbers compare as constants)."""
        if isinstance(other, int | float | Fraction):
            other = Polynomial.constant(other)
        if not isinstance(other, Polynomial):
            return NotImplemented
        return dict(self.terms) == dict(other.terms)

    def __hash__(self) -> int:
        """Return a hash consistent with equality."""
        return hash(frozenset(self.terms.items()))

    @property
    def symbols(self) -> frozenset[str]:
        """Return the symbols that occur."""
        return frozenset(s for m in self.terms for s, _ in m)

    @property
    def is_constant(self) -> bool:
        """Return whether no symbol occurs."""
        return not self.symbols

    def coefficient(self, *symbols: str) -> int | float:
        """Return the coefficient of the product of `symbols` (none: the constant term)."""
        powers: dict[str, int] = {}
        for s in symbols:
            powers[s] = powers.get(s, 0) + 1
        return _clean(self.terms.get(tuple(sorted(powers.items())), 0))

    def evaluate(self, values: Mapping[str, Number] | None = None) -> int | float:
        """Return the value at `values` (symbol -> number); raises for a missing symbol."""
        values = values or {}
        missing = sorted(self.symbols - set(values))
        if missing:
            raise AnalyzerError(UNDEFINED_SYMBOL.format(poly=self, names=", ".join(missing)))
        total: Number = 0
        for monomial, coefficient in self.terms.items():
            term: Number = coefficient
            for symbol, power in monomial:
                term = term * Fraction(values[symbol]) ** power
            total += term
        return _clean(total)

    def substitute(self, values: Mapping[str, Number]) -> Polynomial:
        """Return the polynomial with the given symbols replaced by numbers."""
        result = Polynomial()
        for monomial, coefficient in self.terms.items():
            term = Polynomial.constant(coefficient)
            for symbol, power in monomial:
                factor = (
                    Polynomial.constant(Fraction(values[symbol]) ** power)
                    if symbol in values
                    else Polynomial({((symbol, power),): 1})
                )
                term = term * factor
            result = result + term
        return Polynomial({m: _clean(c) for m, c in result.terms.items()})

    def dominates(self, other: Polynomial) -> bool:
        """Return whether self >= other for all non-negative symbol values (coefficient-wise)."""
        return all(c >= 0 for c in (self - other).terms.values())

    def __str__(self) -> str:
        """Return the polynomial as the paper writes it: constant first, e.g. '942 + 24a'."""
        if not self.terms:
            return "0"

        def order(monomial: Monomial) -> tuple[int, Monomial]:
            return (sum(p for _, p in monomial), monomial)

        parts: list[str] = []
        for monomial in sorted(self.terms, key=order):
            coefficient = _clean(self.terms[monomial])
            sign = "-" if coefficient < 0 else "+"
            magnitude = abs(coefficient)
            if not monomial:
                body = f"{magnitude}"
            else:
                short = all(len(s) == 1 for s, _ in monomial)
                factors = [s if p == 1 else f"{s}^{p}" for s, p in monomial]
                joined = "".join(factors) if short else "*".join(factors)
                if magnitude == 1:
                    body = joined
                else:
                    body = f"{magnitude}{joined}" if short else f"{magnitude}*{joined}"
            parts.append(f"{sign} {body}")
        text = " ".join(parts)
        return text[2:] if text.startswith("+ ") else "-" + text[2:]

    def __repr__(self) -> str:
        """Return a readable representation."""
        return f"Polynomial({str(self)!r})"


@dataclass(frozen=True)
class MaxPolynomial:
    """The maximum of polynomials, none of which dominates another."""

    candidates: tuple[Polynomial, ...]

    @classmethod
    def of(cls, values: Iterable[Polynomial | Number | MaxPolynomial]) -> MaxPolynomial:
        """Return the maximum of `values`, dropping dominated candidates."""
        pool: list[Polynomial] = []
        for value in values:
            if isinstance(value, MaxPolynomial):
                pool.extend(value.candidates)
            else:
                pool.append(Polynomial.coerce(value))
        kept: list[Polynomial] = []
        for candidate in pool:
            if any(other.dominates(candidate) for other in kept):
                continue
            kept = [other for other in kept if not candidate.dominates(other)]
            kept.append(candidate)
        return cls(tuple(kept))

    @classmethod
    def coerce(cls, value: Polynomial | Number | MaxPolynomial) -> MaxPolynomial:
        """Return `value` as a maximum of polynomials."""
        return value if isinstance(value, MaxPolynomial) else cls.of([value])

    def __add__(self, other: Polynomial | Number | MaxPolynomial) -> MaxPolynomial:
        """Return the maximum of all pairwise sums (max distributes over +)."""
        right = MaxPolynomial.coerce(other)
        return MaxPolynomial.of(a + b for a in self.candidates for b in right.candidates)

    def __mul__(self, factor: Polynomial | Number) -> MaxPolynomial:
        """Return the maximum scaled by a non-negative `factor` (a trip count)."""
        return MaxPolynomial.of(c * factor for c in self.candidates)

    def evaluate(self, values: Mapping[str, Number] | None = None) -> int | float:
        """Return the numeric maximum at `values`."""
        return max(c.evaluate(values) for c in self.candidates)

    def leading(self, values: Mapping[str, Number] | None = None) -> Polynomial:
        """Return the candidate that is largest at `values` (missing symbols taken as 1)."""
        symbols = {s for c in self.candidates for s in c.symbols}
        point = {s: 1 for s in symbols} | dict(values or {})
        return max(self.candidates, key=lambda c: (c.evaluate(point), len(c.terms)))

    @property
    def single(self) -> Polynomial | None:
        """Return the only candidate, or None when the maximum needs several."""
        return self.candidates[0] if len(self.candidates) == 1 else None

    def __str__(self) -> str:
        """Return 'p' for a single candidate, else 'max(p, q, ...)'."""
        if len(self.candidates) == 1:
            return str(self.candidates[0])
        return "max(" + ", ".join(str(c) for c in self.candidates) + ")"
