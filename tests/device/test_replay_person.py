"""The plan cache and the person behind a run: a run with the person's own part (their
touches, their answers, the model's questions to them) is not cached, since a replay
could not do it without them; a run whose only part of theirs was a yes to a sensitive
step is cached, and its replay asks them again for that step, never acting on the old
yes. The simulated phone over the real adb server, the scripted model server over HTTP,
the person a ``QueueChannel`` fed from another thread."""

from __future__ import annotations

import threading

import pytest

from mobile_agent.agent import Agent, RunStatus
from mobile_agent.agent.people import QueueChannel, UserReply
from mobile_agent.replay import PlanStore
from tests.agent_helpers import agent_settings, plan_reply

pytestmark = [pytest.mark.timeout(300), pytest.mark.slow]
INSTALL = ["Open App (Play Store)", "Click text (Search apps & games)", "Type (WhatsApp)", "Enter", "Click text (Install)"]


def _settings(adb_server, sim_phone, tmp_path, llm):
    settings = agent_settings(adb_server.port, sim_phone.serial, tmp_path, llm, completion_check=False)
    return settings.with_overrides({"cache.enabled": True})


def _answer(channel: QueueChannel, reply: UserReply) -> threading.Thread:
    def act() -> None:
        assert channel.asked.wait(60)
        channel.asked.clear()
        channel.reply(reply)

    thread = threading.Thread(target=act, daemon=True)
    thread.start()
    return thread


def _plans(tmp_path):
    return PlanStore(f"sqlite:///{tmp_path / 'plan-cache.sqlite3'}").list()


def test_a_confirmed_run_is_cached_and_its_replay_asks_again(adb_server, sim_phone, llm_server, tmp_path):
    settings = _settings(adb_server, sim_phone, tmp_path, llm_server)
    llm_server.script([*(plan_reply(a) for a in INSTALL), plan_reply("Stop")])
    channel = QueueChannel()
    person = _answer(channel, UserReply("approve", by="test"))
    first = Agent(settings, channel=channel).run("Download WhatsApp in Play Store")
    person.join(5)
    assert first.status is RunStatus.COMPLETED, first.reason
    assert [r.kind for r in channel.requests] == ["confirm"]
    assert len(_plans(tmp_path)) == 1  # a yes is no step of the person's

    sim_phone.phone.reset()
    requests_before = len(llm_server.chat_requests)
    again = QueueChannel()
    person = _answer(again, UserReply("approve", by="test"))
    replayed = Agent(settings, channel=again).run("Download WhatsApp in Play Store")
    person.join(5)
    assert replayed.status is RunStatus.COMPLETED, replayed.reason
    assert len(llm_server.chat_requests) == requests_before
    assert [r.kind for r in again.requests] == ["confirm"]  # asked again, not the old yes
    assert "Install" in again.requests[0].operation
    assert "com.whatsapp" in sim_phone.phone.state()["installed"]

    sim_phone.phone.reset()
    llm_server.script([plan_reply("Stop")])  # after the refusal the model has the run
    refused = QueueChannel()
    person = _answer(refused, UserReply("deny", "not now", by="test"))
    denied = Agent(settings, channel=refused).run("Download WhatsApp in Play Store")
    person.join(5)
    assert "com.whatsapp" not in sim_phone.phone.state()["installed"]
    install = next(s for s in denied.steps if s.action_text == "Click text (Install)")
    assert install.by == "replay" and not install.ok and "refused" in install.feedback
    assert denied.steps[-1].by == "model"


def test_a_run_the_person_took_part_in_is_not_cached(adb_server, sim_phone, llm_server, tmp_path):
    settings = _settings(adb_server, sim_phone, tmp_path, llm_server)
    llm_server.script([plan_reply("Ask user (Which app should I open?)"), plan_reply("Open App (Notes)"),
                       plan_reply("Stop")])
    channel = QueueChannel()
    person = _answer(channel, UserReply("answer", "Notes", by="test"))
    result = Agent(settings, channel=channel).run("Open the app I want")
    person.join(5)
    assert result.status is RunStatus.COMPLETED, result.reason
    assert sim_phone.phone.foreground == "com.google.android.keep"
    assert any(s.by == "person" for s in result.steps)
    assert _plans(tmp_path) == []  # the answer was the person's: no plan to replay without them
