"""``python -m dsl``: the ``scenarist`` command, run as a module."""

from .cli import main

main()
