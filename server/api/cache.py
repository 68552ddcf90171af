"""/v1/cache: the plan cache (``mobile_agent.replay``): list, read and delete cached plans.

Tasks use it with ``"cache": true`` in their body, or the server's ``cache.enabled``. Each
token's (or team's) tasks have their own plans (``server.runner.cache_namespace``): a user reads
and deletes its own; an admin reads and deletes every namespace's.

May import: fastapi, pydantic, ``server.*``, ``mobile_agent.replay``.
"""

from __future__ import annotations

from typing import Annotated

from fastapi import APIRouter, Path, Query
from pydantic import BaseModel

from mobile_agent.replay import CachedPlan, PlanStore, default_cache_url
from server.auth import Principal, not_found
from server.deps import Actor, Authorized, CurrentPrincipal, Service
from server.runner import cache_namespace
from server.state import ServiceState

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


def _store(service: ServiceState, principal: Principal) -> PlanStore:
    settings = service.settings
    namespace = None if principal.admin else cache_namespace(settings, principal.name, principal.team)
    return PlanStore(settings.cache.database_url or default_cache_url(settings.agent.output_dir), namespace)


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
def list_plans(service: Service, principal: CurrentPrincipal,
               limit: Annotated[int, Query(ge=1, le=1000)] = 100) -> CachedPlanListPublic:
    plans = _store(service, principal).list(limit=limit)
    return CachedPlanListPublic(data=[_public(p) for p in plans], count=len(plans))


@router.get("/{plan_id}", response_model=CachedPlanPublic)
def get_plan(plan_id: PlanId, service: Service, principal: CurrentPrincipal) -> CachedPlanPublic:
    plan = _store(service, principal).get(plan_id)
    if plan is None:
        raise not_found(f"cached plan {plan_id}")
    return _public(plan)


@router.delete("/{plan_id}", response_model=DeletedPublic)
def delete_plan(plan_id: PlanId, service: Service, principal: Actor) -> DeletedPublic:
    if not _store(service, principal).delete(plan_id):
        raise not_found(f"cached plan {plan_id}")
    service.store.audit(principal.name, principal.role, "cache.delete", f"plan {plan_id}")
    return DeletedPublic(deleted=1)


@router.delete("", response_model=DeletedPublic)
def clear_plans(service: Service, principal: Actor) -> DeletedPublic:
    """Delete the principal's plans (an admin's: every plan)."""
    deleted = _store(service, principal).clear()
    service.store.audit(principal.name, principal.role, "cache.clear", "cache", {"deleted": deleted})
    return DeletedPublic(deleted=deleted)
