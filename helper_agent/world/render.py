"""A top-down picture of a scene for people: grid, fixtures, small objects, the agent and its view.

Drawn with Pillow so it needs no display. Fixtures are labelled rectangles; small objects are
numbered dots (hidden ones, inside closed receptacles, in grey) listed by number under the map; the
agent is a triangle pointing where it faces, with its 90 degree view cone. A label is drawn only
where it overlaps no other label (`LabelSpace`): names written beside the dots ran into each other
until a busy counter was unreadable.
"""

from __future__ import annotations

import hashlib
from collections.abc import Mapping
from pathlib import Path

from PIL import Image, ImageDraw, ImageFont

from helper_agent.world.catalog import Catalog, load_catalog
from helper_agent.world.geometry import FORWARD_STEP, INTERACTION_DISTANCE
from helper_agent.world.state import WorldState

CELL_PX = 28
MARGIN = 20
LEGEND_PX = 150


def _colour(name: str) -> tuple[int, int, int]:
    digest = hashlib.md5(name.encode()).digest()
    return (120 + digest[0] % 110, 120 + digest[1] % 110, 120 + digest[2] % 110)


class LabelSpace:
    """Where labels are already drawn: a label that would overlap one is left out."""

    def __init__(self) -> None:
        self.boxes: list[tuple[float, float, float, float]] = []

    def place(self, box: tuple[float, float, float, float]) -> bool:
        """Take `box` (x0, y0, x1, y1) if it overlaps no label placed so far."""
        x0, y0, x1, y1 = box
        if any(x0 < bx1 and bx0 < x1 and y0 < by1 and by0 < y1 for bx0, by0, bx1, by1 in self.boxes):
            return False
        self.boxes.append(box)
        return True


def _text(draw: ImageDraw.ImageDraw, space: LabelSpace, at: tuple[float, float], text: str, font: object,
          fill: tuple[int, int, int]) -> bool:
    x0, y0, x1, y1 = draw.textbbox(at, text, font=font)  # type: ignore[arg-type]
    if not space.place((x0, y0, x1, y1)):
        return False
    draw.text(at, text, fill=fill, font=font)  # type: ignore[arg-type]
    return True


HIGHLIGHT = (214, 0, 110)
TOP_PX = 48
"""A blank band above the room: the web app draws its image label and toolbar over the top of the
picture, and they once hid the top wall and the top row's names."""
LEGEND_FONT_PX = 13
LINE_PX = 18


def _font(size: int) -> ImageFont.ImageFont | ImageFont.FreeTypeFont:
    """Pillow's own font at `size` pixels (needs FreeType; the fixed 9 px bitmap font otherwise)."""
    try:
        return ImageFont.load_default(size=size)
    except (TypeError, ValueError, OSError, ImportError):  # an old Pillow or one built without FreeType
        return ImageFont.load_default()


def _wrap(draw: ImageDraw.ImageDraw, text: str, font: object, width: float) -> list[str]:
    """`text` broken at ", " and spaces into lines no wider than `width` pixels."""
    lines: list[str] = []
    line = ""
    for word in text.split(" "):
        candidate = f"{line} {word}" if line else word
        if line and draw.textlength(candidate, font=font) > width:  # type: ignore[arg-type]
            lines.append(line)
            line = word
        else:
            line = candidate
    return [*lines, line] if line else lines


def _fixture_key(n: int) -> str:
    """A, B, ..., Z, AA, AB, ...: the key of a fixture whose name does not fit its rectangle."""
    key = ""
    n += 1
    while n:
        n, rest = divmod(n - 1, 26)
        key = chr(65 + rest) + key
    return key


def render_top_down(state: WorldState, path: str | Path, catalog: Catalog | None = None,
                    highlight: Mapping[str, str] | None = None) -> Path:
    """Write a PNG of the scene seen from above; returns the path written.

    `highlight` maps object ids to what just happened to them ("moved", "opened", ...): those are
    ringed in magenta and listed under the picture by their number or key, so a person sees which
    cabinet of five was opened. A fixture whose whole name does not fit its rectangle gets a key
    letter there and its name in the legend (names were cut to "Floo" and "CounterTop/Cab")."""
    catalog = catalog or load_catalog()
    highlight = dict(highlight or {})
    path = Path(path)
    width_px = max(state.width * CELL_PX + 2 * MARGIN, 640)
    small = [o for oid, o in state.objects.items() if not o.cells and oid != state.held_id]
    columns = max(1, (width_px - 2 * MARGIN) // 160)
    font = _font(11)
    legend_font = _font(LEGEND_FONT_PX)
    measure = ImageDraw.Draw(Image.new("RGB", (1, 1)))

    # Fixtures: one rectangle per footprint, labelled with every member type.
    footprints: dict[tuple, list[str]] = {}
    members: dict[tuple, list[str]] = {}
    for oid, obj in state.objects.items():
        if obj.cells:
            footprints.setdefault(tuple(sorted(obj.cells)), []).append(obj.object_type)
            members.setdefault(tuple(sorted(obj.cells)), []).append(oid)
    labels = {cells: "/".join(sorted(set(types), key=types.index)) for cells, types in footprints.items()}
    keys: dict[tuple, str] = {}
    for cells, label in labels.items():
        xs, zs = [c[0] for c in cells], [c[1] for c in cells]
        room = (max(xs) - min(xs) + 1) * CELL_PX - 6
        if measure.textlength(label, font=font) > room or any(oid in highlight for oid in members[cells]):
            keys[cells] = _fixture_key(len(keys))
    key_of = {oid: keys[cells] for cells, oids in members.items() if cells in keys for oid in oids}

    # The legend's text first: its height sets the picture's.
    held = state.objects[state.held_id].object_type if state.held_id else "nothing"
    pose = state.agent
    text_width = width_px - 2 * MARGIN
    lines = [
        f"{state.scene_name}  ({state.room_type}, {state.width * 0.25:.2f} m x {state.depth * 0.25:.2f} m)",
        f"agent: cell {pose.cell}, facing {pose.rotation} deg, horizon {pose.horizon}, holding {held}",
        "red triangle: agent; yellow: view within reach; grey dots: hidden in closed receptacles",
        f"objects: {sum(1 for o in state.objects.values() if not o.cells)} small, {len(footprints)} fixture groups",
    ]
    if keys:
        lines += _wrap(measure, "fixtures: " + "; ".join(f"{key} {labels[cells]}" for cells, key in keys.items()),
                       legend_font, text_width)
    numbers = {oid: n for n, oid in enumerate((oid for oid, o in state.objects.items()
                                               if not o.cells and oid != state.held_id), 1)}
    changed_lines: list[str] = []
    if highlight:
        named = []
        for oid, what in highlight.items():
            if oid not in state.objects:
                continue
            mark = f" {key_of[oid]}" if oid in key_of else f" #{numbers[oid]}" if oid in numbers else ""
            named.append(f"{state.objects[oid].object_type}{mark} {what}")
        changed_lines = _wrap(measure, "changed (magenta): " + "; ".join(named), legend_font, text_width)
    height_px = (TOP_PX + state.depth * CELL_PX + 2 * MARGIN + (len(lines) + len(changed_lines)) * LINE_PX + 10
                 + LINE_PX * (-(-len(small) // columns)))
    height_px = max(height_px, TOP_PX + state.depth * CELL_PX + 2 * MARGIN + LEGEND_PX)
    image = Image.new("RGB", (width_px, height_px), (250, 250, 246))
    draw = ImageDraw.Draw(image)
    space = LabelSpace()
    top = MARGIN + TOP_PX

    def to_px(i: float, j: float) -> tuple[float, float]:
        # Row 0 at the bottom so that +z points up on the picture.
        return (MARGIN + i * CELL_PX, top + (state.depth - 1 - j) * CELL_PX)

    for i in range(state.width):
        for j in range(state.depth):
            x, y = to_px(i, j)
            fill = (225, 225, 220) if state.blocked[i, j] else (255, 255, 255)
            draw.rectangle([x, y, x + CELL_PX, y + CELL_PX], fill=fill, outline=(235, 235, 230))
    draw.rectangle([MARGIN, top, MARGIN + state.width * CELL_PX, top + state.depth * CELL_PX], outline=(40, 40, 40), width=3)

    for cells, types in footprints.items():
        xs = [c[0] for c in cells]
        zs = [c[1] for c in cells]
        x0, y0 = to_px(min(xs), max(zs))
        x1, y1 = to_px(max(xs) + 1, min(zs) - 1)
        draw.rectangle([x0 + 1, y0 + 1, x1 - 1, y1 - 1], fill=_colour(types[0]), outline=(60, 60, 60))
        changed = any(oid in highlight for oid in members[cells])
        _text(draw, space, (x0 + 3, y0 + 3), keys.get(cells, labels[cells]), font,
              HIGHLIGHT if changed else (20, 20, 20))
        if changed:
            draw.rectangle([x0 - 2, y0 - 2, x1 + 2, y1 + 2], outline=HIGHLIGHT, width=3)

    # Small objects: dots near their fixture, offset so they do not overlap; all dots first, then
    # the numbers where they cover no dot and no other label (numbers drawn between dots hid them).
    hidden_colour = (150, 150, 150)
    per_cell: dict[tuple[int, int], int] = {}
    numbered: list[str] = []
    dots: list[tuple[str, float, float, bool]] = []
    for oid, obj in state.objects.items():
        if obj.cells or oid == state.held_id:
            continue
        # Draw small things on the footprint of the fixture they are in (positions of real
        # AI2-THOR receptacles can lie off our grid), else at their own cell.
        root = next((state.objects[p] for p in reversed(state.ancestors(oid)) if state.objects[p].cells), None)
        if root is not None:
            i, j = sorted(root.cells)[len(root.cells) // 2]
        else:
            i, j = state.cell_of(obj.position[0], obj.position[2])
            i, j = min(max(i, 0), state.width - 1), min(max(j, 0), state.depth - 1)
        slot = per_cell.get((i, j), 0)
        per_cell[(i, j)] = slot + 1
        x, y = to_px(i, j)
        x += 4 + (slot % 3) * 9
        y += 4 + (slot // 3) * 9
        hidden = any(
            catalog.get(state.objects[p].object_type).openable and not state.objects[p].is_open
            for p in state.ancestors(oid)
        )
        draw.ellipse([x, y, x + 7, y + 7], fill=hidden_colour if hidden else _colour(obj.object_type), outline=(30, 30, 30))
        space.place((x, y, x + 7, y + 7))
        numbered.append(f"{numbers[oid]} {obj.object_type}" + (" (hidden)" if hidden else ""))
        if oid in highlight:
            draw.ellipse([x - 4, y - 4, x + 11, y + 11], outline=HIGHLIGHT, width=3)
        dots.append((oid, x, y, hidden))
    for oid, x, y, hidden in sorted(dots, key=lambda d: d[0] not in highlight):  # the changed ones first
        colour = HIGHLIGHT if oid in highlight else (90, 90, 90) if hidden else (10, 10, 10)
        ring = 4 if oid in highlight else 0  # clear of the magenta ring
        wide = draw.textlength(str(numbers[oid]), font=font)
        for at in ((x + 9 + ring, y - 3), (x - 3 - ring - wide, y - 3), (x, y - 13 - ring), (x, y + 9 + ring)):
            if _text(draw, space, at, str(numbers[oid]), font, colour):
                break

    # The agent and its view cone.
    cx, cy = to_px(pose.i + 0.5, pose.j - 0.5)
    di, dj = FORWARD_STEP[pose.rotation]
    reach = INTERACTION_DISTANCE / 0.25 * CELL_PX
    fx, fy = cx + di * reach, cy - dj * reach
    lx, ly = cx + (di - dj) * reach, cy - (dj + di) * reach
    rx, ry = cx + (di + dj) * reach, cy - (dj - di) * reach
    cone = Image.new("RGBA", image.size, (0, 0, 0, 0))
    ImageDraw.Draw(cone).polygon([(cx, cy), (lx, ly), (fx, fy), (rx, ry)], fill=(255, 200, 0, 60))
    room_box = (MARGIN, top, MARGIN + state.width * CELL_PX, top + state.depth * CELL_PX)
    cone = cone.crop(room_box)  # the view stops at the walls
    image.paste(cone, room_box[:2], cone)
    draw = ImageDraw.Draw(image)
    tip = (cx + di * CELL_PX * 0.45, cy - dj * CELL_PX * 0.45)
    left = (cx - dj * CELL_PX * 0.3 - di * CELL_PX * 0.3, cy - di * CELL_PX * 0.3 + dj * CELL_PX * 0.3)
    right = (cx + dj * CELL_PX * 0.3 - di * CELL_PX * 0.3, cy + di * CELL_PX * 0.3 + dj * CELL_PX * 0.3)
    draw.polygon([tip, left, right], fill=(220, 40, 40), outline=(0, 0, 0))

    # Legend.
    ly0 = top + state.depth * CELL_PX + MARGIN
    for n, line in enumerate(lines):
        draw.text((MARGIN, ly0 + n * LINE_PX), line, fill=(20, 20, 20), font=legend_font)
    for n, line in enumerate(changed_lines, len(lines)):
        draw.text((MARGIN, ly0 + n * LINE_PX), line, fill=HIGHLIGHT, font=legend_font)
    listed = ly0 + (len(lines) + len(changed_lines)) * LINE_PX + 10  # the small objects by number
    for n, entry in enumerate(numbered):
        draw.text((MARGIN + (n % columns) * 160, listed + (n // columns) * LINE_PX), entry[:22], fill=(20, 20, 20),
                  font=legend_font)
    path.parent.mkdir(parents=True, exist_ok=True)
    image.save(path)
    return path
