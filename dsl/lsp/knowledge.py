"""What the server knows about the file a request is about: its text, its suite (loaded),
and the names the file defines itself (inline tools, world tables) — the names
completion offers, hover explains and navigation finds.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from functools import cached_property
from pathlib import Path

from ..compiler.faketools import compile_tool
from ..compiler.suite import Suite
from ..compiler.world import compile_world
from ..errors import Collector
from ..model import ToolSpec, WorldTable
from ..source.load import Document
from .files import FileInfo, Files


@dataclass(frozen=True, slots=False)
class Known:
    """One file at the time of a request (frozen; its lookups computed once)."""

    info: FileInfo
    text: str
    suite: Suite | None
    doc: Document | None  # the text loaded, or its last version that loaded

    @property
    def path(self) -> Path:
        return self.info.path

    @property
    def is_suite(self) -> bool:
        return self.info.kind == "suite"

    @cached_property
    def lines(self) -> list[str]:
        return self.text.split("\n")

    @cached_property
    def data(self) -> dict[str, object]:
        if self.doc is None:
            return {}
        data = self.doc.data if self.doc.data is not None else self.doc.salvaged
        return data if isinstance(data, dict) else {}

    @cached_property
    def inline_tools(self) -> Mapping[str, ToolSpec]:
        """The tools the scenario defines itself (given.tools items with a name)."""
        if self.is_suite or self.doc is None:
            return {}
        given = self.data.get("given")
        tools = given.get("tools") if isinstance(given, dict) else None
        out: dict[str, ToolSpec] = {}
        for i, item in enumerate(tools if isinstance(tools, list) else []):
            if isinstance(item, dict) and isinstance(item.get("name"), str):
                out[item["name"]] = compile_tool(self.doc, ("given", "tools", i),
                                                 item["name"], item, Collector())
        return out

    @cached_property
    def listed_tools(self) -> tuple[str, ...]:
        """The library tools the scenario names in given.tools."""
        given = self.data.get("given")
        tools = given.get("tools") if isinstance(given, dict) else None
        return tuple(t for t in tools if isinstance(t, str)) if isinstance(tools, list) else ()

    @cached_property
    def tools(self) -> Mapping[str, ToolSpec]:
        """Every tool a name may refer to here: the scenario's own, then the library's."""
        library = dict(self.suite.tools) if self.suite is not None else {}
        return {**self.inline_tools, **{k: v for k, v in library.items()
                                       if k not in self.inline_tools}}

    @cached_property
    def own_tables(self) -> Mapping[str, WorldTable]:
        """The world tables the scenario writes (given.world)."""
        if self.is_suite or self.doc is None:
            return {}
        given = self.data.get("given")
        world = given.get("world") if isinstance(given, dict) else None
        if not isinstance(world, dict):
            return {}
        root = self.suite.root if self.suite is not None else self.path.parent
        return compile_world(self.doc, ("given", "world"), world, root, Collector())

    @cached_property
    def tables(self) -> Mapping[str, WorldTable]:
        """The world's tables here: the scenario's own, then the suite's."""
        suite = dict(self.suite.world) if self.suite is not None else {}
        return {**suite, **self.own_tables}

    def table_where(self, name: str) -> str:
        return "this scenario" if name in self.own_tables else (
            self.suite.file if self.suite is not None else "")


def known(files: Files, path: Path) -> Known | None:
    """What the server knows of ``path`` now; None when it is no file of a suite."""
    info = files.info(path)
    if info.suite_file is None:
        return None
    text = files.text(path)
    if text is None:
        return None
    suite = files.suite(info.suite_file)
    doc = files.document(path) if info.kind in ("scenario", "suite") else None
    return Known(info, text, suite, doc)
