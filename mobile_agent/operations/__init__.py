"""Operations as self-describing tool cards.

Each operation is registered once (``catalog.py``) with a pydantic parameter model; the
registry renders the operation section of the planner prompt, parses the model's
action text and gives a JSON schema. ``execute(action, ctx)`` runs a parsed action on a
device through a ``Locator`` (perception).

May import: pydantic, numpy, perception.types, mobile_agent.errors/settings.
"""

from __future__ import annotations

from mobile_agent.operations import catalog as _catalog  # noqa: F401  (registers the operations)
from mobile_agent.operations.catalog import normalize_position
from mobile_agent.operations.context import (
    AgentDevice,
    Chooser,
    DeviceLike,
    Locator,
    OperationContext,
    Outcome,
    ScreenInfoLike,
    ScreenshotLike,
    ScreenStateLike,
)
from mobile_agent.operations.coordinates import COORDINATE_REGISTRY
from mobile_agent.operations.parser import ParsedAction, extract_action_section
from mobile_agent.operations.registry import (
    REGISTRY,
    CardDefinitionError,
    OperationCard,
    OperationRegistry,
    operation,
    parse_action,
)
from mobile_agent.operations.secrets import referenced_secrets

__all__ = [
    "COORDINATE_REGISTRY",
    "REGISTRY",
    "AgentDevice",
    "CardDefinitionError",
    "Chooser",
    "DeviceLike",
    "Locator",
    "OperationCard",
    "OperationContext",
    "OperationRegistry",
    "Outcome",
    "ParsedAction",
    "ScreenInfoLike",
    "ScreenStateLike",
    "ScreenshotLike",
    "execute",
    "extract_action_section",
    "normalize_position",
    "operation",
    "parse_action",
    "referenced_secrets",
]


def execute(action: ParsedAction, ctx: OperationContext, registry: OperationRegistry | None = None) -> Outcome:
    """Run a parsed action. Model mistakes come back as ``Outcome(ok=False, feedback)``;
    device errors propagate."""
    if registry is None:
        # the paper's operations, then the grounded dialects' (their shared cards are the same)
        card = REGISTRY.find(action.name) or COORDINATE_REGISTRY.get(action.name)
    else:
        card = registry.get(action.name)
    return card.execute(action.params, ctx)
