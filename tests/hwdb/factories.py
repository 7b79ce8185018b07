"""factory_boy factories for the hardware database's records."""

from __future__ import annotations

import json
from typing import Any

import factory
from django.contrib.auth.models import User

from hwdb.models import Attribute, Component, ComponentType, ComputationalModel, SystemModel
from hwdb.services.components import component_create
from simulator.gpu_catalogue import SEED

GPU_MODEL_SOURCE = "function computationTime(params) { return params.get('N') / (SMs * 1e9); }"


class UserFactory(factory.django.DjangoModelFactory[User]):
    username = factory.Sequence(lambda n: f"user{n}")
    password = factory.PostGenerationMethodCall("set_password", "secret-pass-123")

    class Meta:
        model = User
        skip_postgeneration_save = True

    @factory.post_generation
    def saved(self, create: bool, extracted: Any, **kwargs: Any) -> None:
        if create:
            self.save()


class ComponentFactory(factory.django.DjangoModelFactory[Component]):
    type = ComponentType.GPU
    name = factory.Sequence(lambda n: f"Test GPU {n}")
    vendor = "NVIDIA"
    owner = factory.SubFactory(UserFactory)
    shared = False

    class Meta:
        model = Component


class AttributeFactory(factory.django.DjangoModelFactory[Attribute]):
    component = factory.SubFactory(ComponentFactory)
    key = factory.Sequence(lambda n: f"attr{n}")
    value = 1.0
    unit = "count"
    source = "test"

    class Meta:
        model = Attribute


class GpuFactory(ComponentFactory):
    """A GPU with an SM count (default 13, the GTX 970's) and an SM clock."""

    class Meta:
        skip_postgeneration_save = True

    @factory.post_generation
    def sms(self, create: bool, extracted: float | None, **kwargs: Any) -> None:
        if create:
            AttributeFactory(
                component=self, key="SMs", value=13 if extracted is None else extracted
            )
            AttributeFactory(component=self, key="SMCoreClock", value=1253, unit="MHz")


class ComputationalModelFactory(factory.django.DjangoModelFactory[ComputationalModel]):
    name = factory.Sequence(lambda n: f"Model {n}")
    source = GPU_MODEL_SOURCE
    owner = factory.SubFactory(UserFactory)

    class Meta:
        model = ComputationalModel


def one_gpu_graph(component_id: int, model_id: int | None = None) -> dict[str, Any]:
    """Return a graph of a host group holding one GPU node."""
    gpu: dict[str, Any] = {
        "id": "gpu0",
        "name": "GPU",
        "hardware": component_id,
        "count": 1,
        "labels": {"GPU": 1},
        "parent": "host",
    }
    if model_id is not None:
        gpu["model"] = model_id
    return {"nodes": [{"id": "host", "name": "Host", "group": True}, gpu], "edges": []}


class SystemModelFactory(factory.django.DjangoModelFactory[SystemModel]):
    """A system model whose graph holds one GPU of the owner's; references are linked."""

    name = factory.Sequence(lambda n: f"System {n}")
    owner = factory.SubFactory(UserFactory)
    shared = False
    graph = factory.LazyAttribute(
        lambda o: one_gpu_graph(GpuFactory(owner=o.owner, shared=o.shared).pk)
    )

    class Meta:
        model = SystemModel
        skip_postgeneration_save = True

    @factory.post_generation
    def link(self, create: bool, extracted: Any, **kwargs: Any) -> None:
        if create:
            self.components.set([n["hardware"] for n in self.graph["nodes"] if "hardware" in n])


def seeded_gpu(name: str, *, owner: User | None = None, as_name: str | None = None) -> Component:
    """Store the hardware seed's record of GPU `name` (hwdb/seed/hardware.json), built in
    and shared unless `owner` is given (then private, under `as_name` if given), as
    `manage.py seed_hardware` does for a deployment's database."""
    components = json.loads(SEED.read_text(encoding="utf-8"))["components"]
    record = next(c for c in components if c["name"] == name)
    return component_create(
        owner=owner,
        shared=owner is None,
        type="GPU",
        name=as_name or name,
        attributes=record["attributes"],
    )
