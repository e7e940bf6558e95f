"""Corpus readers, one module per source format, and the registry that picks one.

A reader streams its files and yields validated `DialogRecord`s; it never touches the database
(`annotation.services.imports` does the writing). To support a new format, add a module with a
`CorpusReader` subclass and register it in READERS under its `SourceFormat` value.
"""
from .base import CorpusReader, DialogRecord, FormatError, TurnRecord
from .dstc6 import DSTC6Reader
from .dstc9 import DSTC9Reader
from .jsonl import JSONLReader
from .multiwoz import MultiWOZReader

READERS: dict[str, type[CorpusReader]] = {
    "multiwoz": MultiWOZReader,
    "dstc9": DSTC9Reader,
    "dstc6": DSTC6Reader,
    "jsonl": JSONLReader,
}

__all__ = ["READERS", "CorpusReader", "DialogRecord", "FormatError", "TurnRecord"]
