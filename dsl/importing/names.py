"""The names of imported scenario files: a few words of what the person first said (or of
the attempt), in lower case ASCII letters, digits and ``_`` — ``quiero_un_turno_el_martes``
— so the folder reads as a list of conversations."""

from __future__ import annotations

import re
import unicodedata

MAX_WORDS = 6
MAX_CHARS = 48
FALLBACK = "conversation"


def slug(text: str) -> str:
    """``¿Hasta qué hora atienden hoy?`` → ``hasta_que_hora_atienden_hoy``."""
    folded = unicodedata.normalize("NFKD", text)
    ascii_text = folded.encode("ascii", "ignore").decode("ascii").lower()
    words = re.findall(r"[a-z0-9]+", ascii_text)[:MAX_WORDS]
    out = "_".join(words)[:MAX_CHARS].strip("_")
    return out or FALLBACK


def unique(names: list[str]) -> list[str]:
    """The names, a number added to each repeat (``hola``, ``hola_2``, ``hola_3``)."""
    seen: dict[str, int] = {}
    taken = set(names)
    out = []
    for name in names:
        n = seen.get(name, 0) + 1
        seen[name] = n
        if n == 1:
            out.append(name)
            continue
        candidate = f"{name}_{n}"
        while candidate in taken:
            n += 1
            candidate = f"{name}_{n}"
        seen[name] = n
        taken.add(candidate)
        out.append(candidate)
    return out
