"""What the offline models share: a name, the :class:`ModelInfo` it makes, nothing to close."""

from __future__ import annotations

from ..base import ModelInfo

__all__ = ["OfflineModel"]


class OfflineModel:
    """The part of an offline model that is not its algorithm: it runs in this process,
    offers tools natively, emits free text and holds nothing to release."""

    def __init__(self, *, name: str) -> None:
        self._info = ModelInfo(label=name)

    @property
    def name(self) -> str:
        """The display name given at construction."""
        return self._info.label

    @property
    def info(self) -> ModelInfo:
        """An in-process model: no server, no cache identity beyond its code."""
        return self._info

    def close(self) -> None:
        """Nothing to release."""
