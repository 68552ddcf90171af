"""/v1/audit: who submitted, replied, cancelled, deleted, cleared the cache, connected a phone
(``server.store.TaskStore.audit``), newest first, a page at a time; admins only.

May import: fastapi, pydantic, ``server.*``.
"""

from __future__ import annotations

from typing import Annotated, Any

from fastapi import APIRouter, Query
from pydantic import BaseModel, Field

from server.deps import Admin, Authorized, Service
from server.schemas import MAX_ID

__all__ = ["router"]

router = APIRouter(prefix="/audit", tags=["audit"], dependencies=[Authorized])


class AuditPublic(BaseModel):
    id: int
    at: float
    actor: str = Field(..., description="the token's name")
    role: str
    action: str = Field(..., description="task.submit, task.reply, task.cancel, schedule.create, schedule.delete, "
                        "cache.delete, cache.clear, device.connect")
    resource: str
    detail: dict[str, Any]


class AuditListPublic(BaseModel):
    data: list[AuditPublic]
    count: int = Field(..., description="rows in the trail, all pages")
    offset: int
    limit: int


@router.get("", response_model=AuditListPublic)
def audit_trail(
    service: Service,
    principal: Admin,
    offset: Annotated[int, Query(ge=0, le=MAX_ID)] = 0,
    limit: Annotated[int, Query(ge=1, le=200)] = 50,
) -> AuditListPublic:
    rows, total = service.store.audit_page(offset=offset, limit=limit)
    return AuditListPublic(data=[AuditPublic(**vars(r)) for r in rows], count=total, offset=offset, limit=limit)
