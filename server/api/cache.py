"""/v1/cache: the plan cache (``mobile_agent.replay``): list, read and delete cached plans.

Tasks use it with ``"cache": true`` in their body, or the server's ``cache.enabled``.

May import: fastapi, pydantic, ``server.*``, ``mobile_agent.replay``.
"""

from __future__ import annotations

from typing import Annotated, Any

from fastapi import APIRouter, HTTPException, Path, Query, status
from pydantic import BaseModel

from mobile_agent.replay import CachedPlan, PlanStore, default_cache_url
from server.deps import Authorized, Service

__all__ = ["router"]

router = APIRouter(prefix="/cache", tags=["cache"], dependencies=[Authorized])

PlanId = Annotated[int, Path(ge=1, le=2**62)]


class CachedStepPublic(BaseModel):
    action: str
    operation: str
    screen_texts: list[str]


class CachedPlanPublic(BaseModel):
    id: int
    instruction: str
    template: str
    steps: list[CachedStepPublic]
    uses: int
    successes: int
    failures: int
    trusted: bool
    created_at: float
    source_run: str


class CachedPlanListPublic(BaseModel):
    data: list[CachedPlanPublic]
    count: int


class DeletedPublic(BaseModel):
    deleted: int


def _store(service: Any) -> PlanStore:
    settings = service.settings
    return PlanStore(settings.cache.database_url or default_cache_url(settings.agent.output_dir))


def _public(plan: CachedPlan) -> CachedPlanPublic:
    return CachedPlanPublic(
        id=plan.id or 0,
        instruction=plan.instruction,
        template=plan.template,
        steps=[
            CachedStepPublic(action=s.action, operation=s.operation, screen_texts=sorted(s.fingerprint.texts)[:20])
            for s in plan.steps
        ],
        uses=plan.uses,
        successes=plan.successes,
        failures=plan.failures,
        trusted=plan.trusted,
        created_at=plan.created_at,
        source_run=plan.source_run,
    )


@router.get("", response_model=CachedPlanListPublic)
def list_plans(service: Service, limit: Annotated[int, Query(ge=1, le=1000)] = 100) -> CachedPlanListPublic:
    plans = _store(service).list(limit=limit)
    return CachedPlanListPublic(data=[_public(p) for p in plans], count=len(plans))


@router.get("/{plan_id}", response_model=CachedPlanPublic)
def get_plan(plan_id: PlanId, service: Service) -> CachedPlanPublic:
    plan = _store(service).get(plan_id)
    if plan is None:
        raise HTTPException(status.HTTP_404_NOT_FOUND, f"no cached plan {plan_id}")
    return _public(plan)


@router.delete("/{plan_id}", response_model=DeletedPublic)
def delete_plan(plan_id: PlanId, service: Service) -> DeletedPublic:
    if not _store(service).delete(plan_id):
        raise HTTPException(status.HTTP_404_NOT_FOUND, f"no cached plan {plan_id}")
    return DeletedPublic(deleted=1)


@router.delete("", response_model=DeletedPublic)
def clear_plans(service: Service) -> DeletedPublic:
    return DeletedPublic(deleted=_store(service).clear())
