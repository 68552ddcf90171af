"""perception: find text and icons on a phone screenshot (a leaf library).

Image in (RGB uint8 numpy), typed elements out (``perception.types``). Never imports
``mobile_agent``, ``server`` or ``eval``. The entry point is ``Perception(config)``:
``ocr``, ``find_text``, ``find_icon``, ``describe_backends``.
"""

from perception.config import PerceptionConfig
from perception.errors import (
    BackendUnavailableError,
    InvalidInputError,
    PerceptionFailure,
    WeightsMissingError,
)
from perception.facade import Perception
from perception.types import Box, Candidate, IconRegion, LocateStatus, Location, TextLine

__all__ = [
    "BackendUnavailableError",
    "Box",
    "Candidate",
    "IconRegion",
    "InvalidInputError",
    "LocateStatus",
    "Location",
    "Perception",
    "PerceptionConfig",
    "PerceptionFailure",
    "TextLine",
    "WeightsMissingError",
]
