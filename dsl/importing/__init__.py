"""Import: recorded conversations in, scenario files out (``scenarist import``).

::

    a gateway log ──openai.read──┐
    an OTLP/JSON export ──otel.read──┼──▶ Conversation ──secrets.Cleaner──▶ Conversation
    a run folder ──runfolder.read──┘     (conversation.build)        (redacted, checked)
        ──scenario.write──▶ Draft (YAML text, comments) ──lint --strict──▶ the file, whole

Each reader turns its format into the same :class:`~dsl.importing.conversation.
Conversation` (the person's turns, the agent's calls with what the log shows came back,
the tools) and reports what it cannot read as a located
:class:`~dsl.importing.conversation.Problem` — ``file:line`` or a span's id — reading on
past it. :func:`import_conversations` chains the stages; the command line
(``dsl/cli/importing.py``) and the studio call it. docs/import.md says what each format's
fields are read.
"""

from .conversation import Place, Problem
from .importer import (
    IMPORTED,
    ImportRefused,
    ImportResult,
    Written,
    default_folder,
    import_conversations,
)
from .runfolder import Attempt, parse_attempt
from .sources import FORMATS, Format, Upload

__all__ = ["FORMATS", "IMPORTED", "Attempt", "Format", "ImportRefused", "ImportResult",
           "Place", "Problem", "Upload", "Written", "default_folder", "import_conversations",
           "parse_attempt"]
