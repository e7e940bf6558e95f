"""Writers for the exports of a job: one test-set writer per source format, and the raw CSV.

The modules here are pure (no Django import): the service in `annotation.services.exports`
reads the rows and hands them over as plain records.
"""
from .base import OOS_REPLY, OOS_TURN, DialogRecord, ExportError, TurnRecord, VariantWriter
from .dstc6 import Dstc6Writer
from .dstc9 import Dstc9Writer
from .jsonl import JsonlWriter
from .multiwoz import MultiwozWriter

WRITERS: dict[str, type[VariantWriter]] = {
    w.source_format: w for w in (MultiwozWriter, Dstc9Writer, Dstc6Writer, JsonlWriter)
}


def writer_for(source_format: str) -> type[VariantWriter]:
    try:
        return WRITERS[source_format]
    except KeyError:
        raise ExportError(
            f"No exporter for source format {source_format!r}; known: {', '.join(sorted(WRITERS))}."
        ) from None


__all__ = ["OOS_REPLY", "OOS_TURN", "WRITERS", "DialogRecord", "ExportError", "TurnRecord", "VariantWriter", "writer_for"]
