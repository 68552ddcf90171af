"""Flows: YAML files of test steps, their JSON Schema, variables.

A flow::

    name: Notes keeps a new note
    vars: {title: Groceries}
    steps:
      - do: |                      # the model's action syntax, no model (agent.run_script)
          Open App (Notes)
      - run: Add a note titled "{{title}}"   # an instruction for the agent (the model, or the plan cache)
      - assert_visible: "{{title}}"          # OCR, no model
      - assert_not_visible: No notes yet
      - assert_icon: orange plus button      # or {description: ..., position: bottom right}
      - assert: the note list shows {{title}}  # the model's verdict
      - extract: {instruction: the note titles, fields: {titles: "list[str]"}, save_as: notes}
      - wait_for: the note is saved           # the model, polled on screen changes
      - wait_for_text: {text: Saved, timeout: 5}

Each step is a mapping with exactly one action key (``STEP_KINDS``) and an optional
``name``. ``{{name}}`` is a variable (``vars:``, ``--var``, or an earlier extract's
``save_as``; ``{{notes.titles}}`` reads a field); ``{{secret:name}}`` is left for the Type
operation to resolve (``agent.named_secrets``), never written out. ``shipped_schema()`` (the
package file ``flow.schema.json``) is the same format as a JSON Schema for editors; it is
generated from the models here (``python -m mobile_agent.testing.flows``) and a test keeps
the two equal.

May import: the standard library, pydantic, yaml, ``mobile_agent.errors``.
"""

from __future__ import annotations

import json
import re
from importlib import resources
from pathlib import Path
from typing import Annotated, Any, Literal

import yaml
from pydantic import BaseModel, ConfigDict, Field, ValidationError, create_model

from mobile_agent.errors import ConfigError

__all__ = [
    "FIELD_TYPES",
    "STEP_KINDS",
    "ExtractSpec",
    "Flow",
    "FlowError",
    "FlowStep",
    "IconSpec",
    "WaitSpec",
    "fields_model",
    "flow_json_schema",
    "load_flow",
    "parse_flow",
    "shipped_schema",
    "substitute",
]

MAX_FLOW_BYTES = 256 * 1024

Text = Annotated[str, Field(min_length=1, max_length=4000)]
FIELD_TYPES: dict[str, Any] = {
    "str": str, "int": int, "float": float, "bool": bool,
    "list[str]": list[str], "list[int]": list[int], "list[float]": list[float],
    "str?": str | None, "int?": int | None, "float?": float | None,
}  # fmt: skip
FieldType = Literal["str", "int", "float", "bool", "list[str]", "list[int]", "list[float]", "str?", "int?", "float?"]
VarName = Annotated[str, Field(pattern=r"^[A-Za-z_][A-Za-z0-9_]*$", max_length=64)]


class FlowError(ConfigError):
    """A flow file that cannot be read or run as written: ``path``, ``step`` (1-based) when one is at fault."""


class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid", populate_by_name=True)


class ExtractSpec(_Strict):
    """``extract:``: read values from the screen into a schema (the model)."""

    instruction: Text = Field(description="what to read from the screen")
    fields: dict[VarName, FieldType] | None = Field(None, description="inline fields: name -> type")
    schema_file: str | None = Field(None, alias="schema", description="a JSON Schema file, relative to the flow")
    save_as: VarName | None = Field(None, description="keep the answer as this variable for later steps")
    expect: dict[str, Any] | None = Field(None, description="values the answer must have (a failed step otherwise)")
    attempts: int = Field(3, ge=1, le=10, description="answers asked for before the step fails")


class IconSpec(_Strict):
    description: Text
    position: str | None = Field(None, description='"top", "bottom right", "center"…')


class WaitSpec(_Strict):
    text: Text = Field(description="the text (wait_for_text) or the statement (wait_for)")
    timeout: float = Field(30.0, gt=0, le=3600, description="seconds")


class _StepBase(_Strict):
    name: str | None = Field(None, max_length=200, description="how reports name the step")


class RunStep(_StepBase):
    run: Text = Field(description="an instruction the agent carries out")
    max_steps: int | None = Field(None, ge=1, le=500)


class DoStep(_StepBase):
    do: Text = Field(description="operations in the model's action syntax, one per line (no model)")


class AssertStep(_StepBase):
    assert_: Text = Field(alias="assert", description="a statement the model must find true of the screen")


class AssertVisibleStep(_StepBase):
    assert_visible: Text = Field(description="a text that must be on the screen (OCR, no model)")


class AssertNotVisibleStep(_StepBase):
    assert_not_visible: Text = Field(description="a text that must not be on the screen (OCR, no model)")


class AssertIconStep(_StepBase):
    assert_icon: Text | IconSpec = Field(description="an icon that must be on the screen (no model)")


class ExtractStep(_StepBase):
    extract: ExtractSpec


class WaitForStep(_StepBase):
    wait_for: Text | WaitSpec = Field(description="a statement the model must find true before the timeout")


class WaitForTextStep(_StepBase):
    wait_for_text: Text | WaitSpec = Field(description="a text that must appear before the timeout (no model)")


FlowStep = (
    RunStep | DoStep | AssertStep | AssertVisibleStep | AssertNotVisibleStep | AssertIconStep | ExtractStep
    | WaitForStep | WaitForTextStep
)  # fmt: skip
STEP_KINDS: dict[str, type[_StepBase]] = {
    "run": RunStep, "do": DoStep, "assert": AssertStep, "assert_visible": AssertVisibleStep,
    "assert_not_visible": AssertNotVisibleStep, "assert_icon": AssertIconStep, "extract": ExtractStep,
    "wait_for": WaitForStep, "wait_for_text": WaitForTextStep,
}  # fmt: skip


MODEL_STEPS = frozenset({"run", "assert", "extract", "wait_for"})


class Flow(_Strict):
    """One flow file."""

    name: Annotated[str, Field(min_length=1, max_length=200)]
    description: str = Field("", max_length=4000)
    vars: dict[VarName, str | int | float | bool] = Field(default_factory=dict)
    start_home: bool = Field(True, description="press Home before the first step")
    steps: list[FlowStep] = Field(min_length=1, max_length=500)
    # where it was read from (not part of the file)
    source: Path | None = Field(None, exclude=True)

    def kind_of(self, step: FlowStep) -> str:
        return next(k for k, cls in STEP_KINDS.items() if isinstance(step, cls))

    @property
    def needs_model(self) -> bool:
        """Whether a step asks the model (run, assert, extract, wait_for)."""
        return any(self.kind_of(step) in MODEL_STEPS for step in self.steps)


def flow_json_schema() -> dict[str, Any]:
    """The flow format as a JSON Schema (draft 2020-12), what ``flow.schema.json`` holds."""
    schema = Flow.model_json_schema(by_alias=True)
    schema["properties"].pop("source", None)
    return {"$schema": "https://json-schema.org/draft/2020-12/schema", "title": "mobile-agent test flow",
            **{k: v for k, v in schema.items() if k != "title"}}  # fmt: skip


def shipped_schema() -> dict[str, Any]:
    """``flow.schema.json`` as the package ships it."""
    text = resources.files("mobile_agent.testing").joinpath("flow.schema.json").read_text(encoding="utf-8")
    loaded: dict[str, Any] = json.loads(text)
    return loaded


def load_flow(path: Path) -> Flow:
    """A flow file (``FlowError`` naming the file and the step at fault)."""
    try:
        raw = path.read_bytes()
    except OSError as exc:
        raise FlowError(f"cannot read the flow {path}: {exc.strerror or exc}", path=str(path)) from exc
    if len(raw) > MAX_FLOW_BYTES:
        raise FlowError(f"the flow {path} is over {MAX_FLOW_BYTES // 1024} KiB", path=str(path))
    return parse_flow(raw.decode("utf-8", errors="replace"), source=path)


# How deep a flow's YAML may nest (a flow is a few levels deep; an extract's expect: a few more).
MAX_FLOW_DEPTH = 32


def _check_shape(text: str) -> str | None:
    """What in ``text`` a flow may not use, or None, read from PyYAML's event stream (no tree is
    built, nothing recursive): anchors and aliases (``&a`` / ``*a``: an alias of an alias of … is a
    short text whose every reader walks millions of copies), and nesting past ``MAX_FLOW_DEPTH``
    (a deep ``[[[…]]]`` exhausts the composer's stack)."""
    depth = 0
    for event in yaml.parse(text, Loader=yaml.SafeLoader):
        line = event.start_mark.line + 1 if event.start_mark is not None else 0
        if isinstance(event, yaml.NodeEvent) and event.anchor is not None:  # an alias's anchor is the one it names
            return f"line {line}: a flow may not use YAML anchors or aliases (&name, *name): write each value out"
        if isinstance(event, yaml.CollectionStartEvent):
            depth += 1
            if depth > MAX_FLOW_DEPTH:
                return f"line {line}: a flow nests no deeper than {MAX_FLOW_DEPTH} levels"
        elif isinstance(event, yaml.CollectionEndEvent):
            depth -= 1
    return None


def parse_flow(text: str, *, source: Path | None = None) -> Flow:
    """A flow from its YAML text (``FlowError`` naming the step and the problem)."""
    where = str(source) if source is not None else "the flow"
    try:
        refused = _check_shape(text)
        if refused is not None:
            raise FlowError(f"{where}: {refused}", path=str(source) if source else None)
        data = yaml.safe_load(text)
    except yaml.YAMLError as exc:
        raise FlowError(f"{where} is not valid YAML: {exc}", path=str(source) if source else None) from exc
    if not isinstance(data, dict):
        raise FlowError(f"{where} must be a mapping with name: and steps:", path=str(source) if source else None)
    steps = data.get("steps")
    if isinstance(steps, list):
        data = {**data, "steps": [_step(item, i, where) for i, item in enumerate(steps, start=1)]}
    try:
        flow = Flow.model_validate({**data, "source": source})
    except ValidationError as exc:
        problems = "; ".join(f"{'.'.join(str(p) for p in e['loc'])}: {e['msg']}" for e in exc.errors()[:5])
        raise FlowError(f"{where}: {problems}", path=str(source) if source else None) from None
    _check_variables(flow, where)
    return flow


def _step(item: object, number: int, where: str) -> _StepBase:
    if not isinstance(item, dict):
        raise FlowError(f"{where}, step {number}: a step is a mapping such as `assert_visible: Save`", step=number)
    kinds = [k for k in item if k in STEP_KINDS]
    if len(kinds) != 1:
        others = [str(k) for k in item if k != "name" and k not in STEP_KINDS]
        said = f"found {', '.join(kinds)}" if kinds else f"unknown key{'s' if len(others) != 1 else ''} {', '.join(others) or '(none)'}"
        raise FlowError(f"{where}, step {number}: a step has exactly one of {', '.join(STEP_KINDS)} ({said})", step=number)
    try:
        return STEP_KINDS[kinds[0]].model_validate(item)
    except ValidationError as exc:
        problems = "; ".join(f"{'.'.join(str(p) for p in e['loc']) or kinds[0]}: {e['msg']}" for e in exc.errors()[:5])
        raise FlowError(f"{where}, step {number} ({kinds[0]}): {problems}", step=number) from None


_VARIABLE = re.compile(r"\{\{\s*([^{}]*?)\s*\}\}")


def _texts(step: object) -> list[str]:
    """Every text of a step that variables may appear in."""
    if isinstance(step, str):
        return [step]
    if isinstance(step, BaseModel):
        return [t for value in step.__dict__.values() for t in _texts(value)]
    if isinstance(step, dict):
        return [t for value in step.values() for t in _texts(value)]
    if isinstance(step, list):
        return [t for value in step for t in _texts(value)]
    return []


def _check_variables(flow: Flow, where: str) -> None:
    known = set(flow.vars)
    for number, step in enumerate(flow.steps, start=1):
        for text in _texts(step):
            for name in _VARIABLE.findall(text):
                if name.startswith("secret:"):
                    continue
                if name.split(".", 1)[0] not in known:
                    raise FlowError(
                        f"{where}, step {number}: unknown variable {{{{{name}}}}} (known here: "
                        f"{', '.join(sorted(known)) or 'none'}; vars: or an earlier extract's save_as)",
                        step=number,
                    )
        if isinstance(step, ExtractStep) and step.extract.save_as:
            known.add(step.extract.save_as)


def substitute(text: str, values: dict[str, Any]) -> str:
    """``text`` with ``{{name}}`` / ``{{name.field}}`` filled in; ``{{secret:…}}`` kept. A value is
    data, never a reference: one holding ``{{`` (an extract's answer read off an app's screen that
    shows ``{{secret:pin}}``, or ``vars:`` that spell one out in pieces) is a ``FlowError``, as the
    Type operation would otherwise take it for a secret the flow never named."""

    def fill(match: re.Match[str]) -> str:
        name = match.group(1)
        if name.startswith("secret:"):
            return match.group(0)
        head, *path = name.split(".")
        if head not in values:
            raise FlowError(f"the variable {{{{{name}}}}} has no value")
        value = values[head]
        for part in path:
            if isinstance(value, BaseModel):
                value = value.model_dump()
            if not isinstance(value, dict) or part not in value:
                raise FlowError(f"the variable {{{{{name}}}}} has no field {part!r}")
            value = value[part]
        text = value if isinstance(value, str) else json.dumps(value, ensure_ascii=False)
        if "{{" in text:
            raise FlowError(f"the variable {{{{{name}}}}} holds '{{{{': a value is filled in as data, never as a "
                            "reference to a variable or a secret")
        return text

    return _VARIABLE.sub(fill, text)


def fields_model(fields: dict[str, str], name: str = "Extracted") -> type[BaseModel]:
    """A pydantic model of inline ``fields`` (name -> one of ``FIELD_TYPES``)."""
    definitions: dict[str, Any] = {key: (FIELD_TYPES[kind], ...) for key, kind in fields.items()}
    model: type[BaseModel] = create_model(name, __config__=ConfigDict(extra="forbid"), **definitions)
    return model


if __name__ == "__main__":  # regenerate the shipped schema
    out = Path(__file__).with_name("flow.schema.json")
    out.write_text(json.dumps(flow_json_schema(), indent=2, ensure_ascii=False) + "\n", encoding="utf-8")
    print(out)
