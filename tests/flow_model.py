"""The scripted model behind the flows suite (tests/flows/): answers read from the real prompts.

``flow_model(request_json) -> str`` is a ``ScriptedLLMServer`` script item (``default=``):
it reads which question the request is (a check's ``Statement:``, an extraction's ``Read
this from the screen:``, a completion check, or a planning step with its instruction and
history) and answers from the tables below, the way the model would for the simulated
phone's screens. Unknown questions get an answer no parser accepts, so a flow that asks
something unscripted fails visibly.
"""

from __future__ import annotations

import json
import re
from typing import Any

from tests.agent_helpers import DONE, plan_reply
from tests.llm_server import chat_text

# planned runs: instruction -> the operations, one per step, then Stop
PLANS: dict[str, list[str]] = {
    "Turn on the dark mode": ["Open App (Settings)", "Click text (Display & brightness)", "Click text (Dark mode)"],
}
# checks: statement -> (passed, reason)
VERDICTS: dict[str, tuple[bool, str]] = {
    "the display settings show the dark mode selected": (True, "The Dark mode option is selected."),
    "the inbox shows a mail from Maria Lopez": (True, "The third mail is from Maria Lopez."),
    "the recently played list has a song by Jay Chou": (True, "Blue and White Porcelain is by Jay Chou."),
    "the results of a web search are shown": (True, "weather.com is listed as a result."),
    "it is snowing in Hangzhou": (False, "The forecast says rain, 21°, no snow."),
}
# extractions: instruction -> the JSON answers in order (the last one repeats)
ANSWERS: dict[str, list[Any]] = {
    "the city and the temperature now": [{"city": "Hangzhou", "temperature": "21°"}],
    "the date the calendar shows as today": [{"date": "May 20, 2024", "weekday": "Monday"}],
    "the first recommended product and its price range": [{"product": "Wireless Earbuds", "price": "US$4.90-8.20"}],
    "the temperature now in degrees Celsius": [{"temperature_c": "twenty-one"}],  # never an integer
}

UNSCRIPTED = "I do not know."


def _after(text: str, marker: str) -> str | None:
    index = text.find(marker)
    if index < 0:
        return None
    return text[index + len(marker):].splitlines()[0].strip()


def flow_model(body: dict[str, Any]) -> str:
    text = chat_text(body)
    asked_again = sum(1 for m in body.get("messages", []) if m.get("role") == "assistant")
    statement = _after(text, "Statement: ")
    if statement is not None:
        if statement not in VERDICTS:
            return UNSCRIPTED
        passed, reason = VERDICTS[statement]
        return "```json\n" + json.dumps({"passed": passed, "reason": reason}) + "\n```"
    instruction = _after(text, "Read this from the screen: ")
    if instruction is not None:
        answers = ANSWERS.get(instruction)
        if answers is None:
            return UNSCRIPTED
        return json.dumps(answers[min(asked_again, len(answers) - 1)])
    if "You are checking whether an agent" in text:
        return DONE
    for known, plan in PLANS.items():
        if f"The user's instruction is:\n{known}" in text:
            done = len(re.findall(r"^\d+\. ", text, flags=re.MULTILINE))
            return plan_reply(plan[done] if done < len(plan) else "Stop")
    return UNSCRIPTED
