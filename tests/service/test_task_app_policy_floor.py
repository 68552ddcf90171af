"""The server's app policy is a floor a task's options cannot lower (review8 #3): a model-planned
task whose own ``deny_apps`` names something harmless still may not open an app the server
denies; a task's ``allow_apps`` with no app the server allows is a 422. Real uvicorn, the
scripted model server (it answers ``Open App (Settings)``), the simulated phone over the real
adb server; the phone says which app is in front."""

from __future__ import annotations

import pytest

from tests.server_fixtures import TaggedPlanner

pytestmark = pytest.mark.timeout(180)


def test_a_tasks_deny_apps_cannot_empty_the_servers(service, sim_phone) -> None:
    planner = TaggedPlanner(plans={"t-open": ["Open App (Settings)", "Stop"]})
    live = service([sim_phone], planner=planner, **{"agent.safety.deny_apps": ["com.android.settings"],
                                                    "agent.safety.allow_apps": ["com.android.settings",
                                                                                "com.android.chrome"]})
    taken = live.client.post("/v1/tasks", json={"instruction": "[t-open] open the settings",
                                                "deny_apps": ["com.example.nothing"]})
    assert taken.status_code == 202, taken.text
    done = live.wait_task(taken.json()["id"], timeout=120)
    assert done["status"] in ("completed", "not_completed"), done
    assert sim_phone.phone.state()["foreground"] != "com.android.settings"  # (before: Settings opened)
    refused = live.client.post("/v1/tasks", json={"instruction": "[t-open] x", "allow_apps": ["com.example.notes"]})
    assert refused.status_code == 422, refused.text
    (detail,) = refused.json()["detail"]
    assert detail["type"] == "app_not_allowed" and detail["loc"][-1] == "allow_apps", detail


def test_a_users_script_or_flow_is_bound_by_the_servers_app_lists(service, sim_phone) -> None:
    """A script or flow sent to the service is not the operator's own: ``agent.safety``'s app
    lists bind its lines as they bind a model (review8 #3 part b; before, one line opened the
    denied app on the shared phone, ``completed``). The command line's own scripts stay unchecked."""
    live = service([sim_phone], **{"agent.safety.deny_apps": ["com.android.settings"]})
    for body in ({"script": "Home\nOpen App (Settings)\nHome"},
                 {"flow": "name: f\nsteps:\n  - do: Home\n  - do: Open App (Settings)\n"}):
        taken = live.client.post("/v1/tasks", json=body)
        assert taken.status_code == 202, taken.text
        done = live.wait_task(taken.json()["id"], timeout=120)
        assert done["status"] == "not_completed", done
        assert "deny_apps" in str(done["result"]) + str(done["error"]), done
        assert sim_phone.phone.state()["foreground"] != "com.android.settings"
    allowed = live.client.post("/v1/tasks", json={"script": "Open App (Chrome)\nHome"})
    assert live.wait_task(allowed.json()["id"], timeout=120)["status"] == "completed"  # another app: as before
