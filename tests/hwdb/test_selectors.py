"""Selectors: who sees what, and the attribute condition parser behind `?attr=`."""

from __future__ import annotations

from typing import Any

import pytest
from django.contrib.auth.models import AnonymousUser
from django.core.exceptions import ValidationError

from hwdb import selectors
from hwdb.filters import parse_attribute_condition
from hwdb.models import Component, SystemModel
from tests.hwdb.factories import ComponentFactory, GpuFactory, SystemModelFactory


@pytest.mark.django_db
def test_users_see_their_own_shared_and_built_in_records_and_staff_see_all(
    user: Any, other_user: Any, staff: Any
) -> None:
    mine = ComponentFactory(owner=user)
    theirs_shared = ComponentFactory(owner=other_user, shared=True)
    theirs_private = ComponentFactory(owner=other_user)
    builtin = ComponentFactory(owner=None, shared=True)
    assert set(selectors.component_list(user=user)) == {mine, theirs_shared, builtin}
    assert set(selectors.component_list(user=staff)) == {
        mine,
        theirs_shared,
        theirs_private,
        builtin,
    }
    assert set(selectors.component_list(user=AnonymousUser())) == {theirs_shared, builtin}
    assert set(selectors.visible_components(user=None)) == {theirs_shared, builtin}


@pytest.mark.django_db
def test_an_invisible_record_does_not_exist_for_the_user(user: Any, other_user: Any) -> None:
    private = SystemModelFactory(owner=other_user)
    with pytest.raises(
        SystemModel.DoesNotExist, match=rf"^No system model with id {private.pk}\.$"
    ):
        selectors.system_model_get(user=user, system_model_id=private.pk)
    with pytest.raises(Component.DoesNotExist, match=r"^No component with id 'not a number'\.$"):
        selectors.component_get(user=user, component_id="not a number")


@pytest.mark.django_db
def test_the_plain_sql_read_sees_what_visible_records_sees(
    user: Any, other_user: Any, staff: Any
) -> None:
    records = [
        SystemModelFactory(owner=user),
        SystemModelFactory(owner=other_user, shared=True),
        SystemModelFactory(owner=other_user),
        SystemModelFactory(owner=None, shared=True),
    ]
    for viewer in (user, other_user, staff, AnonymousUser(), None):
        visible = set(selectors.visible_records(SystemModel.objects.all(), user=viewer))
        for record in records:
            for record_id in (record.pk, str(record.pk)):  # plain SQL, and the ORM's fallback
                if record in visible:
                    found = selectors.visible_record(SystemModel, user=viewer, record_id=record_id)
                    assert (found, found.graph, found.updated) == (
                        record,
                        record.graph,
                        record.updated,
                    )
                else:
                    with pytest.raises(SystemModel.DoesNotExist, match=r"^No system model"):
                        selectors.visible_record(SystemModel, user=viewer, record_id=record_id)
    for missing in (10**9, 2**63, -(2**63) - 1, "x"):
        with pytest.raises(SystemModel.DoesNotExist):
            selectors.visible_record(SystemModel, user=staff, record_id=missing)


@pytest.mark.django_db
def test_a_snapshots_version_moves_with_what_the_snapshot_exports(user: Any) -> None:
    gpu, spare = GpuFactory(owner=user), ComponentFactory(owner=None, shared=True)
    system = SystemModelFactory(owner=user)

    def version() -> object:
        return selectors.system_model_snapshot_version(user=user, system_model_id=system.pk)

    first = version()
    assert first is not None and version() == first
    gpu.save()  # a component's write (its attributes are replaced with a save)
    second = version()
    assert second != first
    spare.delete()
    assert version() != second
    assert selectors.system_model_snapshot_version(user=user, system_model_id="1") is None
    other = SystemModelFactory(owner=None)  # built in, not shared: invisible to the user
    assert selectors.system_model_snapshot_version(user=user, system_model_id=other.pk) is None


@pytest.mark.django_db
def test_only_the_owner_or_staff_can_change(user: Any, other_user: Any, staff: Any) -> None:
    shared = GpuFactory(owner=other_user, shared=True)
    builtin = GpuFactory(owner=None, shared=True)
    assert selectors.can_change(user=other_user, record=shared)
    assert not selectors.can_change(user=user, record=shared)
    assert not selectors.can_change(user=user, record=builtin)
    assert selectors.can_change(user=staff, record=builtin)
    assert not selectors.can_change(user=AnonymousUser(), record=shared)


@pytest.mark.django_db
def test_bad_filters_raise_a_validation_error_naming_the_filter(user: Any) -> None:
    with pytest.raises(ValidationError) as excinfo:
        selectors.component_list(user=user, filters={"attr": "SMs>=80", "type": "TPU"})
    assert set(excinfo.value.message_dict) == {"attr", "type"}


@pytest.mark.parametrize(
    ("item", "expected"),
    [
        ("SMs__gte:80", ("SMs", "gte", 80.0)),
        ("SMs:13", ("SMs", "exact", 13.0)),
        ("startupHTD__lt:3.9687e-6", ("startupHTD", "lt", 3.9687e-6)),
        ("max__warps__lte:-1", ("max__warps", "lte", -1.0)),
    ],
)
def test_attribute_conditions_parse(item: str, expected: tuple[str, str, float]) -> None:
    assert parse_attribute_condition(item) == expected


@pytest.mark.parametrize("item", ["SMs", "SMs__gte:", "SMs__gte:inf", "1x:1", "a b:1"])
def test_malformed_attribute_conditions_are_refused(item: str) -> None:
    with pytest.raises(ValidationError):
        parse_attribute_condition(item)


@pytest.mark.django_db
def test_components_of_other_kinds_need_no_attributes() -> None:
    component = ComponentFactory(type="STORAGE")
    assert selectors.component_attribute_data(component) == []


@pytest.mark.django_db
def test_the_gpu_catalogue_holds_what_the_user_sees_their_own_records_first(
    user: Any, other_user: Any
) -> None:
    builtin = GpuFactory(owner=None, shared=True, name="H100 SXM5 80GB", sms=132)
    GpuFactory(owner=user, name="H100 SXM5 80GB", sms=114)  # a private copy, fewer SMs
    GpuFactory(owner=other_user, name="Their GPU")
    ComponentFactory(owner=user, type="CPU", name="A CPU")
    catalogue = selectors.gpu_catalogue(user=user)
    assert sorted(r.name for r in catalogue.records) == ["H100 SXM5 80GB", "H100 SXM5 80GB"]
    assert catalogue.get("h100 sxm5 80gb").attributes["SMs"] == 114
    assert catalogue.find("Their GPU") is None
    theirs = selectors.gpu_catalogue(user=other_user)
    assert theirs.get("H100 SXM5 80GB").attributes["SMs"] == 132
    assert {r.name for r in theirs.records} == {builtin.name, "Their GPU"}
