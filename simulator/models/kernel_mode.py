"""What every kernel mode of a GPU node shares: the node's model functions, with the kernel
functions answered by the mode and memoized (simulator.platform.ModelFunctions).

The modes are "detailed" (`gpu_detailed`, block by block), "petri" and "waves"
(`gpu_modes`); "analytic" is the node's own computational model and needs none of this.
"""

from __future__ import annotations

import json
from abc import ABC, abstractmethod
from collections.abc import Callable, Mapping
from typing import TYPE_CHECKING, Any, ClassVar, Protocol

from simulator.errors import ModelEvaluationError

if TYPE_CHECKING:
    from simulator.platform import ModelFunctions

MAX_MEMO = 256
NO_MODEL = "the node has no computational model defining {function}()"


class ModeEstimate(Protocol):
    """What a kernel mode's run gives: the kernel time and the figures the run page shows."""

    @property
    def time_s(self) -> float:
        """Return the kernel time in seconds."""
        ...

    def detail(self) -> dict[str, Any]:
        """Return the figures for computationDetail (the timeline's `detail`)."""
        ...


class KernelModeFunctions(ABC):
    """A GPU node's model functions in a kernel mode (simulator.platform.ModelFunctions):
    `computationTime` and `computationDetail` come from the mode's `_estimate`, every other
    function (p2pTime, power, failureRate) from the node's own model when it has one.

    Subclasses name the mode (MODEL_NAME, the model errors name) and implement `_estimate`.
    Estimates are memoized per distinct parameters: the modes are deterministic.
    """

    FUNCTIONS = ("computationTime", "computationDetail")
    MODEL_NAME: ClassVar[str] = "kernel mode"

    def __init__(self, attributes: Mapping[str, float], inner: ModelFunctions | None) -> None:
        self.attributes = attributes
        self.inner = inner
        self._memo: dict[str, ModeEstimate] = {}

    def has(self, function: str) -> bool:
        """Return whether the node answers `function` (the two kernel functions always)."""
        if function in self.FUNCTIONS:
            return True
        return self.inner is not None and self.inner.has(function)

    def call(self, function: str, *args: object, params: Mapping[str, object]) -> float:
        """Return the mode's kernel time for computationTime, else the node model's value."""
        if function == "computationTime":
            return self.estimate(function, params).time_s
        return self._inner(function).call(function, *args, params=params)

    def evaluate(self, function: str, *args: object, params: Mapping[str, object]) -> float:
        """Return `call`'s value: the mode's, else the node model's `evaluate`."""
        if function == "computationTime":
            return self.call(function, *args, params=params)
        return self._inner(function).evaluate(function, *args, params=params)

    def evaluator(
        self, function: str
    ) -> Callable[[tuple[object, ...], Mapping[str, object]], float]:
        """Return `(args, params) -> evaluate(function, *args, params=params)`."""
        return lambda args, params: self.evaluate(function, *args, params=params)

    def call_detail(self, function: str, *, params: Mapping[str, object]) -> dict[str, object]:
        """Return the mode's figures for computationDetail, else the node model's."""
        if function == "computationDetail":
            return self.estimate(function, params).detail()
        return self._inner(function).call_detail(function, params=params)

    def estimate(self, function: str, params: Mapping[str, object]) -> ModeEstimate:
        """Return the memoized estimate for `params`; ModelEvaluationError if they are bad."""
        try:
            key = json.dumps(params, sort_keys=True)
        except (TypeError, ValueError) as error:
            raise ModelEvaluationError(
                str(error), model=self.MODEL_NAME, function=function
            ) from None
        found = self._memo.get(key)
        if found is None:
            try:
                found = self._estimate(params)
            except ValueError as error:
                raise ModelEvaluationError(
                    str(error), model=self.MODEL_NAME, function=function
                ) from None
            if len(self._memo) >= MAX_MEMO:
                self._memo.clear()
            self._memo[key] = found
        return found

    @abstractmethod
    def _estimate(self, params: Mapping[str, object]) -> ModeEstimate:
        """Return the mode's run for `params`; ValueError names a bad parameter."""

    def _inner(self, function: str) -> ModelFunctions:
        if self.inner is None:
            raise ModelEvaluationError(
                NO_MODEL.format(function=function), model=self.MODEL_NAME, function=function
            )
        return self.inner
