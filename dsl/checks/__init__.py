"""Checks: what an attempt must satisfy. Importing this package registers the built-ins."""

from . import answer, conversation, expect, grounded, judged, tools, world  # noqa: F401  (registration happens on import)
from .registry import REGISTRY, CheckContext, CheckType, check, label, register

__all__ = ["REGISTRY", "CheckContext", "CheckType", "check", "label", "register"]
