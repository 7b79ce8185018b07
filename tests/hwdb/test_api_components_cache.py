"""The component list's response cache (restapi.cache): a repeated request is served from
the cache with one query besides authentication, every write through the API is seen by the
very next request, and no user is ever shown another user's view."""

from __future__ import annotations

from typing import Any

import pytest
from rest_framework.authtoken.models import Token
from rest_framework.test import APIClient

from hwdb.models import Component
from tests.hwdb.factories import GpuFactory, UserFactory
from tests.hwdb.test_api_calibrate import gtx970_bus, transfer_points

pytestmark = pytest.mark.django_db
URL = "/api/components/?type=GPU"
TOKEN, VERSION = 1, 1


def signed_in(user: Any) -> APIClient:
    """Return a client with an API token, as bench/bench_rest.py's clients are."""
    client = APIClient()
    client.credentials(HTTP_AUTHORIZATION=f"Token {Token.objects.create(user=user).key}")
    return client


def names(client: APIClient, url: str = URL) -> dict[str, bool]:
    """Return {name: can_edit} of the components the list shows `client`."""
    response = client.get(url)
    assert response.status_code == 200, response.content
    return {row["name"]: row["can_edit"] for row in response.json()["results"]}


@pytest.fixture
def builtin_gpus() -> list[Component]:
    return [GpuFactory(owner=None, shared=True, name=f"Built-in {index}") for index in range(3)]


def test_a_repeated_list_is_served_from_the_cache_with_only_the_version_query(
    builtin_gpus: list[Component], django_assert_num_queries: Any
) -> None:
    client = signed_in(UserFactory())
    first = client.get(URL)
    with django_assert_num_queries(TOKEN + VERSION):
        again = client.get(URL)
    assert again.status_code == 200 and again["Content-Type"] == "application/json"
    assert again.content == first.content
    assert again.data == first.json()


def test_users_who_own_nothing_share_one_rendering_and_owners_get_their_own(
    builtin_gpus: list[Component], django_assert_num_queries: Any
) -> None:
    owner = UserFactory()
    GpuFactory(owner=owner, shared=False, name="Private")
    assert names(signed_in(owner)) == {
        **{gpu.name: False for gpu in builtin_gpus},
        "Private": True,
    }
    signed_in_first, signed_in_second = signed_in(UserFactory()), signed_in(UserFactory())
    shown = names(signed_in_first)
    assert shown == {gpu.name: False for gpu in builtin_gpus}
    with django_assert_num_queries(TOKEN + VERSION):
        assert names(signed_in_second) == shown


def test_staff_see_every_component_and_may_edit_each(builtin_gpus: list[Component]) -> None:
    GpuFactory(owner=UserFactory(), shared=False, name="Someone's")
    names(signed_in(UserFactory()))  # the shared view, cached
    shown = names(signed_in(UserFactory(is_staff=True)))
    assert shown == {**{gpu.name: True for gpu in builtin_gpus}, "Someone's": True}


def test_every_write_through_the_api_is_seen_by_the_next_list(
    builtin_gpus: list[Component],
) -> None:
    owner, reader = UserFactory(), UserFactory()
    mine, theirs = signed_in(owner), signed_in(reader)
    names(mine), names(theirs)
    created = mine.post(
        "/api/components/",
        {"type": "GPU", "name": "Lab GPU", "shared": True, "attributes": []},
        format="json",
    )
    assert created.status_code == 201, created.json()
    pk = created.json()["id"]
    assert names(theirs)["Lab GPU"] is False and names(mine)["Lab GPU"] is True

    attribute = {"key": "SMs", "value": 84, "unit": "count", "source": "datasheet"}
    changed = mine.patch(f"/api/components/{pk}/", {"attributes": [attribute]}, format="json")
    assert changed.status_code == 200, changed.json()
    listed = {row["id"]: row for row in theirs.get(URL).json()["results"]}
    assert [a["value"] for a in listed[pk]["attributes"]] == [84.0]

    assert mine.patch(f"/api/components/{pk}/", {"shared": False}, format="json").status_code == 200
    assert "Lab GPU" not in names(theirs)

    assert mine.post(f"/api/components/{pk}/clone/", {}, format="json").status_code == 201
    assert mine.delete(f"/api/components/{pk}/").status_code == 204
    assert "Lab GPU" not in names(mine) and "Lab GPU (copy)" in names(mine)


def test_a_calibration_stored_on_a_component_is_seen_by_the_next_list(user: Any) -> None:
    client = signed_in(user)
    bus = gtx970_bus(user)
    url = "/api/components/?type=NETWORK"
    before = client.get(url).json()["results"][0]["attributes"]
    response = client.post(
        f"/api/components/{bus.pk}/calibrate/",
        {"kind": "transfer", "measurements": transfer_points(), "store": True},
        format="json",
    )
    assert response.status_code == 200, response.json()
    after = client.get(url).json()["results"][0]["attributes"]
    assert [a["key"] for a in before] == ["bandwidth"]
    assert {a["key"] for a in after} == {
        "bandwidth",
        "startupHTD",
        "lambdaHTD",
        "startupDth",
        "lambdaDth",
    }


def test_pages_hosts_and_the_browsable_api_are_rendered_each_their_own(
    builtin_gpus: list[Component],
) -> None:
    client = signed_in(UserFactory())
    first = client.get(f"{URL}&page_size=2").json()
    second = client.get(f"{URL}&page_size=2&page=2").json()
    assert [len(first["results"]), len(second["results"])] == [2, 1]
    assert first["next"].startswith("http://testserver/")
    elsewhere = client.get(f"{URL}&page_size=2", HTTP_HOST="localhost").json()
    assert elsewhere["next"].startswith("http://localhost/")
    html = client.get(URL, HTTP_ACCEPT="text/html")
    assert html.status_code == 200 and html["Content-Type"].startswith("text/html")


def test_a_bad_filter_is_refused_every_time(builtin_gpus: list[Component]) -> None:
    client = signed_in(UserFactory())
    for _ in range(2):
        assert client.get("/api/components/?attr=nonsense").status_code == 400
