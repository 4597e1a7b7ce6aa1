"""A small inline SVG line chart (no JavaScript, no library): benchmark ratio over nightly runs."""

from __future__ import annotations

from html import escape


def ratio_chart(points: list[tuple[str, float]], width: int = 260, height: int = 64) -> str:
    """SVG markup: one point per run (hover shows run id and ratio); a dashed line at ratio 1
    (the reference's speed) so faster and slower read at a glance."""
    if not points:
        return ""
    pad_l, pad_r, pad_t, pad_b = 34, 8, 6, 14
    values = [v for _, v in points]
    lo, hi = min(values + [1.0]), max(values + [1.0])
    if hi - lo < 1e-9:
        lo, hi = lo * 0.9, hi * 1.1 + 1e-9
    span = hi - lo
    lo, hi = max(0.0, lo - 0.08 * span), hi + 0.08 * span
    inner_w, inner_h = width - pad_l - pad_r, height - pad_t - pad_b

    def x(i: int) -> float:
        return pad_l + (inner_w * i / (len(points) - 1) if len(points) > 1 else inner_w / 2)

    def y(v: float) -> float:
        return pad_t + inner_h * (1 - (v - lo) / (hi - lo))

    parts = [f'<svg class="chart" xmlns="http://www.w3.org/2000/svg" width="{width}" height="{height}" '
             f'viewBox="0 0 {width} {height}" role="img" aria-label="ratio over {len(points)} nightly runs">',
             f'<line class="axis" x1="{pad_l}" y1="{pad_t}" x2="{pad_l}" y2="{height - pad_b}"/>',
             f'<line class="unity" x1="{pad_l}" y1="{y(1.0):.1f}" x2="{width - pad_r}" y2="{y(1.0):.1f}"/>',
             f'<text class="tick" x="{pad_l - 3}" y="{y(hi) + 8:.1f}" text-anchor="end">{hi:.2g}</text>',
             f'<text class="tick" x="{pad_l - 3}" y="{y(lo):.1f}" text-anchor="end">{lo:.2g}</text>',
]
    if min(abs(y(1.0) - y(hi)), abs(y(1.0) - y(lo))) > 9:  # label the unity line where it does not collide
        parts.append(f'<text class="tick" x="{pad_l - 3}" y="{y(1.0) + 3:.1f}" text-anchor="end">1</text>')
    if len(points) > 1:
        path = " ".join(f"{x(i):.1f},{y(v):.1f}" for i, (_, v) in enumerate(points))
        parts.append(f'<polyline class="line" points="{path}"/>')
    for i, (label, v) in enumerate(points):
        parts.append(f'<circle class="pt" cx="{x(i):.1f}" cy="{y(v):.1f}" r="2.5"><title>{escape(label)}: '
                     f'{v:.3g}x</title></circle>')
    parts.append(f'<text class="tick" x="{pad_l}" y="{height - 2}">{escape(points[0][0])}</text>')
    if len(points) > 1:
        parts.append(f'<text class="tick" x="{width - pad_r}" y="{height - 2}" text-anchor="end">'
                     f'{escape(points[-1][0])}</text>')
    parts.append("</svg>")
    return "".join(parts)
