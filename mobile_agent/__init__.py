"""mobile-agent: an Android device-control agent driven by a multimodal LLM.

Public API (pinned by tests/test_public_api.py once each part lands).
"""

from mobile_agent.errors import MobileAgentError
from mobile_agent.settings import Settings, load_settings

__version__ = "0.1.0"

__all__ = ["MobileAgentError", "Settings", "__version__", "load_settings"]
