"""Operation cards and their registry.

An operation is a function decorated with ``@operation(...)``. Its first parameter is
annotated with a pydantic model (the operation's parameters), its second is the
``OperationContext``. The decorator builds an ``OperationCard`` and registers it; from
the cards come the operation section of the planner prompt (``cards_prompt``), the
parser of the model's action text (``parse``) and a JSON schema (``json_schema``).

A malformed card (no description, a syntax that does not name the model's fields, an
example that does not parse back to its own operation, a duplicate name or alias)
raises ``CardDefinitionError`` at import: it is a bug in the code, not a model mistake.

May import: pydantic, the standard library, ``mobile_agent.errors`` and its siblings.
"""

from __future__ import annotations

import inspect
import re
import threading
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, get_type_hints

from pydantic import BaseModel

from mobile_agent.errors import OperationError, UnknownOperationError
from mobile_agent.operations.parser import ParsedAction, parse_with

if TYPE_CHECKING:
    from mobile_agent.operations.context import OperationContext, Outcome

__all__ = [
    "CardDefinitionError", "OperationCard", "OperationRegistry", "REGISTRY", "card_of", "operation", "op_key", "parse_action",
]

_NAME_RE = re.compile(r"^[a-z][a-z0-9_]*$")
_SYNTAX_RE = re.compile(r"^(?P<head>[A-Za-z][A-Za-z ]*?)\s*(?:\((?P<args>[^()]*)\))?$")
# Words a model puts between the verb and the noun ("click THE text", "tap ON the icon").
_STOPWORDS = frozenset({"the", "a", "an", "on", "at", "to"})


class CardDefinitionError(TypeError):
    """An operation card is malformed (a programming error, raised at import)."""


def op_key(text: str) -> str:
    """The matching key of an operation name: case, separators and articles ignored.

    ``"Click the text"``, ``"click_text"``, ``"ClickText"`` and ``"click  text"`` all give
    ``"clicktext"``.
    """
    spaced = re.sub(r"(?<=[a-z])(?=[A-Z])", " ", text)
    words = re.findall(r"[a-z0-9]+", spaced.lower())
    return "".join(w for w in words if w not in _STOPWORDS)


@dataclass(frozen=True)
class OperationCard:
    """Everything the planner, the parser and the executor need to know about one operation."""

    name: str  # snake_case identifier: "click_text"
    syntax: str  # how the model writes it: "Click text (Text)"
    params_model: type[BaseModel]
    description: str  # written for the model
    execute: Callable[[Any, OperationContext], Outcome] = field(repr=False, compare=False)
    limitations: tuple[str, ...] = ()
    examples: tuple[str, ...] = ()
    aliases: tuple[str, ...] = ()
    # Splits the text between the parentheses into field values; the default maps
    # a single field to the whole text and several fields to comma-separated parts.
    split_args: Callable[[str], dict[str, Any]] | None = field(default=None, repr=False, compare=False)

    @property
    def fields(self) -> tuple[str, ...]:
        return tuple(self.params_model.model_fields)

    @property
    def required_fields(self) -> tuple[str, ...]:
        return tuple(n for n, f in self.params_model.model_fields.items() if f.is_required())

    @property
    def title(self) -> str:
        """The syntax without its argument list: ``"Click text"``."""
        return self.syntax.split("(")[0].strip()

    def keys(self) -> tuple[str, ...]:
        return (op_key(self.title), op_key(self.name), *(op_key(a) for a in self.aliases))

    def render(self, params: BaseModel) -> str:
        """The canonical action text for these parameters: ``Click icon (gear, top right)``."""
        values = [params.model_dump()[n] for n in self.fields]
        shown = [str(v) for v in values if v is not None and v != ""]
        if not shown:
            return self.title
        return f"{self.title} ({', '.join(shown)})"

    def prompt_block(self) -> str:
        lines = [f"- {self.syntax}: {self.description}"]
        for limitation in self.limitations:
            lines.append(f"  Limitation: {limitation}")
        if self.examples:
            lines.append("  Example: " + "; ".join(self.examples))
        return "\n".join(lines)

    def schema(self) -> dict[str, Any]:
        params = self.params_model.model_json_schema()
        params.pop("title", None)
        return {
            "type": "object",
            "title": self.syntax,
            "description": self.description,
            "properties": {"action": {"const": self.name}, "params": params},
            "required": ["action", "params"] if self.required_fields else ["action"],
            "additionalProperties": False,
        }


class OperationRegistry:
    """An ordered set of operation cards, indexed by name and alias."""

    def __init__(self) -> None:
        self._cards: dict[str, OperationCard] = {}
        self._by_key: dict[str, OperationCard] = {}
        self._lock = threading.Lock()

    # --- registration -----------------------------------------------------------
    def register(self, card: OperationCard) -> OperationCard:
        _check_card(card)
        with self._lock:
            if card.name in self._cards:
                raise CardDefinitionError(f"operation {card.name!r} is registered twice")
            for key in card.keys():
                other = self._by_key.get(key)
                if other is not None and other.name != card.name:
                    raise CardDefinitionError(
                        f"operation {card.name!r}: name or alias key {key!r} already belongs to {other.name!r}"
                    )
            self._cards[card.name] = card
            for key in card.keys():
                self._by_key[key] = card
        try:
            self._check_examples(card)
        except CardDefinitionError:
            self._unregister(card)
            raise
        return card

    def _unregister(self, card: OperationCard) -> None:
        with self._lock:
            self._cards.pop(card.name, None)
            for key in card.keys():
                if self._by_key.get(key) is card:
                    del self._by_key[key]

    def _check_examples(self, card: OperationCard) -> None:
        for example in card.examples:
            try:
                parsed = self.parse(example)
            except OperationError as exc:
                raise CardDefinitionError(f"operation {card.name!r}: example {example!r} fails: {exc}") from exc
            if parsed.name != card.name:
                raise CardDefinitionError(
                    f"operation {card.name!r}: example {example!r} parses as {parsed.name!r}"
                )

    # --- lookup -----------------------------------------------------------------
    def get(self, name: str) -> OperationCard:
        """The card called ``name`` (or one of its aliases, in any spelling)."""
        card = self._cards.get(name) or self._by_key.get(op_key(name))
        if card is None:
            raise UnknownOperationError(
                f"Your action {name!r} is not one of: {self.syntax_list()}.", operation=name
            )
        return card

    def find(self, words: str) -> OperationCard | None:
        """The card whose name or alias key matches ``words``, or None."""
        return self._by_key.get(op_key(words))

    def names(self) -> list[str]:
        return list(self._cards)

    def cards(self) -> list[OperationCard]:
        return list(self._cards.values())

    def __iter__(self) -> Iterator[OperationCard]:
        return iter(self.cards())

    def __len__(self) -> int:
        return len(self._cards)

    def __contains__(self, name: object) -> bool:
        return isinstance(name, str) and (name in self._cards or op_key(name) in self._by_key)

    # --- what comes out of the cards ---------------------------------------------
    def syntax_list(self) -> str:
        return ", ".join(card.syntax for card in self._cards.values())

    def cards_prompt(self, only: Sequence[str] | None = None) -> str:
        """The operation section of the planner prompt, one block per card."""
        cards = [self.get(n) for n in only] if only is not None else self.cards()
        return "\n".join(card.prompt_block() for card in cards)

    def json_schema(self) -> dict[str, Any]:
        """A JSON schema of one action: ``{"action": name, "params": {...}}``."""
        return {
            "$schema": "https://json-schema.org/draft/2020-12/schema",
            "title": "MobileAgentAction",
            "oneOf": [card.schema() for card in self._cards.values()],
        }

    def parse(self, reply: str) -> ParsedAction:
        """A model reply (or its action text) read with these cards (``parser.parse_with``)."""
        return parse_with(self, reply)


REGISTRY = OperationRegistry()


def parse_action(reply: str, registry: OperationRegistry | None = None) -> ParsedAction:
    """Parse a model reply (or its action text) with ``registry`` (default: all operations)."""
    return parse_with(registry if registry is not None else REGISTRY, reply)


def operation(
    *,
    syntax: str,
    description: str,
    name: str | None = None,
    limitations: Sequence[str] = (),
    examples: Sequence[str] = (),
    aliases: Sequence[str] = (),
    split_args: Callable[[str], dict[str, Any]] | None = None,
    registry: OperationRegistry | None = None,
) -> Callable[[Callable[..., Outcome]], Callable[..., Outcome]]:
    """Register the decorated ``fn(params: Model, ctx: OperationContext) -> Outcome``.

    ``name`` defaults to the function's name. The parameter model is read from the
    annotation of the first parameter.
    """

    def decorate(fn: Callable[..., Outcome]) -> Callable[..., Outcome]:
        card = OperationCard(
            name=name or fn.__name__,
            syntax=syntax,
            params_model=_params_model_of(fn),
            description=inspect.cleandoc(description),
            execute=fn,
            limitations=tuple(inspect.cleandoc(x) for x in limitations),
            examples=tuple(examples),
            aliases=tuple(aliases),
            split_args=split_args,
        )
        (registry if registry is not None else REGISTRY).register(card)
        _CARDS_OF[fn] = card
        return fn

    return decorate


_CARDS_OF: dict[Callable[..., Outcome], OperationCard] = {}  # each decorated function's card


def card_of(fn: Callable[..., Outcome]) -> OperationCard:
    """The card ``@operation`` made of ``fn`` (to register it in another registry too)."""
    return _CARDS_OF[fn]


def _params_model_of(fn: Callable[..., Any]) -> type[BaseModel]:
    params = list(inspect.signature(fn).parameters.values())
    if len(params) != 2:
        raise CardDefinitionError(f"operation {fn.__name__!r} must take (params, ctx), got {len(params)} parameters")
    try:
        hints = get_type_hints(fn)
    except NameError as exc:
        raise CardDefinitionError(f"operation {fn.__name__!r}: unresolvable annotation: {exc}") from exc
    model = hints.get(params[0].name)
    if not (isinstance(model, type) and issubclass(model, BaseModel)):
        raise CardDefinitionError(
            f"operation {fn.__name__!r}: first parameter must be annotated with a pydantic model, got {model!r}"
        )
    return model


def _check_card(card: OperationCard) -> None:
    where = f"operation {card.name!r}"
    if not _NAME_RE.match(card.name):
        raise CardDefinitionError(f"{where}: name must be snake_case")
    if not card.description.strip():
        raise CardDefinitionError(f"{where}: empty description")
    match = _SYNTAX_RE.match(card.syntax.strip())
    if match is None:
        raise CardDefinitionError(f"{where}: syntax {card.syntax!r} is not 'Title (Arg, Arg)'")
    placeholders = [a.strip().lower() for a in (match.group("args") or "").split(",") if a.strip()]
    if placeholders != [f.lower() for f in card.fields]:
        raise CardDefinitionError(
            f"{where}: syntax arguments {placeholders} do not match the model's fields {list(card.fields)}"
        )
    if len(card.fields) > 1 and card.split_args is None:
        # Commas may appear inside any value; a card with several fields says how to split.
        raise CardDefinitionError(f"{where}: several fields need a split_args function")
    if card.params_model.model_config.get("extra") != "forbid":
        raise CardDefinitionError(f"{where}: the parameter model must forbid extra fields")
