"""Operations endpoints: /healthz (process up), /readyz (database and scheduler ready),
/metrics (Prometheus text format). Health checks need no token; metrics do when one is set.

May import: fastapi, ``server.*``.
"""

from __future__ import annotations

from fastapi import APIRouter, Response, status
from fastapi.responses import JSONResponse, PlainTextResponse

from server.deps import Authorized, Service
from server.metrics import Gauges

__all__ = ["router"]

router = APIRouter(tags=["ops"])


@router.get("/healthz")
def healthz() -> dict[str, str]:
    return {"status": "ok"}


@router.get("/readyz")
def readyz(service: Service) -> Response:
    problems = []
    if not service.ready.is_set():
        problems.append("starting")
    try:
        service.store.ping()
    except Exception as exc:  # any database failure means not ready
        problems.append(f"database: {type(exc).__name__}")
    if problems:
        return JSONResponse({"status": "not ready", "problems": problems}, status.HTTP_503_SERVICE_UNAVAILABLE)
    perception = service.runner.describe()
    planner = service.settings.planner.configured or bool(service.settings.server.planner_base_urls)
    return JSONResponse({"status": "ready", "devices": len(service.pool.slots()), "perception": perception,
                         "planner": planner})


@router.get("/metrics", response_class=PlainTextResponse, dependencies=[Authorized])
def metrics(service: Service) -> PlainTextResponse:
    counts = service.store.count_by_status()
    slots = service.pool.slots()
    live = service.live.stats()
    gauges: Gauges = {
        "mobile_agent_tasks": (
            "Tasks in the database by status.",
            {(("status", s),): float(n) for s, n in counts.items()},
        ),
        "mobile_agent_devices": (
            "Phones by state.",
            {
                (("state", state),): float(sum(1 for d in slots if d.public()["state"] == state))
                for state in {d.public()["state"] for d in slots}
            },
        ),
        "mobile_agent_devices_busy": ("Phones running a task.", {(): float(sum(1 for d in slots if d.task_id))}),
        "mobile_agent_runs_in_progress": ("Runs in this process.", {(): float(service.scheduler.running_count)}),
        "mobile_agent_event_streams": ("Open event streams.", {(): float(service.hub.listener_count)}),
        "mobile_agent_live_viewers": ("Open live views (GET /v1/tasks/{id}/live).", {(): float(live["viewers"])}),
        "mobile_agent_live_capture_loops": ("Phones captured for live views, one loop each.",
                                            {(): float(live["loops"])}),
    }
    return PlainTextResponse(
        service.metrics.render(gauges), media_type="text/plain; version=0.0.4; charset=utf-8"
    )
