"""Sharing: an owner grants one run or one sweep read-only to another user (by username) or
to whoever holds an unguessable link, and revokes the grant; a signed-in user who opens a
link is given a grant of their own, revoked with the link (`webapp.studio.models.Share`).

Only the owner (or staff) shares: the run or sweep is read through the owner-only selectors,
so another user's, shared with them or not, is a DoesNotExist (404) here as everywhere.
"""

from __future__ import annotations

import secrets
from typing import TYPE_CHECKING, Any

from django.contrib.auth import get_user_model
from django.core.exceptions import ValidationError
from django.db import IntegrityError, transaction

from webapp.studio.models import Share, Simulation, Sweep
from webapp.studio.selectors import simulation_get_owned, sweep_get_owned

if TYPE_CHECKING:
    from django.contrib.auth.models import User

SHARE_MESSAGES = {
    "one_target": "Give either simulation or sweep (the run or sweep to share).",
    "one_grantee": "Give either username (share with that user) or link: true (publish).",
    "unknown_user": "No user named {name!r}.",
    "self": "You own this {what}: there is no one to share it with.",
    "no_link": "Nothing is shared at this link (it may have been revoked).",
}
# The link's token: 32 random bytes, URL-safe (secrets.token_urlsafe), 43 characters.
LINK_BYTES = 32


def _target(*, user: User, simulation_id: object, sweep_id: object) -> Simulation | Sweep:
    given = [value for value in (simulation_id, sweep_id) if value not in (None, "")]
    if len(given) != 1:
        raise ValidationError({"non_field_errors": [SHARE_MESSAGES["one_target"]]})
    if simulation_id not in (None, ""):
        return simulation_get_owned(user=user, simulation_id=simulation_id)
    return sweep_get_owned(user=user, sweep_id=sweep_id)


def _target_fields(target: Simulation | Sweep) -> dict[str, Any]:
    return {"simulation" if isinstance(target, Simulation) else "sweep": target}


@transaction.atomic
def share_create(
    *,
    user: User,
    simulation_id: object = None,
    sweep_id: object = None,
    username: str = "",
    link: bool = False,
) -> Share:
    """Share `user`'s run or sweep read-only with the user named `username`, or publish it
    under a link (`link`); return the share, the existing one when it was shared so already
    (one link per run or sweep). Raise ValidationError naming the field at fault, and the
    run's or sweep's DoesNotExist when it is not `user`'s."""
    target = _target(user=user, simulation_id=simulation_id, sweep_id=sweep_id)
    username = (username or "").strip()
    if bool(username) == bool(link):
        raise ValidationError({"non_field_errors": [SHARE_MESSAGES["one_grantee"]]})
    fields = _target_fields(target)
    if link:
        existing = Share.objects.filter(link__isnull=False, **fields).first()
        if existing is not None:
            return existing
        try:
            with transaction.atomic():
                return Share.objects.create(link=secrets.token_urlsafe(LINK_BYTES), **fields)
        except IntegrityError:  # published meanwhile by a second request: that link
            return Share.objects.get(link__isnull=False, **fields)
    grantee = get_user_model().objects.filter(username=username, is_active=True).first()
    if grantee is None:
        raise ValidationError({"username": [SHARE_MESSAGES["unknown_user"].format(name=username)]})
    if grantee.pk == target.owner_id:
        what = "run" if isinstance(target, Simulation) else "sweep"
        raise ValidationError({"username": [SHARE_MESSAGES["self"].format(what=what)]})
    share, _ = Share.objects.get_or_create(user=grantee, **fields)
    if share.via_id is not None:  # given by name now: no longer revoked with the link
        share.via = None
        share.save(update_fields=["via"])
    return share


@transaction.atomic
def share_revoke(*, share: Share) -> None:
    """Revoke a share; a link's takes the grants given to those who opened it along."""
    share.delete()


@transaction.atomic
def share_redeem(*, user: User, link: str) -> Share:
    """Return the grant `link` gives `user`: their own share of the linked run or sweep, made
    now (revoked with the link) unless they had one or own it (then the link's share itself).
    Raise Share.DoesNotExist (a 404) for a link that names nothing."""
    try:
        published = Share.objects.select_related("simulation", "sweep").get(
            link=str(link or ""), link__isnull=False
        )
    except Share.DoesNotExist:
        raise Share.DoesNotExist(SHARE_MESSAGES["no_link"]) from None
    target = published.simulation or published.sweep
    assert target is not None
    if target.owner_id == user.pk:
        return published
    share, _ = Share.objects.get_or_create(
        user=user, **_target_fields(target), defaults={"via": published}
    )
    return share
