"""The routers: ``tasks`` and ``devices`` under /v1, ``ops`` (health, metrics), ``dashboard``."""
