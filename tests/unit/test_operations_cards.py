"""Operation cards: registry contents, prompt section, JSON schema, and malformed cards."""

from __future__ import annotations

import json

import pytest
from pydantic import BaseModel, ConfigDict, Field

from mobile_agent.errors import UnknownOperationError
from mobile_agent.operations import (
    REGISTRY,
    CardDefinitionError,
    OperationContext,
    OperationRegistry,
    Outcome,
    operation,
    parse_action,
)

PAPER_EIGHT = {"open_app", "click_text", "click_icon", "type", "page_up", "page_down", "back", "exit", "stop"}
EXTRAS = {"home", "long_press", "swipe_left", "swipe_right", "enter", "wait", "ask_user"}


def test_registry_holds_the_paper_operations_and_the_extras() -> None:
    assert set(REGISTRY.names()) == PAPER_EIGHT | EXTRAS
    assert len(REGISTRY) == len(PAPER_EIGHT | EXTRAS)
    assert "Click the text" in REGISTRY and "click_text" in REGISTRY and "dance" not in REGISTRY


def test_cards_prompt_lists_every_card_with_its_examples() -> None:
    prompt = REGISTRY.cards_prompt()
    # read back independently: one block per card, opened by a "- " line
    blocks = [b for b in ("\n" + prompt).split("\n- ") if b.strip()]
    assert len(blocks) == len(REGISTRY)
    for card, block in zip(REGISTRY, blocks, strict=True):  # in registration order
        head, _, rest = block.partition(": ")
        assert head == card.syntax
        assert " ".join(rest.split()).startswith(" ".join(card.description.split()))
        for limitation in card.limitations:
            assert "Limitation: " + " ".join(limitation.split()) in " ".join(block.split())
        for example in card.examples:
            assert example in block
    # what the model reads, written out by hand for three cards
    assert REGISTRY.cards_prompt(["back", "type"]) == (
        "- Back: Press the Back key: return to the previous page or close the keyboard.\n"
        "  Example: Back\n"
        "- Type (Text): Type Text into the input box that has the focus. "
        "Click the input box first if the keyboard is not shown.\n"
        "  Limitation: Typing does not press Enter; use Enter afterwards to submit.\n"
        "  Example: Type (Hello, world)"
    )
    assert REGISTRY.cards_prompt(["wait"]).endswith("\n  Example: Wait (3); Wait")
    assert "Click icon (Icon, Position)" in prompt
    assert "top, bottom, left, right, center" in prompt
    only = REGISTRY.cards_prompt(["stop", "back"])
    assert only.count("\n- ") == 1 and "Stop" in only and "Click text" not in only


def test_json_schema_describes_every_action() -> None:
    schema = REGISTRY.json_schema()
    json.dumps(schema)  # serializable
    variants = {v["properties"]["action"]["const"]: v for v in schema["oneOf"]}
    assert set(variants) == set(REGISTRY.names())
    icon = variants["click_icon"]["properties"]["params"]
    assert set(icon["properties"]) == {"icon", "position"}
    assert icon["required"] == ["icon"]
    assert icon["additionalProperties"] is False
    assert variants["click_text"]["properties"]["params"]["properties"]["text"]["maxLength"] == 200
    assert variants["stop"]["required"] == ["action"]
    # Every example's parameters validate against its card's schema-bearing model.
    for card in REGISTRY:
        for example in card.examples:
            action = parse_action(example)
            card.params_model.model_validate(action.params.model_dump())
            dumped = {"action": action.name, "params": action.params.model_dump(exclude_none=True)}
            assert parse_action(json.dumps(dumped)) == parse_action(example).__class__(
                name=action.name, params=action.params, raw=json.dumps(dumped), text=action.text
            )


def test_get_by_alias_and_unknown() -> None:
    assert REGISTRY.get("Click the text").name == "click_text"
    assert REGISTRY.get("OPEN_APP").name == "open_app"
    with pytest.raises(UnknownOperationError) as info:
        REGISTRY.get("teleport")
    assert "Open App (App)" in info.value.message


# --- malformed cards fail when they are defined ------------------------------------------


class _Text(BaseModel):
    model_config = ConfigDict(extra="forbid")
    text: str = Field(min_length=1)


class _Two(BaseModel):
    model_config = ConfigDict(extra="forbid")
    a: str
    b: str


class _Loose(BaseModel):
    text: str


def _define(registry: OperationRegistry, **kwargs: object) -> None:
    kwargs.setdefault("description", "does a thing")

    @operation(registry=registry, **kwargs)  # type: ignore[arg-type]
    def poke(params: _Text, ctx: OperationContext) -> Outcome:
        return Outcome(ok=True)


def test_a_well_formed_card_registers_and_parses() -> None:
    registry = OperationRegistry()
    _define(registry, syntax="Poke (Text)", examples=("Poke (here)",), aliases=("prod",))
    assert registry.parse("prod (there)").params.text == "there"
    assert REGISTRY.find("poke") is None  # a private registry leaves the global one alone


@pytest.mark.parametrize(
    "kwargs,needle",
    [
        ({"syntax": "Poke (Text)", "description": "  "}, "empty description"),
        ({"syntax": "Poke (Words)"}, "do not match"),
        ({"syntax": "Poke"}, "do not match"),
        ({"syntax": "Poke ((Text)"}, "is not"),
        ({"syntax": "Poke (Text)", "examples": ("Poke ()",)}, "example"),
        ({"syntax": "Poke (Text)", "examples": ("Stop",)}, "example"),
        ({"syntax": "Poke (Text)", "name": "Poke-It"}, "snake_case"),
    ],
)
def test_malformed_cards_raise_at_definition(kwargs: dict[str, object], needle: str) -> None:
    registry = OperationRegistry()
    if kwargs.get("examples") == ("Stop",):
        @operation(registry=registry, syntax="Stop", description="ends")
        def stop(params: _Empty, ctx: OperationContext) -> Outcome:
            return Outcome(ok=True, terminal=True)

    with pytest.raises(CardDefinitionError, match=needle):
        _define(registry, **kwargs)
    assert "poke" not in registry.names()


class _Empty(BaseModel):
    model_config = ConfigDict(extra="forbid")


def test_duplicates_and_bad_models_raise() -> None:
    registry = OperationRegistry()
    _define(registry, syntax="Poke (Text)", aliases=("prod",))
    with pytest.raises(CardDefinitionError, match="twice"):
        _define(registry, syntax="Poke (Text)")

    with pytest.raises(CardDefinitionError, match="already belongs"):

        @operation(registry=registry, syntax="Prod (Text)", description="x")
        def prod(params: _Text, ctx: OperationContext) -> Outcome:
            return Outcome(ok=True)

    with pytest.raises(CardDefinitionError, match="pydantic model"):

        @operation(registry=registry, syntax="Nudge (Text)", description="x")
        def nudge(params: str, ctx: OperationContext) -> Outcome:
            return Outcome(ok=True)

    with pytest.raises(CardDefinitionError, match="split_args"):

        @operation(registry=registry, syntax="Pair (A, B)", description="x")
        def pair(params: _Two, ctx: OperationContext) -> Outcome:
            return Outcome(ok=True)

    with pytest.raises(CardDefinitionError, match="forbid extra"):

        @operation(registry=registry, syntax="Loose (Text)", description="x")
        def loose(params: _Loose, ctx: OperationContext) -> Outcome:
            return Outcome(ok=True)

    with pytest.raises(CardDefinitionError, match="params, ctx"):

        @operation(registry=registry, syntax="Solo", description="x")
        def solo(params: _Empty) -> Outcome:
            return Outcome(ok=True)

    assert registry.names() == ["poke"]
