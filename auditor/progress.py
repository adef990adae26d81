"""How collection goes, told to whoever draws it (the CLI's progress bar)."""

from __future__ import annotations


class Progress:
    """The base class ignores it all."""

    def region_started(self, region: str, queries: int) -> None: ...

    def advanced(self, queries: int) -> None: ...
