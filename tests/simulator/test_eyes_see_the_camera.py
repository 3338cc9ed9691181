"""The simulator's eyes name the demo camera's colours as a person would (hue, not RGB distance)."""

from __future__ import annotations

import pytest

from fuseforks.demo.camera import frame_colours, render_frame
from fuseforks.simulator.eyes import describe, nearest_colour


@pytest.mark.parametrize("seq", [1, 2, 3, 4])
def test_every_camera_frame_is_described_by_its_palette_names(seq: int) -> None:
    left, right = frame_colours(seq)
    assert describe(render_frame(seq)) == f"left half {left}, right half {right}"


@pytest.mark.parametrize(("rgb", "name"), [
    ((40, 170, 70), "green"), ((235, 200, 40), "yellow"), ((255, 165, 0), "orange"),
    ((128, 128, 128), "gray"), ((250, 250, 250), "white"), ((10, 10, 10), "black"),
    ((255, 0, 255), "magenta"), ((0, 255, 255), "cyan"), ((220, 40, 40), "red"),
])
def test_colour_names(rgb: tuple[int, int, int], name: str) -> None:
    assert nearest_colour(rgb) == name
