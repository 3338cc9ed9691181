"""Projections: pure folds over a turn's events."""

from fuseforks.projections.fold import fold
from fuseforks.projections.log import LogState, evolve_log

__all__ = ["LogState", "evolve_log", "fold"]
