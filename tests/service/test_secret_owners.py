"""A server's named secrets are its operator's: a user's token may have a task type
``{{secret:NAME}}`` only when ``server.tokens.NAME.secrets`` names it (an admin: every one).
Another secret, and a name the server does not have, get one and the same 422
(``unknown_secret``), so a token learns no secret's name it may not use. Through REST tasks and
schedules (the farm's API submits through the same check). Before, any user could type the
admin's secret into a field and read it back from the phone's screenshot (review8 #1).

Real uvicorn serving the app, the simulated phone over the real adb server."""

from __future__ import annotations

from typing import Any

import pytest

pytestmark = pytest.mark.timeout(180)

ADMIN = {"Authorization": "Bearer owners-admin-1"}
BOB = {"Authorization": "Bearer owners-bob-1"}  # a user with no secret
CAROL = {"Authorization": "Bearer owners-carol-1"}  # a user given "pin"
SETTINGS = {
    "server.api_token": "owners-admin-1",
    "server.tokens": {"bob": {"token": "owners-bob-1", "role": "user", "team": "lab"},
                      "carol": {"token": "owners-carol-1", "role": "user", "team": "lab", "secrets": ["pin"]}},
    "agent.named_secrets": {"pin": "Quokka7731Zz", "card": "4111"},
}
TYPES_PIN = "Type ({{secret:pin}})"


def _refusal(answer: Any) -> dict[str, Any]:
    assert answer.status_code == 422, answer.text
    (detail,) = answer.json()["detail"]
    assert detail["type"] == "unknown_secret", detail
    return dict(detail)


def test_a_user_types_only_the_secrets_its_token_is_given(service, sim_phone) -> None:
    live = service([sim_phone], **SETTINGS)

    def post(headers: dict[str, str], **body: Any) -> Any:
        return live.client.post("/v1/tasks", headers=headers, json=body)

    theirs = _refusal(post(BOB, script=TYPES_PIN))  # (before: 202, and the value on the phone's screen)
    absent = _refusal(post(BOB, script="Type ({{secret:nothing}})"))
    assert theirs["msg"] == absent["msg"].replace("nothing", "pin"), (theirs, absent)  # no oracle of names
    assert "bob" in theirs["msg"] and "server.tokens.bob.secrets" in theirs["msg"]
    assert "Quokka" not in theirs["msg"]
    _refusal(post(BOB, instruction="Sign in with {{secret:pin}}"))
    _refusal(post(BOB, flow="name: f\nsteps:\n  - do: \"Type ({{secret:pin}})\"\n"))
    _refusal(post(CAROL, script="Type ({{secret:card}})"))  # carol was given pin, not card
    scheduled = live.client.post("/v1/schedules", headers=BOB, json={
        "name": "nightly", "every_s": 86400, "task": {"script": TYPES_PIN}})
    _refusal(scheduled)

    for headers in (CAROL, ADMIN):  # given it; an admin uses every secret
        taken = post(headers, script="Home\n" + TYPES_PIN)
        assert taken.status_code == 202, taken.text
        assert live.client.post(f"/v1/tasks/{taken.json()['id']}/cancel", headers=headers).status_code == 202
    assert live.client.post("/v1/schedules", headers=CAROL, json={
        "name": "nightly", "every_s": 86400, "task": {"script": TYPES_PIN}}).status_code == 201


def test_a_reference_put_together_from_a_flows_values_types_nothing(service, sim_phone) -> None:
    """The submission's text is not the only way to a reference: a flow's variables can spell one
    out in pieces (an extract's answer can carry one off the screen). A value is data, never a
    reference (``flows.substitute``), so the step fails for every owner and nothing is typed; a
    reference the model writes is held to the owner's secrets by the run itself
    (tests/unit/test_task_secrets.py)."""
    live = service([sim_phone], **SETTINGS)
    split = ('name: split\nvars: {a: "{{secret", b: ":pin}}"}\nsteps:\n'
             '  - do: "Type ({{a}}{{b}})"\n')  # the check reads no {{secret:pin}} in this text
    for headers in (BOB, CAROL):  # (before: bob's completed, the admin's pin typed on the phone)
        taken = live.client.post("/v1/tasks", headers=headers, json={"flow": split})
        assert taken.status_code == 202, taken.text
        done = live.wait_task(taken.json()["id"], timeout=120)
        assert done["status"] != "completed", done
        said = str(done["result"]) + str(done["error"])
        assert "never as a reference" in said and "card" not in said, done
    assert SETTINGS["agent.named_secrets"]["pin"] not in str(live.client.get("/v1/tasks", headers=ADMIN).json())
