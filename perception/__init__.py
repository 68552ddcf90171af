"""perception: find text and icons on a phone screenshot (a leaf library).

Image in (RGB uint8 numpy), typed elements out (``perception.types``). Never imports
``mobile_agent``, ``server`` or ``eval``.
"""

from perception.errors import BackendUnavailableError, PerceptionFailure, WeightsMissingError
from perception.types import Box, Candidate, IconRegion, Location, LocateStatus, TextLine

__all__ = [
    "BackendUnavailableError",
    "Box",
    "Candidate",
    "IconRegion",
    "LocateStatus",
    "Location",
    "PerceptionFailure",
    "TextLine",
    "WeightsMissingError",
]
