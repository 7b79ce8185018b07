"""REST API of components: CRUD, permissions, filters, pagination, bulk import and export."""

from __future__ import annotations

import json
from typing import Any

import pytest
from rest_framework.test import APIClient

from hwdb.api.pagination import MAX_PAGE_SIZE, MSG_PAGE_SIZE
from hwdb.api.viewsets import PERMISSION_DENIED
from hwdb.filters import ATTRIBUTE_FILTER_ERROR, MSG_NOT_BOOLEAN
from hwdb.models import Component
from hwdb.validation import MESSAGES
from tests.hwdb.factories import ComponentFactory, GpuFactory, SystemModelFactory, one_gpu_graph

pytestmark = pytest.mark.django_db
URL = "/api/components/"


def body(**overrides: Any) -> dict[str, Any]:
    data: dict[str, Any] = {
        "type": "GPU",
        "name": "Lab GPU",
        "vendor": "NVIDIA",
        "attributes": [{"key": "SMs", "value": 84, "unit": "count", "source": "datasheet"}],
    }
    data.update(overrides)
    return data


def post_raw(client: APIClient, url: str, text: str) -> Any:
    return client.generic("POST", url, text, content_type="application/json")


def test_anonymous_requests_are_refused(api_client: APIClient) -> None:
    assert api_client.get(URL).status_code in (401, 403)
    assert api_client.post(URL, body(), format="json").status_code in (401, 403)


def test_it_creates_a_private_component_with_nested_attributes(api: APIClient, user: Any) -> None:
    response = api.post(URL, body(), format="json")
    assert response.status_code == 201, response.data
    assert response.data["owner"] == user.username and response.data["shared"] is False
    assert response.data["can_edit"] is True
    assert response.data["attributes"] == [
        {"key": "SMs", "value": 84.0, "unit": "count", "source": "datasheet"}
    ]


def test_a_nan_attribute_value_gets_a_400_naming_the_field(api: APIClient) -> None:
    text = json.dumps(body()).replace("84", "NaN")
    response = post_raw(api, URL, text)
    assert response.status_code == 400
    assert response.json() == {"attributes": {"0": {"value": [MESSAGES["not_finite"]]}}}
    assert not Component.objects.exists()


@pytest.mark.parametrize("value", ["Infinity", "-Infinity", '"inf"', '"NaN"', "true", '"lots"'])
def test_it_rejects_attribute_values_that_are_not_finite_numbers(
    api: APIClient, value: str
) -> None:
    text = json.dumps(body()).replace("84", value)
    response = post_raw(api, URL, text)
    assert response.status_code == 400
    assert list(response.json()["attributes"]["0"]) == ["value"]


def test_it_rejects_duplicate_attribute_keys_at_the_second_one(api: APIClient) -> None:
    attributes = [{"key": "SMs", "value": 1}, {"key": "SMs", "value": 2}]
    response = api.post(URL, body(attributes=attributes), format="json")
    assert response.status_code == 400
    assert response.json()["attributes"] == {
        "1": {"key": ["Row 2: duplicate attribute key 'SMs' (also in row 1)."]}
    }


def test_every_attribute_error_of_a_save_is_reported_at_once(api: APIClient) -> None:
    attributes = [
        {"key": "SMs", "value": 13.5},
        {"key": "warpSize", "value": "lots"},
        {"key": "SMs", "value": 16},
        {"key": "bandwidth", "value": -1},
        {"key": "coreClock", "value": 1.05},
    ]
    response = api.post(URL, body(name="n" * 201, attributes=attributes), format="json")
    assert response.status_code == 400
    errors = response.json()
    assert "name" in errors
    assert errors["attributes"] == {
        "0": {"value": ["Row 1: SMs is a count: a whole number (got 13.5)."]},
        "1": {"value": ["A valid number is required."]},
        "2": {"key": ["Row 3: duplicate attribute key 'SMs' (also in row 1)."]},
        "3": {"value": ["Row 4: bandwidth must be greater than 0 (got -1)."]},
    }
    assert not Component.objects.exists()


def test_a_whole_count_written_as_a_float_is_accepted(api: APIClient) -> None:
    attributes = [{"key": "SMs", "value": 13.0}, {"key": "coreClock", "value": 1.05}]
    response = api.post(URL, body(attributes=attributes), format="json")
    assert response.status_code == 201, response.data


def test_it_rejects_unknown_types_and_over_long_names(api: APIClient) -> None:
    response = api.post(URL, body(type="QPU", name="n" * 201), format="json")
    assert response.status_code == 400
    assert set(response.json()) == {"type", "name"}


def test_it_rejects_a_bad_attribute_key(api: APIClient) -> None:
    response = api.post(URL, body(attributes=[{"key": "2x", "value": 1}]), format="json")
    assert response.status_code == 400
    assert list(response.json()["attributes"]["0"]) == ["key"]


def test_a_rejected_update_leaves_the_record_exactly_as_it_was(api: APIClient) -> None:
    created = api.post(URL, body(), format="json").data
    url = f"{URL}{created['id']}/"
    text = json.dumps(body(name="Renamed")).replace("84", "Infinity")
    response = api.generic("PUT", url, text, content_type="application/json")
    assert response.status_code == 400
    assert api.get(url).data == created


def test_put_replaces_and_patch_keeps_attributes(api: APIClient) -> None:
    url = f"{URL}{api.post(URL, body(), format='json').data['id']}/"
    patched = api.patch(url, {"comment": "measured"}, format="json")
    assert patched.status_code == 200 and patched.data["attributes"][0]["key"] == "SMs"
    replaced = api.put(url, body(attributes=[{"key": "CUs", "value": 96}]), format="json")
    assert [a["key"] for a in replaced.data["attributes"]] == ["CUs"]


def test_another_users_private_component_is_invisible(
    api: APIClient, other_user: Any, client_for: Any
) -> None:
    private = GpuFactory(owner=other_user)
    assert api.get(f"{URL}{private.pk}/").status_code == 404
    assert api.patch(f"{URL}{private.pk}/", {"name": "x"}, format="json").status_code == 404
    assert api.delete(f"{URL}{private.pk}/").status_code == 404
    assert api.post(f"{URL}{private.pk}/clone/").status_code == 404
    assert private.pk not in [c["id"] for c in api.get(URL).data["results"]]
    assert client_for(other_user).get(f"{URL}{private.pk}/").status_code == 200


def test_a_shared_component_is_readable_but_only_its_owner_may_change_it(
    api: APIClient, other_user: Any
) -> None:
    shared = GpuFactory(owner=other_user, shared=True)
    url = f"{URL}{shared.pk}/"
    assert api.get(url).data["can_edit"] is False
    response = api.patch(url, {"name": "mine now"}, format="json")
    assert (response.status_code, response.data["detail"]) == (403, PERMISSION_DENIED)
    assert api.delete(url).status_code == 403
    assert Component.objects.get(pk=shared.pk).name == shared.name


def test_staff_may_change_anything(staff: Any, client_for: Any) -> None:
    builtin = GpuFactory(owner=None, shared=True)
    response = client_for(staff).patch(f"{URL}{builtin.pk}/", {"vendor": "x"}, format="json")
    assert response.status_code == 200


def test_built_in_components_are_read_only_for_users(api: APIClient) -> None:
    builtin = GpuFactory(owner=None, shared=True)
    assert api.get(f"{URL}{builtin.pk}/").data["owner"] is None
    assert api.delete(f"{URL}{builtin.pk}/").status_code == 403


def test_clone_makes_a_private_editable_copy(api: APIClient, user: Any) -> None:
    builtin = GpuFactory(owner=None, shared=True)
    response = api.post(f"{URL}{builtin.pk}/clone/", {"name": "My copy"}, format="json")
    assert response.status_code == 201
    assert (response.data["name"], response.data["owner"]) == ("My copy", user.username)
    assert {a["key"] for a in response.data["attributes"]} == {"SMs", "SMCoreClock"}


def test_delete_removes_an_unused_component(api: APIClient, user: Any) -> None:
    component = GpuFactory(owner=user)
    assert api.delete(f"{URL}{component.pk}/").status_code == 204
    assert not Component.objects.filter(pk=component.pk).exists()


def test_delete_of_a_component_in_use_is_a_conflict(api: APIClient, user: Any) -> None:
    component = SystemModelFactory(owner=user).components.get()
    response = api.delete(f"{URL}{component.pk}/")
    assert response.status_code == 409
    assert Component.objects.filter(pk=component.pk).exists()


def my_shared_system(api: APIClient, graph: dict[str, Any]) -> int:
    response = api.post("/api/systems/", {"name": "Mine", "graph": graph, "shared": True}, "json")
    assert response.status_code == 201, response.data
    return int(response.data["id"])


def test_unsharing_a_component_my_shared_system_uses_is_refused_and_nothing_leaks(
    api: APIClient, user: Any, other_user: Any, client_for: Any
) -> None:
    gpu = GpuFactory(owner=user, shared=True)
    system_id = my_shared_system(api, one_gpu_graph(gpu.pk))
    response = api.patch(
        f"/api/components/{gpu.pk}/",
        {"shared": False, "attributes": [{"key": "secret", "value": 42}]},
        format="json",
    )
    assert response.status_code == 400
    assert response.json()["shared"][0].startswith("Shared system models use this record")
    gpu.refresh_from_db()
    assert gpu.shared and list(gpu.attributes.values_list("key", flat=True)) == [
        "SMCoreClock",
        "SMs",
    ]
    snapshot = client_for(other_user).get(f"/api/systems/{system_id}/snapshot/").json()
    assert "secret" not in snapshot["hardware"][f"hw-{gpu.pk}"]["attributes"]


def test_unsharing_a_component_only_my_private_systems_use_is_allowed(
    api: APIClient, user: Any
) -> None:
    gpu = GpuFactory(owner=user, shared=True)
    response = api.post("/api/systems/", {"name": "P", "graph": one_gpu_graph(gpu.pk)}, "json")
    assert response.status_code == 201, response.data
    response = api.patch(f"/api/components/{gpu.pk}/", {"shared": False}, format="json")
    assert response.status_code == 200 and response.data["shared"] is False


def test_the_attribute_filter_finds_gpus_with_at_least_80_sms(api: APIClient) -> None:
    big = GpuFactory(owner=None, shared=True, sms=132)
    GpuFactory(owner=None, shared=True, sms=13)
    ComponentFactory(type="CPU", owner=None, shared=True)
    response = api.get(URL, {"type": "GPU", "attr": "SMs__gte:80"})
    assert [c["id"] for c in response.data["results"]] == [big.pk]


def test_attribute_conditions_combine(api: APIClient) -> None:
    match = GpuFactory(owner=None, shared=True, sms=80)
    GpuFactory(owner=None, shared=True, sms=100)
    response = api.get(f"{URL}?attr=SMs__gte:80&attr=SMs__lt:90&attr=SMCoreClock:1253")
    assert [c["id"] for c in response.data["results"]] == [match.pk]


@pytest.mark.parametrize("condition", ["SMs", "SMs__gte:lots", "SMs__gte:nan", "2x:1", ":5"])
def test_a_malformed_attribute_condition_is_a_400(api: APIClient, condition: str) -> None:
    response = api.get(URL, {"attr": condition})
    assert response.status_code == 400
    assert response.json() == {"attr": [ATTRIBUTE_FILTER_ERROR.format(item=condition)]}


def test_vendor_search_and_ordering(api: APIClient) -> None:
    ComponentFactory(name="b-card", vendor="AMD", owner=None, shared=True)
    ComponentFactory(name="a-card", vendor="amd", owner=None, shared=True)
    ComponentFactory(name="a-other", vendor="NVIDIA", owner=None, shared=True)
    by_vendor = api.get(URL, {"vendor": "AMD", "ordering": "-name"}).data["results"]
    assert [c["name"] for c in by_vendor] == ["b-card", "a-card"]
    assert [c["name"] for c in api.get(URL, {"search": "OTHER"}).data["results"]] == ["a-other"]
    assert api.get(URL, {"ordering": "secret"}).status_code == 400
    assert api.get(URL, {"type": "TPU"}).status_code == 400


def test_the_mine_filter_separates_my_records(api: APIClient, user: Any) -> None:
    mine = GpuFactory(owner=user)
    GpuFactory(owner=None, shared=True)
    assert [c["id"] for c in api.get(URL, {"mine": "true"}).data["results"]] == [mine.pk]
    assert mine.pk not in [c["id"] for c in api.get(URL, {"mine": "false"}).data["results"]]


def test_page_size_is_bounded(api: APIClient) -> None:
    ComponentFactory.create_batch(3, owner=None, shared=True)
    page = api.get(URL, {"page_size": 2}).data
    assert (page["count"], len(page["results"]), page["next"] is not None) == (3, 2, True)
    assert api.get(URL, {"page_size": 10_000}).status_code == 200
    from hwdb.api.pagination import BoundedPageNumberPagination

    assert BoundedPageNumberPagination.max_page_size == MAX_PAGE_SIZE == 200


def test_export_then_import_gives_my_own_copies(api: APIClient, user: Any) -> None:
    GpuFactory(owner=None, shared=True, name="Exported GPU")
    exported = api.get(f"{URL}export/", {"search": "Exported"}).json()
    assert [c["name"] for c in exported["components"]] == ["Exported GPU"]
    response = api.post(f"{URL}import/", exported, format="json")
    assert response.status_code == 201
    assert [c["owner"] for c in response.data] == [user.username]


def test_a_bulk_import_with_a_bad_record_stores_nothing(api: APIClient) -> None:
    data = {"components": [body(), body(type="QPU")]}
    response = api.post(f"{URL}import/", data, format="json")
    assert response.status_code == 400
    assert response.json() == {"components": {"1": {"type": ['"QPU" is not a valid choice.']}}}
    assert not Component.objects.exists()


def test_an_invisible_component_answers_404_naming_its_id(api: APIClient, other_user: Any) -> None:
    private = ComponentFactory(owner=other_user)
    response = api.get(f"{URL}{private.pk}/")
    assert response.json() == {"detail": f"No component with id '{private.pk}'."}


def test_a_non_numeric_id_is_not_found(api: APIClient) -> None:
    assert api.get(f"{URL}abc/").status_code == 404
    assert api.get(f"{URL}99999999999999999999999/").status_code == 404


def cache_body(**attributes: float) -> dict[str, Any]:
    values = {"size": 32768, "ways": 2, "lineSize": 64, "latencyCycles": 1, "clock": 4000}
    values.update(attributes)
    return {
        "type": "CACHE",
        "name": "L1",
        "attributes": [{"key": key, "value": value} for key, value in values.items()],
    }


@pytest.mark.parametrize(
    ("attributes", "index", "fragment"),
    [
        ({"lineSize": 65536}, 2, "larger than the cache"),
        ({"ways": 3}, 1, "whole number of sets"),
    ],
)
def test_a_cache_with_impossible_geometry_is_refused_at_the_attribute(
    api: APIClient, attributes: dict[str, float], index: int, fragment: str
) -> None:
    response = api.post(URL, cache_body(**attributes), format="json")
    assert response.status_code == 400, response.data
    messages = response.json()["attributes"][str(index)]["value"]
    assert any(fragment in message for message in messages)
    assert not Component.objects.exists()


def test_a_cache_missing_a_required_attribute_is_refused(api: APIClient) -> None:
    body = cache_body()
    body["attributes"] = [a for a in body["attributes"] if a["key"] != "clock"]
    response = api.post(URL, body, format="json")
    assert response.status_code == 400
    assert "'clock'" in str(response.json()["attributes"])
    assert api.post(URL, cache_body(), format="json").status_code == 201


def test_a_component_recommends_a_built_in_model_by_name(api: APIClient) -> None:
    fields = {"type": "GPU", "name": "My H100"}
    created = api.post(
        URL, {**fields, "recommended_model": "GPU kernel (current architectures)"}, format="json"
    )
    assert created.status_code == 201, created.data
    assert created.data["recommended_model"] == "GPU kernel (current architectures)"
    refused = api.post(URL, {**fields, "recommended_model": "My own model"}, format="json")
    assert refused.status_code == 400
    (message,) = refused.json()["recommended_model"]
    assert message.startswith("No built-in computational model is named 'My own model'")


@pytest.mark.parametrize("value", ["-1.4e-45", "0", "-3", "null", "1.5", "²", "ten"])
@pytest.mark.parametrize("url", [URL, "/api/models/", "/api/systems/", "/api/simulations/"])
def test_a_page_size_that_is_no_positive_whole_number_is_refused_naming_it(
    api: APIClient, url: str, value: str
) -> None:
    response = api.get(url, {"page_size": value})
    assert response.status_code == 400
    assert response.json() == {
        "page_size": [MSG_PAGE_SIZE.format(limit=MAX_PAGE_SIZE, value=value)]
    }


@pytest.mark.parametrize("value", ["null", "maybe", "yes", "2"])
@pytest.mark.parametrize("url", [URL, "/api/models/", "/api/systems/", f"{URL}export/"])
def test_mine_that_is_neither_true_nor_false_is_refused_naming_it(
    api: APIClient, url: str, value: str
) -> None:
    response = api.get(url, {"mine": value})
    assert response.status_code == 400
    assert response.json() == {"mine": [MSG_NOT_BOOLEAN.format(value=value)]}


def test_mine_takes_true_and_false_in_any_case(api: APIClient, user: Any) -> None:
    ComponentFactory(owner=user, name="Mine")
    GpuFactory(owner=None, shared=True, name="Built in")
    for word, names in (("TRUE", ["Mine"]), ("1", ["Mine"]), ("False", ["Built in"])):
        response = api.get(URL, {"mine": word, "page_size": "50"})
        assert [c["name"] for c in response.json()["results"]] == names


def test_a_caches_geometry_is_reported_with_the_row_errors_at_once(api: APIClient) -> None:
    body = cache_body(ways=3)
    body["name"] = "n" * 201
    body["attributes"].append({"key": "writeBack", "value": "yes"})
    response = api.post(URL, body, format="json")
    assert response.status_code == 400
    errors = response.json()
    assert "name" in errors
    assert errors["attributes"]["5"] == {"value": ["A valid number is required."]}
    (geometry,) = errors["attributes"]["1"]["value"]
    assert "whole number of sets" in geometry
    assert not Component.objects.exists()


def test_a_row_with_its_own_error_is_not_also_called_missing(api: APIClient) -> None:
    body = cache_body(lineSize=48)
    body["attributes"][4]["value"] = "fast"  # clock
    response = api.post(URL, body, format="json")
    assert response.status_code == 400
    assert response.json()["attributes"] == {
        "2": {"value": ["lineSize must be a power of two (got 48)."]},
        "4": {"value": ["A valid number is required."]},
    }


def test_a_missing_cache_attribute_is_named_with_the_row_errors(api: APIClient) -> None:
    body = cache_body()
    body["attributes"] = [a for a in body["attributes"] if a["key"] != "clock"]
    body["attributes"][0]["value"] = "big"  # size: the geometry waits for it
    response = api.post(URL, body, format="json")
    assert response.status_code == 400
    assert response.json()["attributes"] == {
        "0": {"value": ["A valid number is required."]},
        "non_field_errors": ["A CACHE record needs the attribute 'clock' (clock in MHz)."],
    }
    only_missing = cache_body()
    only_missing["name"] = "n" * 201
    only_missing["attributes"] = [a for a in only_missing["attributes"] if a["key"] != "clock"]
    errors = api.post(URL, only_missing, format="json").json()
    assert "name" in errors
    assert errors["attributes"] == ["A CACHE record needs the attribute 'clock' (clock in MHz)."]
