"""OpenAI-style function calling: the paper's operations offered as tools, one function per
operation card, its JSON schema from the card's pydantic model. For any model whose server
supports ``tools`` (OpenAI, vLLM with a tool parser, SGLang, Ollama, LM Studio).

Sources: the OpenAI chat-completions API reference (``tools``: ``{"type": "function",
"function": {"name", "description", "parameters"}}``; replies in ``message.tool_calls[i].function``
with ``arguments`` as a JSON string); servers without a tool parser leave the call in the text
(Hermes-style ``<tool_call>{"name": …, "arguments": …}</tool_call>``, or a bare JSON object),
which is read too.

May import: the standard library, mobile_agent.errors/operations, planner.dialects.base/geometry/replies.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from mobile_agent.errors import OperationError
from mobile_agent.operations.parser import ParsedAction
from mobile_agent.operations.registry import REGISTRY, OperationRegistry
from mobile_agent.planner.dialects.base import (
    DialectReply,
    PaperPrompt,
    build_action,
    first_json_object,
    no_action,
    tag_text,
)
from mobile_agent.planner.geometry import SCREEN, CoordinateSpace, ImageRule, Viewport
from mobile_agent.planner.replies import split_plan_reply

__all__ = ["FunctionCallingDialect", "operation_tools"]

OUTPUT_FORMAT = (
    "Write your Observation and Thought as text, then call exactly one of the functions: it is your Action."
)


def operation_tools(registry: OperationRegistry) -> list[dict[str, Any]]:
    """One OpenAI tool per operation card."""
    tools = []
    for card in registry:
        parameters = card.params_model.model_json_schema()
        parameters.pop("title", None)
        for prop in parameters.get("properties", {}).values():
            prop.pop("title", None)
        parameters.setdefault("properties", {})
        description = card.description + "".join(f" Limitation: {x}" for x in card.limitations)
        tools.append(
            {
                "type": "function",
                "function": {"name": card.name, "description": description, "parameters": parameters},
            }
        )
    return tools


@dataclass
class FunctionCallingDialect(PaperPrompt):
    """The paper's prompt and operations; the action comes back as a tool call."""

    name: str = "function_calling"
    space: CoordinateSpace = SCREEN
    registry = REGISTRY

    def image_rule(self, default: ImageRule) -> ImageRule:
        return default

    def tools(self) -> list[dict[str, Any]] | None:
        return operation_tools(self.registry)

    def parse(
        self, text: str, viewport: Viewport, tool_calls: Sequence[Mapping[str, Any]] = ()
    ) -> DialectReply:
        raw = text or ""
        observation, thought, _action = split_plan_reply(raw)
        name, args, shown = None, None, ""
        for call in tool_calls:
            function = call.get("function") if isinstance(call, Mapping) else None
            if isinstance(function, Mapping) and function.get("name"):
                name = str(function["name"])
                arguments = function.get("arguments") or {}
                args = first_json_object(arguments) if isinstance(arguments, str) else arguments
                if isinstance(arguments, str) and arguments.strip() and args is None:
                    args = {"__unreadable__": arguments}
                shown = f"{name}({arguments if isinstance(arguments, str) else json.dumps(arguments)})"
                break
        if name is None:  # no tool parser on the server: the call is in the text
            body = tag_text(raw, "tool_call")
            obj = first_json_object(body if body is not None else raw)
            if obj is not None and isinstance(obj.get("name"), str):
                name, args = obj["name"], obj.get("arguments") or obj.get("parameters") or {}
                if isinstance(args, str):
                    args = first_json_object(args) or {}
                shown = json.dumps(obj, ensure_ascii=False)
        if name is None:
            # a model that wrote the action as text after all: the paper's parser reads it
            try:
                action = self.registry.parse(raw)
            except OperationError:
                raise no_action(raw, "one function call (the operation to do)") from None
            return DialectReply(action=action, thought=thought, observation=observation, raw=raw)
        action = build_action(self.registry, name, args if isinstance(args, Mapping) else {}, shown)
        return DialectReply(action=action, thought=thought, observation=observation, raw=raw or shown)

    def write(self, action: ParsedAction, viewport: Viewport, thought: str = "") -> str:
        """The Thought as text, then the call as Qwen's chat template renders an assistant
        tool call (Hermes ``<tool_call>{"name", "arguments"}</tool_call>``): what a
        trainer of an open model learns; an API model returns the same as ``tool_calls``."""
        arguments = {k: v for k, v in action.params.model_dump().items() if v is not None}
        call = json.dumps({"name": action.name, "arguments": arguments}, ensure_ascii=False)
        return (f"Thought: {thought.strip()}\n" if thought.strip() else "") + f"<tool_call>\n{call}\n</tool_call>"
