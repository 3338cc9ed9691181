"""Image normalization against its floors and the naive Pillow path, side by side.

Every comparison runs both sides interleaved in one process on the same generated input, and the
best of several runs is kept (the machine is shared; the minimum is the least disturbed figure).

Peak memory is measured per input in a fresh process: the input is written by one child, then a
small child starts a grandchild that normalizes it and reads `RUSAGE_CHILDREN.ru_maxrss` — Linux
carries a process's peak RSS across fork and exec, so a child of this (large) process would
report this process's peak, not its own.
"""

from __future__ import annotations

import base64
import binascii
import hashlib
import io
import math
import os
import resource
import subprocess
import sys
import tempfile
import time
import tracemalloc
from collections.abc import Awaitable, Callable
from pathlib import Path

import anyio
import anyio.to_thread
from PIL import Image, ImageChops, ImageStat

from fuseforks.core.media import DECODE_MAX_PIXELS, ENGINE_LIMITS, WEBP_DECODE_MAX_PIXELS
from fuseforks.images.normalize import (
    normalize_image,
    normalize_result_images,
    normalize_result_images_async,
)
from fuseforks.images.types import NormalizedImage
from tests.helpers import imagegen as gen

MIB = 1024 * 1024


def best_of(runs: int, *functions: Callable[[], object]) -> list[float]:
    """Seconds of the fastest run of each function, the functions interleaved run by run."""
    best = [math.inf] * len(functions)
    for _ in range(runs):
        for i, function in enumerate(functions):
            start = time.perf_counter()
            function()
            best[i] = min(best[i], time.perf_counter() - start)
    return best


def ms(seconds: float) -> str:
    return f"{seconds * 1000:8.2f} ms"


def verdict(ok: bool) -> str:
    return "ok" if ok else "MISSED"


def psnr(a: Image.Image, b: Image.Image) -> float:
    diff = ImageChops.difference(a.convert("RGB"), b.convert("RGB"))
    mse = sum(v * v for v in ImageStat.Stat(diff).rms) / 3
    return math.inf if mse == 0 else 10 * math.log10(255 * 255 / mse)


def kept(result: object) -> NormalizedImage:
    assert isinstance(result, NormalizedImage), result
    return result


def bench_bomb() -> None:
    """First, so the process's peak RSS has not yet been raised by the large images below."""
    bomb = gen.png_declaring(100_000, 100_000)
    bomb_b64 = base64.b64encode(bomb).decode()
    rss_before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    tracemalloc.start()
    result = normalize_image(bomb_b64)
    _, peak = tracemalloc.get_traced_memory()
    tracemalloc.stop()
    rss_growth = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss - rss_before  # KiB
    (seconds,) = best_of(50, lambda: normalize_image(bomb_b64))
    assert getattr(result, "reason", None) == "too_large", result
    print("bomb: PNG declaring 100,000 x 100,000 px, given as base64")
    print(f"  rejected as too_large in {ms(seconds)}  (goal < 5 ms: {verdict(seconds < 0.005)})")
    print(
        f"  extra memory: traced peak {peak / 1024:.1f} KiB, peak RSS growth {rss_growth} KiB"
        f"  (goal < 5 MB: {verdict(peak < 5 * MIB and rss_growth < 5 * 1024)})"
    )


_MAKE = r"""
import sys
from PIL import Image
kind, width, height, path = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), sys.argv[4]
grey = Image.linear_gradient("L").resize((width, height))
if kind == "jpeg":
    grey.save(path, "JPEG", quality=90)
    sys.exit()
rgb = Image.merge("RGB", (grey, grey.transpose(Image.Transpose.ROTATE_90), grey))
if kind == "palette png":
    rgb.convert("P").save(path, "PNG", compress_level=1, transparency=0)
elif kind == "rgba png":
    rgb.putalpha(grey)
    rgb.save(path, "PNG", compress_level=1)
elif kind == "rgba webp":
    rgb.putalpha(grey)
    rgb.save(path, "WEBP", quality=50)
"""

_NORMALIZE = r"""
import sys
from fuseforks.images.normalize import normalize_image
result = normalize_image(open(sys.argv[1], "rb").read())
print(getattr(result, "path", None) or f"dropped {result.reason}: {result.detail}")
"""

_MEASURE = r"""
import resource, subprocess, sys
out = subprocess.run([sys.executable, "-c", sys.argv[1], sys.argv[2]], check=True,
                     capture_output=True, text=True).stdout.strip()
print(resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss, out)
"""


def peak_rss(kind: str, width: int, height: int, folder: Path) -> tuple[float, str, float]:
    """(peak RSS in MB of one normalization in a fresh process, its outcome, its seconds)."""
    path = folder / f"{kind.replace(' ', '_')}_{width}x{height}"
    subprocess.run([sys.executable, "-c", _MAKE, kind, str(width), str(height), str(path)],
                   check=True)
    started = time.perf_counter()
    line = subprocess.run([sys.executable, "-c", _MEASURE, _NORMALIZE, str(path)], check=True,
                          capture_output=True, text=True).stdout.split(maxsplit=1)
    seconds = time.perf_counter() - started
    return int(line[0]) / 1024, line[1].strip(), seconds


def bench_peak_memory() -> None:
    """The worst accepted inputs under the decode budget, and a JPEG of the largest legal edge."""
    side = int(DECODE_MAX_PIXELS**0.5)
    webp_side = int(WEBP_DECODE_MAX_PIXELS**0.5)
    cases = [
        ("rgba png", side, side),
        ("palette png", side, side),
        ("rgba webp", webp_side, webp_side),
        ("jpeg", 16_384, 16_384),
    ]
    print("peak memory: one normalization in a fresh process (interpreter included)")
    worst = 0.0
    with tempfile.TemporaryDirectory() as folder:
        for kind, width, height in cases:
            megabytes, outcome, seconds = peak_rss(kind, width, height, Path(folder))
            worst = max(worst, megabytes)
            print(f"  {kind:12} {width}x{height} ({width * height / 1e6:5.1f} MP)"
                  f"  peak RSS {megabytes:6.0f} MB  {seconds:5.1f} s  {outcome}")
    print(f"  worst accepted input: {worst:.0f} MB  (goal < 500 MB: {verdict(worst < 500)})")
    legal = gen.png_declaring(16_384, 16_384)
    (seconds,) = best_of(50, lambda: normalize_image(legal))
    result = normalize_image(legal)
    print(f"  16384x16384 PNG (legal edge, 268 MP): {getattr(result, 'detail', result)}"
          f" in {ms(seconds)}")


def bench_pass_through() -> None:
    noise = Image.frombytes("RGB", (1568, 1568), os.urandom(1568 * 1568 * 3))
    jpeg = gen.encode(noise, "JPEG", quality=85)
    text = base64.b64encode(jpeg).decode()
    assert kept(normalize_image(text)).path == "pass_through"

    def floor() -> str:
        return hashlib.sha256(binascii.a2b_base64(text)).hexdigest()

    ours, bottom = best_of(30, lambda: normalize_image(text), floor)
    ratio = ours / bottom
    print(f"pass-through: {len(jpeg) / 1e6:.2f} MB 1568x1568 JPEG as base64")
    print(f"  normalize_image       {ms(ours)}")
    print(f"  floor (b64 + sha256)  {ms(bottom)}")
    print(f"  ratio {ratio:.2f}x  (goal <= 1.25x: {verdict(ratio <= 1.25)})")


def naive_jpeg(data: bytes) -> bytes:
    """What a Pillow user writes first: full decode, thumbnail LANCZOS, save q85."""
    im = Image.open(io.BytesIO(data))
    im.load()
    im.thumbnail((1568, 1568), Image.Resampling.LANCZOS)
    out = io.BytesIO()
    im.convert("RGB").save(out, "JPEG", quality=85)
    return out.getvalue()


def bench_large_jpeg() -> None:
    jpeg = gen.encode(gen.photo(4000, 3000), "JPEG", quality=92)
    ours, naive = best_of(5, lambda: normalize_image(jpeg), lambda: naive_jpeg(jpeg))
    ratio = ours / naive
    ours_image = Image.open(io.BytesIO(kept(normalize_image(jpeg)).data))
    naive_image = Image.open(io.BytesIO(naive_jpeg(jpeg)))
    assert ours_image.size == naive_image.size == (1568, 1176), (ours_image.size, naive_image.size)
    quality = psnr(ours_image, naive_image)
    print(f"re-encode: 4000x3000 JPEG ({len(jpeg) / 1e6:.2f} MB) -> 1568x1176 JPEG q85")
    print(f"  normalize_image (draft to 1/2, LANCZOS)   {ms(ours)}")
    print(f"  naive Pillow (decode, thumbnail, save)    {ms(naive)}")
    print(f"  ratio {ratio:.2f}x  (goal <= 0.5x: {verdict(ratio <= 0.5)})")
    print(
        f"  PSNR against the naive output {quality:.1f} dB  (goal >= 33 dB: {verdict(quality >= 33)})"
    )


def rgba_photo(width: int, height: int) -> Image.Image:
    im = gen.photo(width, height).convert("RGBA")
    alpha = Image.radial_gradient("L").resize((width, height))
    im.putalpha(alpha)
    return im


def decode_only(data: bytes) -> None:
    im = Image.open(io.BytesIO(data))
    im.load()


def reference_flatten(data: bytes) -> Image.Image:
    """The slow, obviously right way: full-size flatten on white, then LANCZOS."""
    im = Image.open(io.BytesIO(data))
    im.load()
    background = Image.new("RGB", im.size, (255, 255, 255))
    background.paste(im, mask=im)
    return background.resize((1568, 1176), Image.Resampling.LANCZOS)


def bench_rgba_png() -> None:
    png = gen.encode(rgba_photo(4000, 3000), "PNG")
    result = kept(normalize_image(png))
    assert result.path == "re_encoded"
    ours, decode = best_of(7, lambda: normalize_image(png), lambda: decode_only(png))
    ratio = ours / decode
    quality = psnr(Image.open(io.BytesIO(result.data)), reference_flatten(png))
    print(f"re-encode: 4000x3000 RGBA PNG ({len(png) / 1e6:.2f} MB) -> 1568x1176 JPEG on white")
    print(f"  normalize_image   {ms(ours)}")
    print(f"  decode only       {ms(decode)}")
    print(f"  ratio {ratio:.2f}x  (goal <= 1.6x: {verdict(ratio <= 1.6)})")
    print(f"  PSNR against full-size flatten + LANCZOS (before JPEG) {quality:.1f} dB")


def machine_parallelism(cores: int) -> float:
    """How much faster `cores` GIL-free threads finish than one after another, right now.

    The control for the concurrency figure: the machine is shared, and when other work holds the
    cores no thread pool can beat serial. SHA-256 of a large buffer releases the GIL.
    """
    buffer = os.urandom(32 * MIB)

    def hash_once() -> None:
        hashlib.sha256(buffer).digest()

    def threaded() -> None:
        async def run() -> None:
            async with anyio.create_task_group() as group:
                for _ in range(cores):
                    group.start_soon(anyio.to_thread.run_sync, hash_once)

        anyio.run(run)

    serial, parallel = best_of(3, lambda: [hash_once() for _ in range(cores)], threaded)
    return serial / parallel


async def inline(pngs: list[str]) -> object:
    return normalize_result_images(pngs, ENGINE_LIMITS)


async def loop_stall(work: Callable[[], Awaitable[object]]) -> float:
    """Longest gap between 1 ms ticks of another task while `work` runs: how blocked the loop was."""
    longest = 0.0
    done = anyio.Event()

    async def ticker() -> None:
        nonlocal longest
        last = time.perf_counter()
        while not done.is_set():
            await anyio.sleep(0.001)
            now = time.perf_counter()
            longest = max(longest, now - last)
            last = now

    async with anyio.create_task_group() as group:
        group.start_soon(ticker)
        await anyio.sleep(0.01)
        await work()
        done.set()
    return longest


def bench_concurrency() -> None:
    pngs = [base64.b64encode(gen.encode(rgba_photo(3000, 2000), "PNG")).decode() for _ in range(4)]
    usable = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count()
    cores = usable or 1

    def four_at_once() -> None:
        result = anyio.run(normalize_result_images_async, pngs, ENGINE_LIMITS)
        assert len(result.kept) == 4

    def four_in_a_row() -> None:
        for text in pngs:
            kept(normalize_image(text))

    control = machine_parallelism(cores)
    one, concurrent, serial = best_of(
        3, lambda: kept(normalize_image(pngs[0])), four_at_once, four_in_a_row
    )
    control_after = machine_parallelism(cores)
    gap_threads = anyio.run(loop_stall, lambda: normalize_result_images_async(pngs, ENGINE_LIMITS))
    gap_inline = anyio.run(loop_stall, lambda: inline(pngs))
    expected = math.ceil(4 / cores)
    print(f"concurrency: 4 RGBA PNGs 3000x2000 as base64, {cores} cores usable")
    print(f"  one image                       {ms(one)}")
    print(f"  four, async in worker threads   {ms(concurrent)}  = {concurrent / one:.2f}x one")
    print(f"  four, one after another         {ms(serial)}  = {serial / one:.2f}x one")
    print(f"  speed-up of threads over serial {serial / concurrent:.2f}x")
    print(
        f"  control: {cores} threads of SHA-256 ran {control:.2f}x / {control_after:.2f}x"
        f" faster than serial (before / after); {cores:.0f}x means the cores were free"
    )
    print(f"  expected about ceil(4 / cores) = {expected}x one on free cores")
    print(
        f"  event loop: longest stall {ms(gap_threads)} with worker threads,"
        f" {ms(gap_inline)} if normalized on the loop"
    )


def main() -> None:
    bench_bomb()
    bench_peak_memory()
    bench_pass_through()
    bench_large_jpeg()
    bench_rgba_png()
    bench_concurrency()


if __name__ == "__main__":
    main()
