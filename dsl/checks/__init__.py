"""Checks: what an attempt must satisfy. Importing this package registers the built-ins."""

from . import (  # noqa: F401  (registration happens on import)
    answer,
    conversation,
    expect,
    grounded,
    judged,
    sameworld,
    tools,
    world,
)
from .registry import REGISTRY, CheckContext, CheckType, check, label, register

__all__ = ["REGISTRY", "CheckContext", "CheckType", "check", "label", "register"]
