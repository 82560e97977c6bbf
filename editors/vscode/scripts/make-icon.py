"""Draw images/icon.png (128×128): a memory note on an indigo tile.

Standard library only (zlib + struct write the PNG), so anyone can redraw it:
    python3 scripts/make-icon.py
Shapes are sampled 4×4 per pixel for smooth edges.
"""

from __future__ import annotations

import struct
import zlib
from pathlib import Path

SIZE = 128
SAMPLES = 4
TILE = (59, 74, 155)  # indigo
NOTE = (250, 250, 247)
INK = (59, 74, 155)
SPARK = (255, 183, 3)  # the "recalled" highlight


def rounded_rect(x: float, y: float, box: tuple[float, float, float, float], r: float) -> bool:
    left, top, right, bottom = box
    if not (left <= x <= right and top <= y <= bottom):
        return False
    cx = min(max(x, left + r), right - r)
    cy = min(max(y, top + r), bottom - r)
    return (x - cx) ** 2 + (y - cy) ** 2 <= r * r


def color_at(x: float, y: float) -> tuple[int, int, int, int]:
    """The colour of the point (x, y), transparent outside the tile."""
    if not rounded_rect(x, y, (4, 4, 124, 124), 24):
        return (0, 0, 0, 0)
    # The note: a sheet with its top-right corner folded.
    if rounded_rect(x, y, (30, 22, 98, 106), 6) and (x - 78) - (y - 22) < 0:
        for top in (44, 58, 72):  # three lines of text
            if rounded_rect(x, y, (42, top, 86 if top != 72 else 70, top + 6), 3):
                return (*INK, 255)
        if (x - 80) ** 2 + (y - 90) ** 2 <= 8**2:
            return (*SPARK, 255)
        return (*NOTE, 255)
    # The fold itself, a shade darker.
    if 78 <= x <= 98 and 22 <= y <= 42 and (x - 78) - (y - 22) >= 0:
        return (214, 217, 232, 255)
    return (*TILE, 255)


def render() -> bytes:
    rows = []
    for py in range(SIZE):
        row = bytearray([0])  # PNG filter: none
        for px in range(SIZE):
            acc = [0, 0, 0, 0]
            for sy in range(SAMPLES):
                for sx in range(SAMPLES):
                    r, g, b, a = color_at(px + (sx + 0.5) / SAMPLES, py + (sy + 0.5) / SAMPLES)
                    acc[0] += r * a
                    acc[1] += g * a
                    acc[2] += b * a
                    acc[3] += a
            alpha = acc[3]
            rgb = [round(c / alpha) if alpha else 0 for c in acc[:3]]
            row += bytes([*rgb, round(alpha / SAMPLES**2)])
        rows.append(bytes(row))

    def chunk(kind: bytes, data: bytes) -> bytes:
        return (
            struct.pack(">I", len(data)) + kind + data + struct.pack(">I", zlib.crc32(kind + data))
        )

    header = struct.pack(">IIBBBBB", SIZE, SIZE, 8, 6, 0, 0, 0)  # 8-bit RGBA
    return (
        b"\x89PNG\r\n\x1a\n"
        + chunk(b"IHDR", header)
        + chunk(b"IDAT", zlib.compress(b"".join(rows), 9))
        + chunk(b"IEND", b"")
    )


if __name__ == "__main__":
    out = Path(__file__).resolve().parents[1] / "images" / "icon.png"
    out.parent.mkdir(exist_ok=True)
    out.write_bytes(render())
    print(f"wrote {out}")
