"""The simulated phone as an iPhone: its apps served through a WebDriverAgent-compatible
HTTP front-end (``WdaFrontEnd``), for mobile-agent's iOS backend (issue 33).

May import: the standard library, Pillow, the rest of ``simphone``. Knows nothing of
``mobile_agent``.
"""

from simphone.ios.wda import BUNDLES, WdaFrontEnd, page_source

__all__ = ["BUNDLES", "WdaFrontEnd", "page_source"]
