"""The local Engram: every operation run in this process."""

from __future__ import annotations

from engram.service.deep import DeepSearchMixin
from engram.service.live import LiveMixin
from engram.service.notes_move import NoteMoveMixin
from engram.service.panel import PanelMixin
from engram.service.rebuild import RebuildMixin


class Engram(NoteMoveMixin, LiveMixin, PanelMixin, DeepSearchMixin, RebuildMixin):
    """Engram's operations over one index; the composition root builds it from Settings."""
