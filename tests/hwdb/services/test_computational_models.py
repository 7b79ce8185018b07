"""Computational model services: clones and deletes."""

from __future__ import annotations

import pytest

from hwdb.models import ComputationalModel
from hwdb.services.common import RecordInUseError
from hwdb.services.computational_models import (
    computational_model_clone,
    computational_model_create,
    computational_model_delete,
)
from hwdb.services.system_models import system_model_create
from tests.hwdb.factories import ComputationalModelFactory, GpuFactory, UserFactory, one_gpu_graph

pytestmark = pytest.mark.django_db


def test_a_computational_model_clone_is_editable_even_from_a_builtin() -> None:
    builtin = computational_model_create(
        owner=None, name="Volkov", source="function f(){}", builtin=True, shared=True
    )
    clone = computational_model_clone(model=builtin, owner=UserFactory())
    assert (clone.builtin, clone.shared, clone.source) == (False, False, builtin.source)


def test_a_computational_model_in_use_cannot_be_deleted() -> None:
    owner = UserFactory()
    model = ComputationalModelFactory(owner=owner)
    system_model_create(
        owner=owner, name="S", graph=one_gpu_graph(GpuFactory(owner=owner).pk, model.pk)
    )
    with pytest.raises(RecordInUseError):
        computational_model_delete(model=model)
    assert ComputationalModel.objects.filter(pk=model.pk).exists()
