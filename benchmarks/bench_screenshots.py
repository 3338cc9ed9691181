"""Are screenshots still legible after normalization? OCR accuracy and bytes, JPEG q85 vs fuseforks.

UI-like screenshots with text (title bar, sidebar, buttons, a table; `tests.helpers.imagegen.
screenshot`, Pillow's bundled font, so every machine renders the same pixels) are made at 1568 px
— the long edge a model gets — and at twice that (a 2x screen, which normalization scales down).
Each is read by tesseract three times: the original pixels (at 1568 px: the 2x render scaled
down with LANCZOS, unencoded), that image as JPEG quality 85 (what every PNG became before), and
what `normalize_image` sends for the screenshot given as a PNG. Character accuracy is
1 - Levenshtein(OCR text, shown text) / len(shown text), whitespace runs collapsed.

The goal: what fuseforks sends reads at least 99 % as well as the original, in at most 1.5 times
the JPEG's bytes.

Needs tesseract on PATH, from the distribution's packages (`apt-get install tesseract-ocr`):
this benchmark installs nothing itself, and says so and stops when tesseract is missing.
"""

from __future__ import annotations

import io
import re
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

from PIL import Image

from fuseforks.core.media import JPEG_QUALITY, MAX_EDGE_PX
from fuseforks.images.normalize import normalize_image
from fuseforks.images.types import NormalizedImage
from tests.helpers import imagegen as gen

SEEDS = range(4)
GOAL_ACCURACY = 0.99
GOAL_BYTES = 1.5


def levenshtein(a: str, b: str) -> int:
    previous = list(range(len(b) + 1))
    for i, char in enumerate(a, 1):
        current = [i]
        for j, other in enumerate(b, 1):
            current.append(min(previous[j] + 1, current[j - 1] + 1,
                               previous[j - 1] + (char != other)))
        previous = current
    return previous[-1]


def words(text: str) -> str:
    return re.sub(r"\s+", " ", text).strip()


def accuracy(read: str, shown: str) -> float:
    truth = words(shown)
    return max(0.0, 1 - levenshtein(words(read), truth) / len(truth))


def ocr(image: Image.Image, folder: Path) -> str:
    path = folder / "page.png"
    image.convert("RGB").save(path)
    done = subprocess.run(["tesseract", str(path), "stdout"], capture_output=True, text=True,
                          check=True)
    return done.stdout


def jpeg(image: Image.Image) -> bytes:
    out = io.BytesIO()
    image.convert("RGB").save(out, "JPEG", quality=JPEG_QUALITY)
    return out.getvalue()


def decoded(data: bytes) -> Image.Image:
    with Image.open(io.BytesIO(data)) as image:
        return image.convert("RGB")


def main() -> None:
    if shutil.which("tesseract") is None:
        print("tesseract is not installed: apt-get install tesseract-ocr (not run)")
        sys.exit(1)
    rows = []
    with tempfile.TemporaryDirectory() as scratch:
        folder = Path(scratch)
        for scale, label in ((1.0, "1568 px"), (2.0, "2x, scaled to 1568 px")):
            for seed in SEEDS:
                width, height = round(MAX_EDGE_PX * scale), round(980 * scale)
                shot, shown = gen.screenshot(width, height, seed=seed, scale=scale)
                original = shot if scale == 1.0 else shot.resize(
                    (MAX_EDGE_PX, 980), Image.Resampling.LANCZOS)
                sent = normalize_image(gen.encode(shot, "PNG"))
                assert isinstance(sent, NormalizedImage)
                as_jpeg = jpeg(original)
                rows.append((
                    label, seed, sent.path, sent.media_type,
                    accuracy(ocr(original, folder), shown),
                    accuracy(ocr(decoded(as_jpeg), folder), shown), len(as_jpeg),
                    accuracy(ocr(decoded(sent.data), folder), shown), sent.size,
                ))
    print(f"{'screenshot':<24} {'seed':>4} {'sent as':<24} {'orig acc':>8} {'JPEG acc':>8}"
          f" {'JPEG B':>8} {'sent acc':>8} {'sent B':>8} {'acc/orig':>8} {'B/JPEG':>7}")
    met = True
    for label, seed, path, media, original, at_jpeg, jpeg_bytes, at_sent, sent_bytes in rows:
        relative, ratio = at_sent / original, sent_bytes / jpeg_bytes
        met &= relative >= GOAL_ACCURACY and ratio <= GOAL_BYTES
        print(f"{label:<24} {seed:>4} {path + ' ' + media:<24} {original:8.4f} {at_jpeg:8.4f}"
              f" {jpeg_bytes:8,} {at_sent:8.4f} {sent_bytes:8,} {relative:8.4f} {ratio:7.2f}")
    print(f"goal: accuracy >= {GOAL_ACCURACY:.0%} of the original's at <= {GOAL_BYTES}x the"
          f" JPEG's bytes: {'met' if met else 'NOT met'}")


if __name__ == "__main__":
    main()
