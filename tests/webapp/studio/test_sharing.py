"""Sharing a run or a sweep read-only (issue 44 item 7): with a user by username or under a
link; what a grantee reads (detail, result, memory CSV, trace, the sweep's points and CSV),
what they cannot do (cancel, share, revoke, list), a stranger's 404 on every endpoint, and
revoking."""

from __future__ import annotations

from typing import Any

import pytest
from django.db import IntegrityError, transaction
from rest_framework.test import APIClient

from tests.hwdb.factories import UserFactory
from tests.webapp.studio.factories import ApplicationModelFactory, SimulationFactory
from tests.webapp.studio.test_api_trace import RESULT
from webapp.studio.models import Share, SimulationStatus, Sweep
from webapp.studio.services.shares import SHARE_MESSAGES, share_create


def run_urls(pk: int) -> list[str]:
    """Return every read endpoint of a run."""
    base = f"/api/simulations/{pk}"
    return [f"{base}/", f"{base}/result.json", f"{base}/memory.csv", f"{base}/trace.json"]


def sweep_urls(pk: int) -> list[str]:
    """Return every read endpoint of a sweep."""
    return [f"/api/sweeps/{pk}/", f"/api/sweeps/{pk}/results.csv"]


@pytest.fixture
def stranger(db: None) -> Any:
    """Return a user nothing is shared with."""
    return UserFactory()


@pytest.fixture
def run(user: Any) -> Any:
    """Return `user`'s succeeded run, launched from their private application model."""
    app = ApplicationModelFactory(owner=user, shared=False, name="Private app")
    return SimulationFactory(
        owner=user, status=SimulationStatus.SUCCEEDED, result=RESULT, application=app
    )


@pytest.fixture
def sweep(user: Any) -> Any:
    """Return `user`'s sweep of two succeeded points over `steps`."""
    sweep = Sweep.objects.create(owner=user, name="Steps", spec={"variables": {"steps": [1, 2]}})
    for steps in (1, 2):
        SimulationFactory(
            owner=user,
            sweep=sweep,
            sweep_point={"variables": {"steps": steps}},
            status=SimulationStatus.SUCCEEDED,
            result=RESULT,
        )
    return sweep


def share(client: APIClient, **body: Any) -> Any:
    response = client.post("/api/shares/", body, format="json")
    assert response.status_code == 201, response.content
    return response.json()


def test_a_run_shared_with_a_user_reads_as_its_owner_sees_it_on_every_endpoint(
    client: APIClient, client_for: Any, run: Any, other_user: Any
) -> None:
    reader = client_for(other_user)
    assert [reader.get(url).status_code for url in run_urls(run.pk)] == [404] * 4
    made = share(client, simulation=run.pk, username=other_user.username)
    assert (made["user"], made["owner"], made["link"]) == (
        other_user.username,
        run.owner.username,
        None,
    )
    for url in run_urls(run.pk):
        theirs, mine = reader.get(url), client.get(url)
        assert theirs.status_code == 200, (url, theirs.content)
        if url.endswith("/"):
            seen, owned = theirs.json(), mine.json()
            assert (seen["access"], owned["access"]) == ("shared", "owner")
            # the frozen run is the same; the owner's private record is not named by id
            assert seen["snapshot"] == owned["snapshot"]
            assert seen["app_source"] == owned["app_source"]
            assert seen["application_name"] == owned["application_name"] == "Private app"
            assert (seen["application"], owned["application"]) == (None, run.application_id)
        else:
            assert theirs.content == mine.content


def test_a_grantee_can_neither_cancel_nor_reshare_nor_list_the_owner_s_records(
    client: APIClient, client_for: Any, user: Any, other_user: Any, stranger: Any
) -> None:
    queued: Any = SimulationFactory(owner=user, status=SimulationStatus.QUEUED)
    share(client, simulation=queued.pk, username=other_user.username)
    reader = client_for(other_user)
    assert reader.get(f"/api/simulations/{queued.pk}/").status_code == 200
    assert reader.post(f"/api/simulations/{queued.pk}/cancel/").status_code == 404
    queued.refresh_from_db()
    assert queued.status == SimulationStatus.QUEUED
    body = {"simulation": queued.pk, "username": stranger.username}
    assert reader.post("/api/shares/", body, format="json").status_code == 404
    assert (
        reader.post(
            "/api/shares/", {"simulation": queued.pk, "link": True}, format="json"
        ).status_code
        == 404
    )
    # the runs list, the sweeps list and the application models stay the owner's
    assert reader.get("/api/simulations/").json()["count"] == 0
    assert reader.get("/api/sweeps/").json()["count"] == 0
    private: Any = ApplicationModelFactory(owner=user, shared=False)
    assert reader.get(f"/api/applications/{private.pk}/").status_code == 404


def test_a_shared_sweep_shows_its_points_csv_and_child_runs_and_nothing_to_others(
    client: APIClient, client_for: Any, sweep: Any, other_user: Any, stranger: Any
) -> None:
    children = list(sweep.simulations.order_by("pk"))
    reader, outsider = client_for(other_user), client_for(stranger)
    share(client, sweep=sweep.pk, username=other_user.username)
    detail = reader.get(f"/api/sweeps/{sweep.pk}/")
    assert detail.status_code == 200
    assert detail.json()["access"] == "shared"
    assert detail.json()["points"] == client.get(f"/api/sweeps/{sweep.pk}/").json()["points"]
    assert (
        reader.get(f"/api/sweeps/{sweep.pk}/results.csv").content
        == client.get(f"/api/sweeps/{sweep.pk}/results.csv").content
    )
    for child in children:
        assert [reader.get(url).status_code for url in run_urls(child.pk)] == [200] * 4
    assert reader.post(f"/api/sweeps/{sweep.pk}/cancel/").status_code == 404
    for url in sweep_urls(sweep.pk) + [u for c in children for u in run_urls(c.pk)]:
        assert outsider.get(url).status_code == 404, url


def test_a_link_grants_whoever_opens_it_and_revoking_it_takes_their_grants_along(
    client: APIClient, client_for: Any, run: Any, other_user: Any, stranger: Any
) -> None:
    link = share(client, simulation=run.pk, link=True)
    assert link["user"] is None and len(link["link"]) >= 40
    assert link["link_path"] == f"/app/shared/{link['link']}"
    assert share(client, simulation=run.pk, link=True)["id"] == link["id"]  # one per run
    reader, outsider = client_for(other_user), client_for(stranger)
    assert reader.get(f"/api/simulations/{run.pk}/").status_code == 404
    opened = reader.post("/api/shares/redeem/", {"link": link["link"]}, format="json")
    assert opened.status_code == 200
    assert (opened.json()["simulation"], opened.json()["via_link"]) == (run.pk, True)
    assert [reader.get(url).status_code for url in run_urls(run.pk)] == [200] * 4
    assert [outsider.get(url).status_code for url in run_urls(run.pk)] == [404] * 4
    wrong = outsider.post("/api/shares/redeem/", {"link": link["link"][:-1] + "x"}, format="json")
    assert wrong.status_code == 404
    assert wrong.json()["detail"] == SHARE_MESSAGES["no_link"]
    assert client.delete(f"/api/shares/{link['id']}/").status_code == 204
    assert [reader.get(url).status_code for url in run_urls(run.pk)] == [404] * 4
    again = reader.post("/api/shares/redeem/", {"link": link["link"]}, format="json")
    assert again.status_code == 404
    assert not Share.objects.exists()


def test_the_owner_revokes_a_user_s_share_and_only_the_owner_may(
    client: APIClient, client_for: Any, run: Any, other_user: Any, stranger: Any
) -> None:
    made = share(client, simulation=run.pk, username=other_user.username)
    reader = client_for(other_user)
    assert reader.delete(f"/api/shares/{made['id']}/").status_code == 404
    assert client_for(stranger).delete(f"/api/shares/{made['id']}/").status_code == 404
    assert reader.get(f"/api/simulations/{run.pk}/").status_code == 200
    assert client.delete(f"/api/shares/{made['id']}/").status_code == 204
    assert reader.get(f"/api/simulations/{run.pk}/").status_code == 404


def test_the_shares_list_holds_the_shares_given_and_received_and_none_of_others(
    client: APIClient, client_for: Any, run: Any, sweep: Any, other_user: Any, stranger: Any
) -> None:
    given = share(client, simulation=run.pk, username=other_user.username)
    link = share(client, sweep=sweep.pk, link=True)
    assert [s["id"] for s in client.get("/api/shares/").json()["results"]] == [
        given["id"],
        link["id"],
    ]
    assert [s["id"] for s in client.get(f"/api/shares/?sweep={sweep.pk}").json()["results"]] == [
        link["id"]
    ]
    received = client_for(other_user).get("/api/shares/").json()["results"]
    assert [(s["id"], s["owner"]) for s in received] == [(given["id"], run.owner.username)]
    assert client_for(stranger).get("/api/shares/").json()["results"] == []
    assert client_for(stranger).get(f"/api/shares/?simulation={run.pk}").json()["results"] == []
    assert client.get("/api/shares/?simulation=x").status_code == 400
    # "Shared with you": only what was given to the reader, not what they gave
    assert client.get("/api/shares/?received=true").json()["results"] == []
    mine = client_for(other_user).get("/api/shares/?received=true").json()["results"]
    assert [s["id"] for s in mine] == [given["id"]]
    assert client.get("/api/shares/?received=maybe").json() == {
        "received": ["Expected true or false, got 'maybe'."]
    }


@pytest.mark.parametrize(
    ("body", "field", "message"),
    [
        ({"username": "x"}, "non_field_errors", SHARE_MESSAGES["one_target"]),
        (
            {"simulation": 0, "sweep": 0, "username": "x"},
            "non_field_errors",
            SHARE_MESSAGES["one_target"],
        ),
        ({"simulation": 0}, "non_field_errors", SHARE_MESSAGES["one_grantee"]),
        (
            {"simulation": 0, "username": "nobody-here"},
            "username",
            SHARE_MESSAGES["unknown_user"].format(name="nobody-here"),
        ),
        (
            {"simulation": 0, "username": "$owner"},
            "username",
            SHARE_MESSAGES["self"].format(what="run"),
        ),
    ],
)
def test_a_bad_share_is_refused_naming_the_field(
    client: APIClient, run: Any, body: dict[str, Any], field: str, message: str
) -> None:
    body = {
        k: (run.pk if v == 0 else run.owner.username if v == "$owner" else v)
        for k, v in body.items()
    }
    response = client.post("/api/shares/", body, format="json")
    assert response.status_code == 400, response.content
    assert response.json()[field] == [message]
    assert not Share.objects.exists()


def test_sharing_another_user_s_run_is_a_404(
    client: APIClient, other_user: Any, stranger: Any
) -> None:
    theirs: Any = SimulationFactory(owner=other_user)
    body = {"simulation": theirs.pk, "username": stranger.username}
    assert client.post("/api/shares/", body, format="json").status_code == 404


def test_the_database_holds_one_link_and_one_target_and_grantee_per_share(
    run: Any, other_user: Any
) -> None:
    Share.objects.create(simulation=run, link="a" * 43)
    with pytest.raises(IntegrityError), transaction.atomic():
        Share.objects.create(simulation=run, link="b" * 43)
    with pytest.raises(IntegrityError), transaction.atomic():
        Share.objects.create(simulation=run, user=other_user, link="c" * 43)
    with pytest.raises(IntegrityError), transaction.atomic():
        Share.objects.create(user=other_user)
    Share.objects.create(simulation=run, user=other_user)
    with pytest.raises(IntegrityError), transaction.atomic():
        Share.objects.create(simulation=run, user=other_user)


def test_a_link_published_meanwhile_by_another_request_is_the_one_returned(
    user: Any, run: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    raced = Share.objects.create(simulation=run, link="r" * 43)
    real_filter = Share.objects.filter
    # the first look finds none, as a request that read before the other's insert committed
    monkeypatch.setattr(Share.objects, "filter", lambda *a, **k: real_filter(pk=-1))
    assert share_create(user=user, simulation_id=run.pk, link=True) == raced
    monkeypatch.setattr(Share.objects, "filter", real_filter)
    assert Share.objects.filter(link__isnull=False).count() == 1


def test_an_id_beyond_64_bits_is_refused_naming_the_field(client: APIClient) -> None:
    response = client.post("/api/shares/", {"simulation": 2**63, "link": True}, format="json")
    assert response.status_code == 400
    assert list(response.json()) == ["simulation"]


def test_a_run_shared_alone_does_not_show_the_sweep_it_belongs_to(
    client: APIClient, client_for: Any, sweep: Any, other_user: Any
) -> None:
    child = sweep.simulations.order_by("pk").first()
    share(client, simulation=child.pk, username=other_user.username)
    reader = client_for(other_user)
    alone = reader.get(f"/api/simulations/{child.pk}/").json()
    assert (alone["sweep"], alone["sweep_name"], alone["sweep_size"]) == (None, None, None)
    assert alone["sweep_point"] == {"variables": {"steps": 1}}
    share(client, sweep=sweep.pk, username=other_user.username)
    with_sweep = reader.get(f"/api/simulations/{child.pk}/").json()
    assert (with_sweep["sweep"], with_sweep["sweep_name"]) == (sweep.pk, "Steps")
