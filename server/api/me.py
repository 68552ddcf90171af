"""/v1/me: who the request's token is (``server.auth``): its name, role and team. The dashboard
reads it to show who is signed in and to offer only what the role may do.

May import: fastapi, pydantic, ``server.*``.
"""

from __future__ import annotations

from fastapi import APIRouter
from pydantic import BaseModel, Field

from server.deps import Authorized, CurrentPrincipal

__all__ = ["router"]

router = APIRouter(prefix="/me", tags=["principals"], dependencies=[Authorized])


class PrincipalPublic(BaseModel):
    name: str = Field(..., description='the token\'s name ("default" for server.api_token)')
    role: str = Field(..., description="admin, user or viewer (docs/security.md)")
    team: str | None
    may_act: bool = Field(..., description="may submit, reply, cancel and delete (a viewer may not)")


@router.get("", response_model=PrincipalPublic)
def who_am_i(principal: CurrentPrincipal) -> PrincipalPublic:
    return PrincipalPublic(name=principal.name, role=principal.role, team=principal.team, may_act=principal.may_act)
