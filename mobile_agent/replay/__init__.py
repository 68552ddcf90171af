"""The plan cache: a run that worked once replays without the model.

``ReplayingPlanner`` wraps the real planner for one run; ``PlanStore`` keeps the plans
(``CachedPlan``: an instruction template and its steps as described, each with the
fingerprint of the screen it acted on). On by ``settings.cache.enabled`` (``--cache``).

May import: the standard library, numpy, OpenCV, rapidfuzz, SQLAlchemy, ``perception.types`` and
``mobile_agent`` (operations, planner types, agent records, errors). Never ``server`` or
``eval``.
"""

from mobile_agent.replay.fingerprint import ScreenFingerprint, fingerprint
from mobile_agent.replay.plans import CachedPlan, CachedStep, InstructionTemplate
from mobile_agent.replay.replayer import REPLAY_SOURCE, ReplayingPlanner
from mobile_agent.replay.store import PlanStore, default_cache_url

__all__ = [
    "REPLAY_SOURCE",
    "CachedPlan",
    "CachedStep",
    "InstructionTemplate",
    "PlanStore",
    "ReplayingPlanner",
    "ScreenFingerprint",
    "default_cache_url",
    "fingerprint",
]
