"""Draws the extension's icon (media/icon.png, 128x128): a green loop arrow around a check mark.

Run from vscode-extension/: `python3 scripts/make-icon.py` (needs Pillow). Drawn at 4x and
scaled down, so the edges are smooth; the PNG is committed, this script is how it was made.
"""

import math
from pathlib import Path

from PIL import Image, ImageDraw

SIZE = 128
SCALE = 4
GREEN = (46, 160, 67, 255)
DARK = (22, 27, 34, 255)
WHITE = (255, 255, 255, 255)


def draw() -> Image.Image:
    s = SIZE * SCALE
    image = Image.new("RGBA", (s, s), (0, 0, 0, 0))
    pen = ImageDraw.Draw(image)
    pen.rounded_rectangle((0, 0, s - 1, s - 1), radius=28 * SCALE, fill=DARK)
    # The loop: an open ring (a gap at the upper right), with an arrow head closing it.
    box = (20 * SCALE, 20 * SCALE, 108 * SCALE, 108 * SCALE)
    pen.arc(box, start=-20, end=290, fill=GREEN, width=12 * SCALE)
    # Arrow head at the ring's end (290 degrees clockwise from 3 o'clock), pointing along the turn.
    angle = math.radians(290)
    radius = (44 - 6) * SCALE  # the ring's centre line
    end = (64 * SCALE + radius * math.cos(angle), 64 * SCALE + radius * math.sin(angle))
    along = (-math.sin(angle), math.cos(angle))  # direction of travel (clockwise, y down)
    across = (math.cos(angle), math.sin(angle))
    head, half = 20 * SCALE, 15 * SCALE
    pen.polygon(
        [
            (end[0] + along[0] * head, end[1] + along[1] * head),
            (end[0] + across[0] * half, end[1] + across[1] * half),
            (end[0] - across[0] * half, end[1] - across[1] * half),
        ],
        fill=GREEN,
    )
    # The check mark: the tests pass.
    pen.line(
        [(44 * SCALE, 66 * SCALE), (58 * SCALE, 80 * SCALE), (86 * SCALE, 50 * SCALE)],
        fill=WHITE,
        width=12 * SCALE,
        joint="curve",
    )
    return image.resize((SIZE, SIZE), Image.LANCZOS)


def main() -> None:
    out = Path(__file__).resolve().parent.parent / "media" / "icon.png"
    out.parent.mkdir(parents=True, exist_ok=True)
    draw().save(out, optimize=True)
    print(out)


if __name__ == "__main__":
    main()
