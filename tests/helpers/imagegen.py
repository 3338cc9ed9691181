"""Images built in code for the image tests and benchmarks: no binary fixtures in the repository.

Every generator is deterministic (seeded), so sizes and digests are the same on every run.
"""

from __future__ import annotations

import io
import random
import struct
import zlib

from PIL import Image, ImageDraw

_BINARY = bytes(255 if x & 1 else 0 for x in range(256))


def encode(im: Image.Image, fmt: str, **params: object) -> bytes:
    out = io.BytesIO()
    im.save(out, fmt, **params)
    return out.getvalue()


def photo(width: int, height: int, mode: str = "RGB", seed: int = 0) -> Image.Image:
    """A photo-like picture: smooth gradients, shapes and mild noise, so codecs behave as on photos."""
    rnd = random.Random(seed)
    base = Image.linear_gradient("L").resize((width, height))
    red = Image.radial_gradient("L").resize((width, height))
    noise = Image.frombytes("L", (width, height), rnd.randbytes(width * height))
    blue = Image.blend(base, noise, 0.15)
    im = Image.merge("RGB", (red, base.transpose(Image.Transpose.ROTATE_180), blue))
    draw = ImageDraw.Draw(im)
    for _ in range(12):
        x, y = rnd.randrange(width), rnd.randrange(height)
        r = rnd.randrange(max(2, min(width, height) // 8))
        draw.ellipse((x - r, y - r, x + r, y + r), fill=tuple(rnd.randrange(256) for _ in range(3)))
    return im.convert(mode) if mode != "RGB" else im


def binary_noise(width: int, height: int, seed: int = 0) -> Image.Image:
    """Every channel of every pixel 0 or 255 at random: about the worst case for JPEG size."""
    raw = random.Random(seed).randbytes(width * height * 3).translate(_BINARY)
    return Image.frombytes("RGB", (width, height), raw)


def full_noise(width: int, height: int, seed: int = 0) -> Image.Image:
    """Each channel near 0 or near 255 at random, in 64 levels: too many colours to be a graphic,
    and the worst case for JPEG size."""
    rnd = random.Random(seed)
    count = width * height * 3
    binary = rnd.randbytes(count).translate(_BINARY)
    jitter = rnd.randbytes(count).translate(bytes(x & 31 for x in range(256)))
    raw = (int.from_bytes(binary, "big") ^ int.from_bytes(jitter, "big")).to_bytes(count, "big")
    return Image.frombytes("RGB", (width, height), raw)


def png_text_over(size: int) -> object:
    """PNG text chunks of `size` bytes: a PNG made larger than the pass-through size, unchanged."""
    from PIL.PngImagePlugin import PngInfo

    info = PngInfo()
    info.add_text("Comment", "x" * size)
    return info


def solid(width: int, height: int, colour: tuple[int, ...], mode: str = "RGB") -> Image.Image:
    return Image.new(mode, (width, height), colour)


def jpeg(width: int, height: int, quality: int = 90, seed: int = 0, **params: object) -> bytes:
    return encode(photo(width, height, seed=seed), "JPEG", quality=quality, **params)


def pad_jpeg(data: bytes, size: int) -> bytes:
    """The same JPEG grown to exactly `size` bytes with COM segments right after SOI."""
    missing = size - len(data)
    if missing < 0:
        raise ValueError(f"JPEG is already {len(data)} bytes, more than {size}")
    segments = []
    while missing:
        if missing < 4:
            raise ValueError("cannot pad by fewer than 4 bytes; pad the previous segment instead")
        payload = min(missing - 4, 65_533)
        if 0 < missing - 4 - payload < 4:
            payload -= 4
        segments.append(b"\xff\xfe" + struct.pack(">H", payload + 2) + b"\x00" * payload)
        missing -= payload + 4
    return data[:2] + b"".join(segments) + data[2:]


def with_jpeg_frame_size(data: bytes, width: int, height: int) -> bytes:
    """A JPEG whose frame header declares another size (the scan is left as it was)."""
    pos = 2
    while True:
        marker = data[pos + 1]
        (length,) = struct.unpack_from(">H", data, pos + 2)
        if 0xC0 <= marker <= 0xC2:
            frame = pos + 5
            return data[:frame] + struct.pack(">HH", height, width) + data[frame + 4 :]
        pos += 2 + length


def with_stray_bytes_after_app0(data: bytes, stray: bytes = b"\x00\x01\x02") -> bytes:
    """A JPEG with bytes between two segments: libjpeg skips them with a warning."""
    (length,) = struct.unpack_from(">H", data, 4)
    at = 4 + length
    return data[:at] + stray + data[at:]


def png_chunk(ctype: bytes, body: bytes) -> bytes:
    crc = zlib.crc32(ctype + body)
    return struct.pack(">I", len(body)) + ctype + body + struct.pack(">I", crc)


def png_declaring(width: int, height: int) -> bytes:
    """A tiny PNG whose IHDR declares `width` x `height` (RGB, 8 bit) and whose IDAT is one row."""
    ihdr = struct.pack(">IIBBBBB", width, height, 8, 2, 0, 0, 0)
    idat = zlib.compress(b"\x00" + b"\x80" * 3 * min(width, 64))
    return (
        b"\x89PNG\r\n\x1a\n"
        + png_chunk(b"IHDR", ihdr)
        + png_chunk(b"IDAT", idat)
        + png_chunk(b"IEND", b"")
    )


def corrupt_png_chunk_crc(data: bytes, ctype: bytes) -> bytes:
    """The PNG with the CRC of its first `ctype` chunk inverted."""
    at = data.index(ctype)
    (length,) = struct.unpack_from(">I", data, at - 4)
    crc_at = at + 4 + length
    return data[:crc_at] + bytes(b ^ 0xFF for b in data[crc_at : crc_at + 4]) + data[crc_at + 4 :]


def exif_with_orientation(orientation: int) -> bytes:
    exif = Image.Exif()
    exif[0x0112] = orientation
    return exif.tobytes()


def animated_webp(width: int, height: int, colours: list[tuple[int, int, int]]) -> bytes:
    frames = [solid(width, height, c) for c in colours]
    return encode(
        frames[0], "WEBP", save_all=True, append_images=frames[1:], duration=100, lossless=True
    )


def _s15f16(value: float) -> bytes:
    return struct.pack(">i", round(value * 65536))


def swapped_primaries_icc() -> bytes:
    """A minimal ICC v2 RGB matrix profile whose red and green colorants are sRGB's green and red.

    Pixels tagged with it mean the opposite of their numbers, so a conversion to sRGB is visible:
    (255, 0, 0) under this profile is sRGB green.
    """
    srgb_d50 = {
        "r": (0.4361, 0.2225, 0.0139),
        "g": (0.3851, 0.7169, 0.0971),
        "b": (0.1431, 0.0606, 0.7141),
    }

    def xyz(values: tuple[float, float, float]) -> bytes:
        return b"XYZ \x00\x00\x00\x00" + b"".join(_s15f16(v) for v in values)

    linear = b"curv\x00\x00\x00\x00\x00\x00\x00\x00"  # no entries: identity
    tags = [
        (b"wtpt", xyz((0.9642, 1.0, 0.8249))),
        (b"rXYZ", xyz(srgb_d50["g"])),
        (b"gXYZ", xyz(srgb_d50["r"])),
        (b"bXYZ", xyz(srgb_d50["b"])),
        (b"rTRC", linear),
        (b"gTRC", linear),
        (b"bTRC", linear),
    ]
    table_size = 4 + 12 * len(tags)
    offset = 128 + table_size
    table = struct.pack(">I", len(tags))
    body = b""
    for signature, data in tags:
        table += signature + struct.pack(">II", offset + len(body), len(data))
        body += data + b"\x00" * (-len(data) % 4)
    total = 128 + table_size + len(body)
    header = (
        struct.pack(">I", total)
        + b"\x00" * 4
        + b"\x02\x10\x00\x00"
        + b"mntrRGB XYZ "
        + b"\x00" * 12
        + b"acsp"
        + b"\x00" * 24
        + b"\x00\x00\x00\x00"
        + _s15f16(0.9642)
        + _s15f16(1.0)
        + _s15f16(0.8249)
        + b"\x00" * 48
    )
    assert len(header) == 128, len(header)
    return header + table + body


SCREEN_WORDS = ["account", "settings", "profile", "privacy", "security", "notifications", "billing", "invoice", "payment", "method", "update", "save", "cancel", "delete", "confirm", "search", "results", "filter", "sort", "name", "date", "size", "status", "active", "pending", "archived", "project", "dashboard", "overview", "reports", "analytics", "users", "groups", "permissions", "network", "storage", "backup", "restore", "schedule", "weekly", "monthly", "export", "import", "download", "upload", "message", "inbox", "draft", "sent", "folder", "label", "priority", "owner", "created", "modified", "version", "history"]


def screenshot(width: int, height: int, seed: int = 0, scale: float = 1.0) -> tuple[Image.Image, str]:
    """A UI-like screenshot with text (title bar, sidebar, a table, buttons) and the text it shows,
    line by line. Pillow's bundled font, so it renders the same on every machine; `scale` sizes
    the text (1.0: 15 px body text, as a desktop UI at 1x)."""
    from PIL import ImageFont

    rnd = random.Random(seed)
    im = Image.new("RGB", (width, height), (246, 247, 249))
    draw = ImageDraw.Draw(im)
    body = ImageFont.load_default(size=round(15 * scale))
    title = ImageFont.load_default(size=round(20 * scale))
    lines: list[str] = []
    bar = round(44 * scale)
    draw.rectangle((0, 0, width, bar), fill=(36, 41, 51))
    heading = "Project dashboard - " + " ".join(rnd.sample(SCREEN_WORDS, 2))
    draw.text((round(16 * scale), round(10 * scale)), heading, font=title, fill=(255, 255, 255))
    lines.append(heading)
    side = round(220 * scale)
    draw.rectangle((0, bar, side, height), fill=(230, 233, 238))
    draw.line((side, bar, side, height), fill=(200, 204, 210), width=1)
    step = round(30 * scale)
    y = bar + round(16 * scale)
    for _ in range(min(12, (height - y) // step)):
        item = " ".join(rnd.sample(SCREEN_WORDS, 2)).capitalize()
        draw.text((round(16 * scale), y), item, font=body, fill=(40, 44, 52))
        lines.append(item)
        y += step
    x0 = side + round(24 * scale)
    y = bar + round(20 * scale)
    accent = [(37, 99, 235), (22, 163, 74), (220, 38, 38)]
    for index, colour in enumerate(accent):
        left = x0 + index * round(130 * scale)
        draw.rounded_rectangle((left, y, left + round(116 * scale), y + round(32 * scale)),
                               radius=round(6 * scale), fill=colour)
        label = rnd.choice(SCREEN_WORDS).capitalize()
        draw.text((left + round(14 * scale), y + round(7 * scale)), label, font=body,
                  fill=(255, 255, 255))
        lines.append(label)
    y += round(56 * scale)
    row = round(28 * scale)
    while y + row < height - round(10 * scale):
        if (y // row) % 2:
            draw.rectangle((x0 - 8, y - 4, width - 16, y + row - 4), fill=(255, 255, 255))
        words = rnd.sample(SCREEN_WORDS, rnd.randrange(4, 9))
        text = " ".join(words) + f" {rnd.randrange(1, 9999)}"
        draw.text((x0, y), text, font=body, fill=(31, 35, 40))
        lines.append(text)
        y += row
    return im, "\n".join(lines)


def desktop_screenshot(width: int, height: int, seed: int = 0) -> Image.Image:
    """A desktop screenshot: a photo wallpaper, window chrome, panels and many lines of small
    text, the kind of picture screenshot tools return (as heavy as a real one: several MB of PNG
    at 4K)."""
    rnd = random.Random(seed)
    im = photo(width, height, seed=seed)
    draw = ImageDraw.Draw(im)
    draw.rectangle((0, 0, width, max(24, height // 40)), fill=(48, 52, 63))
    panels = [(width // 20, height // 10, width // 3, height * 9 // 10),
              (width * 2 // 5, height // 8, width * 19 // 20, height * 3 // 5)]
    for left, top, right, bottom in panels:
        draw.rectangle((left + 8, top + 8, right - 8, bottom - 8), fill=(255, 255, 255),
                       outline=(200, 204, 212))
        y = top + 20
        while y < bottom - 30:
            words = " ".join(rnd.choice(("fuseforks", "gateway", "image", "tool", "result",
                                         "screenshot", "pixels", "client", "MCP", "1568"))
                             for _ in range(rnd.randrange(3, 12)))
            draw.text((left + 24, y), words, fill=(30, 30, 30))
            y += 18
    return im
