"""Who is asking: every API token is a principal with a role, and every resource has an owner.

A principal is resolved once per request (``server.deps.get_principal``) from the bearer token
or the dashboard's session cookie, and every route reads and acts through it
(docs/security.md):

- ``admin``: everything (``server.api_token``, and a bare token string in ``server.tokens``,
  what every token could do before roles);
- ``user``: submits tasks and schedules; sees, streams, replies to, cancels and downloads only
  its own (and its team's) tasks, schedules and plan-cache entries;
- ``viewer``: reads its team's (and its own) tasks; acts on nothing.

A resource that is not the principal's answers 404 (``not_found``), exactly as one that does
not exist: no existence oracle. A principal that may see a resource but whose role may not do
what it asks gets 403. With no token configured at all the service is a local one (it refuses
to listen beyond loopback, ``server.app.check_exposure``) and its one principal,
``anonymous``, is an admin.

May import: fastapi, the standard library, ``mobile_agent.settings``.
"""

from __future__ import annotations

import hmac
from dataclasses import dataclass
from typing import Any, Literal

from fastapi import HTTPException, status

from mobile_agent.settings import ServerSettings

__all__ = ["ANONYMOUS", "OWNER_ONLY_OPTIONS", "Principal", "Role", "forbidden", "not_found", "options_shown_to",
           "principal_of_token", "principals", "submit_refusal", "team_now"]

Role = Literal["admin", "user", "viewer"]


@dataclass(frozen=True)
class Principal:
    """One token's holder: ``name`` (the token's name; "default" for ``server.api_token``),
    ``role`` and ``team`` (members of a team share tasks)."""

    name: str
    role: Role
    team: str | None = None

    @property
    def admin(self) -> bool:
        return self.role == "admin"

    @property
    def may_act(self) -> bool:
        """May submit, reply, cancel, delete (a viewer may not)."""
        return self.role != "viewer"

    def sees(self, owner: str | None, team: str | None) -> bool:
        """Whether a resource of ``owner`` (of ``team``) is visible to this principal. A
        resource stored before owners existed (``owner`` None) is an admin's."""
        if self.admin:
            return True
        if owner is None:
            return False
        return owner == self.name or (self.team is not None and team == self.team)

    def acts_on(self, owner: str | None, team: str | None) -> bool:
        return self.may_act and self.sees(owner, team)


ANONYMOUS = Principal("anonymous", "admin")

# a task's options only its owner (and admins) read back: a webhook receiver's URL often holds
# the receiver's own secret (a Slack or CI hook's path), which team members must not learn
OWNER_ONLY_OPTIONS = frozenset({"callback_url", "secrets"})


def options_shown_to(principal: Principal, owner: str | None, options: dict[str, Any]) -> dict[str, Any]:
    """A task's (or a schedule's task's) ``options`` as ``principal`` may read them: whole for
    its owner and admins, without ``OWNER_ONLY_OPTIONS`` for the rest of its team."""
    if principal.admin or (owner is not None and owner == principal.name):
        return options
    return {key: value for key, value in options.items() if key not in OWNER_ONLY_OPTIONS}


def principals(server: ServerSettings) -> list[tuple[Principal, str]]:
    """Every configured principal with its token (``server.api_token`` is "default", an admin)."""
    found: list[tuple[Principal, str]] = []
    if server.api_token is not None and server.api_token.get_secret_value():
        found.append((Principal("default", "admin"), server.api_token.get_secret_value()))
    for name, entry in sorted(server.tokens.items()):
        token = entry.token.get_secret_value()
        if token:
            found.append((Principal(name, entry.role, entry.team), token))
    return found


def submit_refusal(server: ServerSettings, owner: str | None) -> str | None:
    """Why ``owner`` may not submit a task now, or None: each occurrence of a schedule is its
    owner's submission, so a token taken out of ``server.tokens`` (or made a viewer) makes no
    more. With no token configured everyone is the local admin; a schedule made so
    ("anonymous", before tokens were configured) stays the operator's."""
    configured = principals(server)
    if not configured or not owner or owner == ANONYMOUS.name:
        return None
    found = next((principal for principal, _ in configured if principal.name == owner), None)
    if found is None:
        return f"the token {owner!r} is no longer one of this server's (server.tokens)"
    if not found.may_act:
        return f"the token {owner!r} is a viewer now: it may not submit tasks"
    return None


def team_now(server: ServerSettings, owner: str | None, stored: str | None) -> str | None:
    """The team that a schedule of ``owner`` (made while in ``stored``) belongs to now: the owner's
    team as ``server.tokens`` says now, so a member moved to another team takes its schedules and
    their later tasks along; ``stored`` when the owner is not configured (a revoked token's schedule
    makes no task, ``submit_refusal``, and stays readable by its old team)."""
    found = next((principal for principal, _ in principals(server) if principal.name == owner), None)
    return stored if found is None else found.team


def principal_of_token(server: ServerSettings, given: str) -> Principal | None:
    """The principal whose token ``given`` is, else None. Every token is compared, so the time
    taken does not tell which one matched."""
    offered = given.encode("utf-8", "replace")
    found = None
    for principal, token in principals(server):
        if hmac.compare_digest(offered, token.encode("utf-8", "replace")) and found is None:
            found = principal
    return found


def not_found(what: str) -> HTTPException:
    """The answer for a resource that does not exist or is not the principal's (the same)."""
    return HTTPException(status.HTTP_404_NOT_FOUND, f"no {what}")


def forbidden(message: str) -> HTTPException:
    return HTTPException(status.HTTP_403_FORBIDDEN, message)
