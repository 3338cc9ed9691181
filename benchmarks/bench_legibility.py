"""Legible under a budget: how well text reads when a client's limit forces an image smaller.

Three kinds of screenshot with text (`tests.helpers.imagegen.screenshot`: Pillow's bundled font,
the same pixels on every machine): a full page (1280x3000 at 1x), a high-DPI screen (2560x1600 at
2x) and a dashboard (1568x980 at 1x). Each is fitted into the per-image budget of every client
profile whose limit forces it smaller: the share of one image, and of each of a full result's
images, of what the profile's result limit leaves after a short text (`ResultLimits.image_room`,
the gateway's own figure), or the profile's byte limit per image.

For each case, tesseract reads:
- **best reachable**: a grid search over scale (the profile's long edge, then 85 % ... 30 % of
  it) x format (JPEG, lossy WebP, lossless WebP, 256-colour PNG; plain PNG is never smaller than
  lossless WebP) x quality — at each scale
  and format the highest quality within the budget (bisection; size falls with quality);
- **fuseforks**: what the gateway sends of the first screenshot of a result of one, or of as many
  as the profile allows, through the plan a client's reply is made of (`plan_for_client`): the
  image, or a tall page's parts, read one after the other;
- **before**: what it sent before quality came before scale — JPEG quality 85 scaled down until
  it fits (kept here, in the benchmark, as the baseline).

The best reachable is the best configuration (format and scale) on the mean over the seeds, not
the luckiest reading of each seed. Character accuracy is 1 - Levenshtein(OCR text, shown
text) / len(shown text), whitespace runs collapsed (`bench_screenshots`). Goals: fuseforks within
5 % of the best reachable — or, where nothing reads 0.5 (a ratio of two readings near zero says
nothing), every image sent marked illegible, so its note says so; the full page under Claude
Code's budget with at least half of the error of before gone.

Needs tesseract on PATH (`apt-get install tesseract-ocr`); says so and stops when missing.
"""

from __future__ import annotations

import base64
import functools
import io
import math
import shutil
import subprocess
import sys
import tempfile
from collections.abc import Callable
from pathlib import Path

import anyio
from mcp.types import CallToolResult, ImageContent, TextContent
from PIL import Image

from benchmarks.bench_screenshots import accuracy
from fuseforks.core.media import SHRINK_MIN_EDGE_PX, SHRINK_STEPS, target_size
from fuseforks.gateway.profiles import ClientProfile, profile_for
from fuseforks.images.types import NormalizedImage
from fuseforks.mcp.reply import plan_for_client
from tests.helpers import imagegen as gen

KINDS = {
    "full page 1280x3000": (1280, 3000, 1.0),
    "high-DPI 2560x1600": (2560, 1600, 2.0),
    "dashboard 1568x980": (1568, 980, 1.0),
}
PROFILES = ("claude-code", "claude-desktop", "image-rules")
SEEDS = range(3)
"""Screenshots per case: tesseract's reading of one picture moves with a pixel of size, so each
figure is a mean over seeds."""
SCALES = (1.0, 0.85, 0.7, 0.6, 0.5, 0.4)
QUALITIES = tuple(range(95, 0, -5))
TEXT_BESIDE = 200
"""Characters of text a result carries beside its images (a caption, a URL)."""
GOAL_OF_BEST = 0.95
LEGIBLE = 0.5
"""Below this, a reading is of nothing worth the name: where neither the best reachable nor
fuseforks reaches it, images marked illegible (their note says so) meet the goal too."""
GOAL_ERROR_GONE = 0.5


def _save(image: Image.Image, fmt: str, **params: object) -> bytes:
    out = io.BytesIO()
    image.save(out, fmt, **params)
    return out.getvalue()


ENCODERS: dict[str, Callable[[Image.Image, int], bytes]] = {
    "JPEG": lambda im, q: _save(im, "JPEG", quality=q),
    "WebP": lambda im, q: _save(im, "WEBP", quality=q),
}
LOSSLESS: dict[str, Callable[[Image.Image], bytes]] = {
    "WebP lossless": lambda im: _save(im, "WEBP", lossless=True, quality=80),
    "PNG 256": lambda im: _save(im.quantize(256), "PNG", optimize=True),
}


def budgets(profile: ClientProfile) -> list[tuple[str, int]]:
    """(label, bytes an image may take) for one image and for a full result of images."""
    room = profile.result_limits.image_room(TEXT_BESIDE)
    cases = []
    for count in (1, profile.limits.max_images):
        share = profile.limits.max_bytes if room is None else min(
            profile.limits.max_bytes, room // count // 4 * 3)
        cases.append((f"{count} image{'s' if count > 1 else ''}", share))
    return list(dict.fromkeys(cases))


def highest_quality(image: Image.Image, encode: Callable[[Image.Image, int], bytes],
                    budget: int) -> tuple[int, bytes] | None:
    low, high, found = 0, len(QUALITIES) - 1, None
    while low <= high:
        middle = (low + high) // 2
        data = encode(image, QUALITIES[middle])
        if len(data) <= budget:
            found, high = (QUALITIES[middle], data), middle - 1
        else:
            low = middle + 1
    return found


def grid(base: Image.Image, budget: int) -> list[tuple[str, float, bytes]]:
    """(format and quality, scale, bytes) of every grid point that fits."""
    points = []
    for scale in SCALES:
        size = (max(1, round(base.width * scale)), max(1, round(base.height * scale)))
        image = base if scale == 1.0 else base.resize(size, Image.Resampling.LANCZOS)
        for name, lossless in LOSSLESS.items():
            data = lossless(image)
            if len(data) <= budget:
                points.append((name, scale, data))
        for name, encode in ENCODERS.items():
            found = highest_quality(image, encode, budget)
            if found is not None:
                points.append((f"{name} q{found[0]}", scale, found[1]))
    return points


def before(base: Image.Image, budget: int) -> bytes:
    """JPEG quality 85 scaled down until it fits: how a shrink was done before."""
    width, height = base.size
    data = _save(base, "JPEG", quality=85)
    for _ in range(SHRINK_STEPS):
        if len(data) <= budget:
            break
        long_edge = max(SHRINK_MIN_EDGE_PX,
                        math.floor(max(width, height) * math.sqrt(budget / len(data)) * 0.95))
        width, height = target_size(base.width, base.height, long_edge)
        data = _save(base.resize((width, height), Image.Resampling.LANCZOS), "JPEG", quality=85)
    return data


def ocr_text(data: bytes, folder: Path) -> str:
    """tesseract's reading of `data`, with page segmentation mode 4 (one column of text of many
    sizes): its default mode read the same screenshot 0.79 at 1097 px wide and 0.96 at 1098 px
    (a region kept or lost), mode 4 0.790 and 0.792."""
    path = folder / "page.png"
    with Image.open(io.BytesIO(data)) as image:
        image.convert("RGB").save(path)
    done = subprocess.run(["tesseract", str(path), "stdout", "--psm", "4"],
                          capture_output=True, text=True, check=True)
    return done.stdout


def read(data: bytes, folder: Path, shown: str) -> float:
    """Character accuracy of tesseract's reading of `data` against the text shown."""
    return accuracy(ocr_text(data, folder), shown)


def mean(values: list[float]) -> float:
    return sum(values) / len(values)


def sent_by_plan(png: bytes, count: int, profile: ClientProfile) -> list[NormalizedImage]:
    """What the gateway sends of the first of `count` such screenshots in one result, through
    the plan a client's reply is made of: the image, or the parts of a page."""
    image = ImageContent(type="image", data=base64.b64encode(png).decode(), mime_type="image/png")
    source = CallToolResult(content=[TextContent(type="text", text="a screenshot"),
                                     *[image] * count])
    plan = anyio.run(functools.partial(plan_for_client, source, language="en",
                                       limits=profile.limits,
                                       result_limits=profile.result_limits))
    return plan.kept if count == 1 else plan.kept[:1]


def described(sent: list[NormalizedImage]) -> str:
    first = sent[0]
    parts = f"{len(sent)} parts of " if len(sent) > 1 else ""
    return (f"{parts}{first.media_type[6:]} {first.width}x{first.height}"
            f"{' illegible' if first.illegible else ''}")


def main() -> None:
    if shutil.which("tesseract") is None:
        print("tesseract is not installed: apt-get install tesseract-ocr (not run)")
        sys.exit(1)
    print(f"means over {len(SEEDS)} seeds")
    print(f"{'screenshot':<22} {'profile':<15} {'budget':>16} {'best':>6} {'ours':>6}"
          f" {'before':>6} {'of best':>7}  what fuseforks sent (per seed)")
    met = True
    with tempfile.TemporaryDirectory() as scratch:
        folder = Path(scratch)
        for kind, (width, height, scale) in KINDS.items():
            for name in PROFILES:
                profile = profile_for(name, "")
                edge = target_size(width, height, profile.limits.max_edge_px)
                for label, budget in budgets(profile):
                    by_point: dict[tuple[str, float], list[float]] = {}
                    ours, then, sent_as = [], [], []
                    for seed in SEEDS:
                        shot, shown = gen.screenshot(width, height, seed=seed, scale=scale)
                        sent = sent_by_plan(gen.encode(shot, "PNG"), count_of(label), profile)
                        whole = len(sent) == 1 and (sent[0].width, sent[0].height) == edge
                        if whole and sent[0].data[12:16] == b"VP8L":
                            break  # fits without loss: nothing to choose
                        base = shot if edge == shot.size else shot.resize(
                            edge, Image.Resampling.LANCZOS)
                        for point, at, data in grid(base, budget):
                            by_point.setdefault((point.split(" q")[0], at), []).append(
                                read(data, folder, shown))
                        ours.append(accuracy("\n".join(ocr_text(image.data, folder)
                                                       for image in sent), shown))
                        then.append(read(before(base, budget), folder, shown))
                        sent_as.append(described(sent))
                    budget_text = f"{label} {budget:,}"
                    if not ours:
                        print(f"{kind:<22} {name:<15} {budget_text:>16}  fits without loss")
                        continue
                    # the best configuration (format and scale, at the highest quality that fits)
                    # over every seed, not the luckiest reading of each seed
                    best = max((mean(values) for values in by_point.values()
                                if len(values) == len(ours)), default=0.0)
                    of_best = mean(ours) / best if best else 1.0
                    if max(best, mean(ours)) < LEGIBLE:
                        sent_as.append("nothing legible reachable")
                    # within 5 % of the best; where nothing legible is reachable, the ratio of two
                    # readings near zero may miss that if every image sent is marked illegible
                    met &= of_best >= GOAL_OF_BEST or (
                        max(best, mean(ours)) < LEGIBLE
                        and all(s.endswith(" illegible") for s in sent_as[:-1]))
                    print(f"{kind:<22} {name:<15} {budget_text:>16} {best:6.3f}"
                          f" {mean(ours):6.3f} {mean(then):6.3f} {of_best:7.3f}"
                          f"  {', '.join(dict.fromkeys(sent_as))}")
                    if (kind.startswith("full page") and name == "claude-code"
                            and count_of(label) == 1):
                        gone = (mean(ours) - mean(then)) / (1 - mean(then))
                        met &= gone >= GOAL_ERROR_GONE
                        print(f"{'':<22} error of before gone: {gone:.0%} (goal"
                              f" {GOAL_ERROR_GONE:.0%})")
    print(f"goal: within {1 - GOAL_OF_BEST:.0%} of the best reachable (where nothing reads"
          f" {LEGIBLE}, or every image marked illegible), half the full page's error gone"
          f" under Claude Code: {'met' if met else 'NOT met'}")


def count_of(label: str) -> int:
    return int(label.split()[0])


if __name__ == "__main__":
    main()
