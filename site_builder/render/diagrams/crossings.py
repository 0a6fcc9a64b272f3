"""Edge crossings of a drawing, counted the same way for every engine.

A crossing is a pair of edges whose routed paths intersect (background
tech-due-diligence §3 counts the same proxy). Each path is flattened: lines stay lines,
and every cubic Bézier, whether ours or Graphviz's spline, is sampled at SAMPLES equal
parameter steps. Edges that share a node are not compared: they meet at that node by
construction, and where exactly their ends touch depends only on port placement.
"""

from __future__ import annotations

from typing import Sequence

from .geometry import Drawing, Point, Route
from .neighbourhood import Edge

__all__ = ["flatten", "count_crossings", "crossing_pairs", "polylines_intersect", "SAMPLES"]

SAMPLES = 16


def flatten(route: Route, samples: int = SAMPLES) -> list[Point]:
    """The route as a polyline."""
    points = [route.start]
    px, py = route.start
    for seg in route.segments:
        if len(seg) == 1:
            points.append(seg[0])
        else:
            (ax, ay), (bx, by), (ex, ey) = seg
            for k in range(1, samples + 1):
                t = k / samples
                u = 1 - t
                c0, c1, c2, c3 = u * u * u, 3 * u * u * t, 3 * u * t * t, t * t * t
                points.append((c0 * px + c1 * ax + c2 * bx + c3 * ex,
                               c0 * py + c1 * ay + c2 * by + c3 * ey))
        px, py = points[-1]
    return points


def _orient(ax: float, ay: float, bx: float, by: float, cx: float, cy: float) -> float:
    return (bx - ax) * (cy - ay) - (by - ay) * (cx - ax)


def _segments_intersect(p1: Point, p2: Point, q1: Point, q2: Point) -> bool:
    (ax, ay), (bx, by), (cx, cy), (dx, dy) = p1, p2, q1, q2
    d1 = _orient(cx, cy, dx, dy, ax, ay)
    d2 = _orient(cx, cy, dx, dy, bx, by)
    d3 = _orient(ax, ay, bx, by, cx, cy)
    d4 = _orient(ax, ay, bx, by, dx, dy)
    if ((d1 > 0 > d2) or (d1 < 0 < d2)) and ((d3 > 0 > d4) or (d3 < 0 < d4)):
        return True

    def on(ox, oy, ex, ey, px, py) -> bool:
        return min(ox, ex) <= px <= max(ox, ex) and min(oy, ey) <= py <= max(oy, ey)

    return ((d1 == 0 and on(cx, cy, dx, dy, ax, ay)) or (d2 == 0 and on(cx, cy, dx, dy, bx, by))
            or (d3 == 0 and on(ax, ay, bx, by, cx, cy)) or (d4 == 0 and on(ax, ay, bx, by, dx, dy)))


def _bbox(points: Sequence[Point]) -> tuple[float, float, float, float]:
    xs = [p[0] for p in points]
    ys = [p[1] for p in points]
    return min(xs), min(ys), max(xs), max(ys)


def polylines_intersect(a: Sequence[Point], b: Sequence[Point]) -> bool:
    """True when two polylines share a point."""
    ax0, ay0, ax1, ay1 = _bbox(a)
    bx0, by0, bx1, by1 = _bbox(b)
    if ax1 < bx0 or bx1 < ax0 or ay1 < by0 or by1 < ay0:
        return False
    segs_b = []
    for q1, q2 in zip(b, b[1:]):
        if max(q1[0], q2[0]) >= ax0 and min(q1[0], q2[0]) <= ax1 and \
                max(q1[1], q2[1]) >= ay0 and min(q1[1], q2[1]) <= ay1:
            segs_b.append((q1, q2, min(q1[0], q2[0]), max(q1[0], q2[0]),
                           min(q1[1], q2[1]), max(q1[1], q2[1])))
    if not segs_b:
        return False
    for p1, p2 in zip(a, a[1:]):
        x0, x1 = min(p1[0], p2[0]), max(p1[0], p2[0])
        y0, y1 = min(p1[1], p2[1]), max(p1[1], p2[1])
        for q1, q2, qx0, qx1, qy0, qy1 in segs_b:
            if qx1 < x0 or x1 < qx0 or qy1 < y0 or y1 < qy0:
                continue
            if _segments_intersect(p1, p2, q1, q2):
                return True
    return False


def crossing_pairs(drawing: Drawing, edges: Sequence[Edge]) -> list[tuple[int, int]]:
    """Index pairs (i < j) of edges whose paths cross, edges sharing a node left out."""
    lines = [flatten(r) for r in drawing.routes]
    boxes = [_bbox(line) for line in lines]
    found = []
    for i in range(len(edges)):
        ei, (ix0, iy0, ix1, iy1) = edges[i], boxes[i]
        for j in range(i + 1, len(edges)):
            ej = edges[j]
            if ei.source in (ej.source, ej.target) or ei.target in (ej.source, ej.target):
                continue
            jx0, jy0, jx1, jy1 = boxes[j]
            if ix1 < jx0 or jx1 < ix0 or iy1 < jy0 or jy1 < iy0:
                continue
            if polylines_intersect(lines[i], lines[j]):
                found.append((i, j))
    return found


def count_crossings(drawing: Drawing, edges: Sequence[Edge]) -> int:
    """How many pairs of edges cross in a drawing."""
    return len(crossing_pairs(drawing, edges))
