"""Errors of the memory layer. Every message names the file, collection, record or field at fault."""

from __future__ import annotations


class MemoryStoreError(Exception):
    """Base class of the memory layer's errors."""


class InvalidRecordError(MemoryStoreError, ValueError):
    """A record to add is malformed: an empty key, a value over the size limit, a wrong field."""


class ImportFormatError(MemoryStoreError, ValueError):
    """A JSON Lines file to import is unreadable; the message names the file and line."""


class StoreUnavailableError(MemoryStoreError):
    """The Chroma server named by the settings cannot be reached; the message names the server and
    the settings to change (`HELPER_CHROMA_HOST`, `HELPER_CHROMA_PORT`)."""


class IncompatibleStoreError(MemoryStoreError):
    """The store folder (or server) was written by an incompatible version, or by something else."""


class EmbeddingMismatchError(MemoryStoreError):
    """A collection was built with another embedding model (or dimension) than the one in use."""


class UnknownMemoryError(MemoryStoreError, KeyError):
    """No memory plugin is registered under that name."""

    def __str__(self) -> str:  # KeyError would quote the message
        return str(self.args[0]) if self.args else ""
