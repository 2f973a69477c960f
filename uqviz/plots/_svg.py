"""A small SVG Axes: the explorers' views as SVG markup, drawn in about a millisecond.

matplotlib's Agg needs 50-60 ms for the simplest figure of the explorers' size (its Tick
objects, text layout and rasterisation; ``benchmarks/bench_explorer_update.py --parts``),
which alone exceeds issue 25's budget of 100 ms from a change to the painted figure. The
explorers therefore draw their three views as SVG, the browser rasterising it:
``local_svg`` (:mod:`uqviz.plots.conditional`), ``before_after_svg``
(:mod:`uqviz.plots.recalibration`) and ``reference_distribution_svg``
(:mod:`uqviz.plots.reference`), each next to its matplotlib twin. What the figure shows is
matplotlib's choice, reused, not re-invented:

- the axis limits follow matplotlib's autoscaling (data limits, ``nonsingular``, 5 % margins
  in the scale's space);
- the ticks are those of matplotlib's locators (``MaxNLocator`` with the steps of
  ``AutoLocator``, ``LogLocator``), their labels those of matplotlib's formatters
  (``ScalarFormatter``, the log formatters) on a dummy axis;
- colours, line widths, marker sizes, tick directions and the grid are those of
  :data:`uqviz.plots._style.STYLE`, in points converted at the figure's dpi.

Tests (``tests/plots/test_svg.py``) compare limits, ticks, labels and the drawn data with the
matplotlib Axes of the same view. Mathematical text is the subset of mathtext the plots' labels
use (italic letters, sub- and superscripts, a few symbols): :func:`math_runs`.
"""

from __future__ import annotations

import html
import re

import numpy as np

from uqviz.plots._style import PlainLogFormatter, plain_log_labels

#: fonts of the SVG text (matplotlib's default family first)
FONT_FAMILY = "DejaVu Sans, Bitstream Vera Sans, Verdana, Arial, Helvetica, sans-serif"
#: greek letters and symbols of mathtext the labels use
SYMBOLS = {
    "langle": "\u27e8",
    "rangle": "\u27e9",
    "pm": "\u00b1",
    "times": "\u00d7",
    "cdot": "\u00b7",
    "sqrt": "\u221a",
    "infty": "\u221e",
    "leq": "\u2264",
    "geq": "\u2265",
    "approx": "\u2248",
    "sim": "\u223c",
    "to": "\u2192",
    "mid": "|",
    ",": "\u2009",
    ";": "\u2005",
    " ": " ",
    "%": "%",
    "$": "$",
    "_": "_",
    "{": "{",
    "}": "}",
    "minus": "\u2212",
    "prime": "\u2032",
    "ell": "\u2113",
}
GREEK = dict(
    zip(
        [
            "alpha",
            "beta",
            "gamma",
            "delta",
            "epsilon",
            "zeta",
            "eta",
            "theta",
            "kappa",
            "lambda",
            "mu",
            "nu",
            "xi",
            "pi",
            "rho",
            "sigma",
            "tau",
            "phi",
            "chi",
            "psi",
            "omega",
            "Gamma",
            "Delta",
            "Theta",
            "Lambda",
            "Xi",
            "Pi",
            "Sigma",
            "Phi",
            "Psi",
            "Omega",
            "varepsilon",
        ],
        "\u03b1\u03b2\u03b3\u03b4\u03b5\u03b6\u03b7\u03b8\u03ba\u03bb\u03bc\u03bd\u03be\u03c0\u03c1"
        "\u03c3\u03c4\u03c6\u03c7\u03c8\u03c9\u0393\u0394\u0398\u039b\u039e\u03a0\u03a3\u03a6\u03a8"
        "\u03a9\u03b5",
    )
)
#: commands whose argument is upright text
UPRIGHT = {"mathdefault", "mathrm", "rm", "text", "mathregular", "operatorname"}
_TOKEN = re.compile(r"\\([A-Za-z]+|.)|(.)", re.S)


def math_runs(text):
    """``text`` (matplotlib's mathtext subset) as runs ``(string, italic, level)``.

    ``$...$`` is mathematics: letters italic, ``_``/``^`` lower/raise one level
    (``level`` -1/+1 per step), ``\\mathdefault{...}``/``\\mathrm{...}`` upright, the
    commands of :data:`SYMBOLS` and :data:`GREEK` as their characters; ``\\$`` is a dollar.

    Examples
    --------
    >>> math_runs(r"LZMS, $\\langle Z^2 \\rangle$ per bin")
    [('LZMS, ⟨', False, 0), ('Z', True, 0), ('2', False, 1), ('⟩ per bin', False, 0)]
    >>> math_runs("$u_E$ [eV]")
    [('u', True, 0), ('E', True, -1), (' [eV]', False, 0)]
    """
    runs = []
    parts = re.split(r"(?<!\\)\$", text)
    if len(parts) % 2 == 0:  # an odd number of $: matplotlib shows the text as it is
        parts = [text]
    for i, part in enumerate(parts):
        if i % 2 == 0:
            _add(runs, part.replace("\\$", "$"), False, 0)
        else:
            tokens = _TOKEN.findall(part)
            _math(tokens[::-1], runs, 0, True)
    return runs


def _add(runs, s, italic, level):
    if not s:
        return
    if runs and runs[-1][1:] == (italic, level):
        runs[-1] = (runs[-1][0] + s, italic, level)
    else:
        runs.append((s, italic, level))


def _math(stack, runs, level, italic, one=False):
    """Consume tokens (reversed list ``stack``) until a closing brace (or one atom)."""
    while stack:
        cmd, ch = stack.pop()
        if ch == "}":
            return
        if ch == "{":
            _math(stack, runs, level, italic)
        elif ch in ("_", "^"):
            _math(stack, runs, level + (-1 if ch == "_" else 1), italic, one=True)
        elif cmd in UPRIGHT:
            _math(stack, runs, level, False, one=True)
        elif cmd:
            _add(runs, SYMBOLS.get(cmd, GREEK.get(cmd, cmd)), False, level)
        elif ch == " ":
            continue
        else:
            _add(runs, "\u2212" if ch == "-" else ch, italic and ch.isalpha(), level)
        if one:
            return


def svg_text(x, y, text, size, *, anchor="start", rotate=None, color="#000000"):
    """A ``<text>`` at ``(x, y)`` (its baseline) of ``size`` px, mathtext rendered in tspans."""
    spans, offset = [], 0.0
    for s, italic, level in math_runs(text):
        shift = -0.42 * level * size if level > 0 else -0.24 * level * size
        attrs = []
        if italic:
            attrs.append('font-style="italic"')
        if level:
            attrs.append(f'font-size="{size * 0.7 ** abs(level):.1f}"')
        if shift != offset:
            attrs.append(f'dy="{shift - offset:.2f}"')
            offset = shift
        spans.append(
            f"<tspan {' '.join(attrs)}>{html.escape(s, quote=False)}</tspan>"
            if attrs
            else html.escape(s, quote=False)
        )
    transform = f' transform="rotate({rotate} {x:.2f} {y:.2f})"' if rotate else ""
    return (
        f'<text x="{x:.2f}" y="{y:.2f}" font-size="{size:.2f}" text-anchor="{anchor}" '
        f'fill="{color}"{transform}>{"".join(spans)}</text>'
    )


def autoscale(values, log=False, margin=0.05):
    """matplotlib's automatic view limits of data spanning ``values`` (finite ones).

    The linear locator's ``nonsingular`` limits, widened by ``margin`` of their span on each
    side in the scale's space (log10 for a log axis), as ``Axes.autoscale_view`` with
    ``axes.xmargin`` 0.05.

    Examples
    --------
    >>> [round(v, 6) for v in autoscale([0.0, 1.0])]
    [-0.05, 1.05]
    """
    from matplotlib.ticker import MaxNLocator

    v = np.asarray(values, dtype=float)
    v = v[np.isfinite(v) & ((v > 0) if log else True)]
    if v.size == 0:
        return (1.0, 10.0) if log else (0.0, 1.0)
    lo, hi = float(v.min()), float(v.max())
    if log:
        a, b = np.log10(lo), np.log10(hi)
        if a == b:  # LogLocator.nonsingular: the decades below and above
            a, b = np.ceil(a) - 1.0, np.floor(b) + 1.0
        d = (b - a) * margin
        return 10.0 ** (a - d), 10.0 ** (b + d)
    lo, hi = MaxNLocator().nonsingular(lo, hi)  # the linear axes' locator's
    d = (hi - lo) * margin
    return lo - d, hi + d


def ticks(lo, hi, *, log=False, nbins=9, plain_log=True):
    """Major and minor ticks of a view ``(lo, hi)`` with their labels, as matplotlib draws them.

    Returns
    -------
    (list of (float, str), list of (float, str), str)
        Major ticks, minor ticks (log axis only), the offset text of a linear axis.

    Examples
    --------
    >>> major, minor, offset = ticks(0.0, 1.0)
    >>> [s for _, s in major], minor, offset
    (['0.0', '0.2', '0.4', '0.6', '0.8', '1.0'], [], '')
    """
    from matplotlib import ticker

    if not log:
        locs = ticker.MaxNLocator(nbins=nbins, steps=[1, 2, 2.5, 5, 10]).tick_values(lo, hi)
        major = _in_view(locs, lo, hi, log)
        fmt = ticker.ScalarFormatter()
        labels = _format(fmt, major, lo, hi)
        return list(zip(major, labels)), [], fmt.get_offset()
    nbins = max(nbins, 2)  # the log axes' numticks: the tick space clipped to [2, 9]
    major = _in_view(ticker.LogLocator(numticks=nbins).tick_values(lo, hi), lo, hi, log)
    minor = _in_view(
        ticker.LogLocator(subs="auto", numticks=nbins).tick_values(lo, hi), lo, hi, log
    )
    tol = (np.log10(hi) - np.log10(lo)) * 1e-5
    minor = (
        [m for m in minor if not np.any(np.abs(np.log10(m) - np.log10(major)) < tol)]
        if major
        else minor
    )
    kind = (
        (lambda: PlainLogFormatter(labelOnlyBase=False))
        if plain_log
        else (lambda: ticker.LogFormatterSciNotation(labelOnlyBase=False))
    )
    return (
        list(zip(major, _format(kind(), major, lo, hi))),
        list(zip(minor, _format(kind(), minor, lo, hi))),
        "",
    )


def _in_view(locs, lo, hi, log):
    t = np.log10 if log else (lambda v: np.asarray(v, dtype=float))
    a, b = t(lo), t(hi)
    tol = abs(b - a) * 1e-10
    return [float(v) for v in locs if (not log or v > 0) and a - tol <= t(v) <= b + tol]


def _format(fmt, locs, lo, hi):
    fmt.create_dummy_axis()
    fmt.axis.set_view_interval(lo, hi)
    fmt.axis.set_data_interval(lo, hi)
    return list(fmt.format_ticks(locs)) if len(locs) else []


class SvgAxes:
    """One Axes in a figure of fixed margins, drawn as SVG markup (:meth:`svg`).

    Parameters
    ----------
    figsize : (float, float)
        Inches.
    margins : dict
        ``left``, ``bottom``, ``right``, ``top`` in inches.
    label_offsets : dict
        ``x``: the x label's top below the axes; ``y``: the y label's left edge from the
        figure's left edge (inches).
    dpi : float, default 100

    Examples
    --------
    >>> ax = SvgAxes((5, 3), dict(left=0.8, bottom=0.5, right=0.3, top=0.3), dict(x=0.27, y=0.06))
    >>> ax.hline(1.0, color="#333333", dash=True)
    >>> ax.errorbar([1, 2], [1.1, 0.9], [0.9, 0.7], [1.3, 1.1], color="#1f77b4", label="valid")
    >>> ax.svg().startswith("<svg")
    True
    """

    def __init__(self, figsize, margins, label_offsets, dpi=100):
        self.dpi = float(dpi)
        self.width, self.height = figsize[0] * self.dpi, figsize[1] * self.dpi
        m = {k: v * self.dpi for k, v in margins.items()}
        self.box = (m["left"], m["top"], self.width - m["right"], self.height - m["bottom"])
        self.label_offsets = {k: v * self.dpi for k, v in label_offsets.items()}
        self.items, self.legend_items = [], []
        self.data_x, self.data_y = [], []
        self.xlim = self.ylim = None
        self.log_x = self.plain_log = False
        self.title = self.xlabel = self.ylabel = ""
        self.show_legend, self.legend_title, self.legend_size = False, None, 8.0

    def pt(self, points):
        """Points in pixels at the figure's dpi."""
        return points * self.dpi / 72.0

    # ------------------------------------------------------------------ artists
    def hline(self, y, *, color, lw=1.0, dash=False, alpha=1.0, label=None, zorder=1):
        """A horizontal line across the axes (``axhline``); its y counts in the y limits."""
        self.data_y.append([y])
        self.items.append((zorder, "hline", dict(y=y, color=color, lw=lw, dash=dash, alpha=alpha)))
        self.legend_entry(label, "line", color=color, lw=lw, dash=dash)

    def vline(self, x, *, color, lw=1.0, label=None, zorder=2):
        """A vertical line across the axes (``axvline``); its x counts in the x limits."""
        self.data_x.append([x])
        self.items.append((zorder, "vline", dict(x=x, color=color, lw=lw)))
        self.legend_entry(label, "line", color=color, lw=lw, dash=False)

    def vspan(self, x0, x1, *, color, alpha, label=None, zorder=1):
        """A band between ``x0`` and ``x1`` over the axes' height (``axvspan``)."""
        self.data_x.append([x0, x1])
        self.items.append((zorder, "vspan", dict(x0=x0, x1=x1, color=color, alpha=alpha)))
        self.legend_entry(label, "patch", color=color, alpha=alpha)

    def errorbar(
        self,
        x,
        y,
        lo,
        hi,
        *,
        color,
        lw=1.0,
        ms=3.0,
        fill=True,
        alpha=1.0,
        marker=True,
        label=None,
        zorder=3,
    ):
        """Vertical intervals ``[lo, hi]`` at ``x`` with a circle at ``y`` (``errorbar``)."""
        x, y, lo, hi = (np.asarray(v, dtype=float) for v in (x, y, lo, hi))
        self.data_x.append(x)
        self.data_y.extend([lo, hi, y])
        self.items.append(
            (zorder, "errorbar", dict(x=x, y=y, lo=lo, hi=hi, color=color, lw=lw, alpha=alpha))
        )
        if marker:
            self.markers(x, y, color=color, ms=ms, fill=fill, zorder=zorder + 0.5)
        self.legend_entry(
            label, "errorbar" if marker else "line", color=color, lw=lw, ms=ms, dash=False
        )

    def markers(self, x, y, *, color, ms=4.0, fill=True, label=None, zorder=3):
        """Circles of diameter ``ms`` points (open ones filled white when ``fill`` is False)."""
        x, y = np.asarray(x, dtype=float), np.asarray(y, dtype=float)
        self.data_x.append(x)
        self.data_y.append(y)
        self.items.append((zorder, "markers", dict(x=x, y=y, color=color, ms=ms, fill=fill)))
        self.legend_entry(label, "marker", color=color, ms=ms, fill=fill)

    def interval(self, lo, hi, y, *, color, lw=1.5, ms=8.0, label=None, zorder=3):
        """A horizontal segment ``[lo, hi]`` at ``y`` with bars at its ends (``"-|"``)."""
        self.data_x.append([lo, hi])
        self.items.append((zorder, "interval", dict(lo=lo, hi=hi, y=y, color=color, lw=lw, ms=ms)))
        self.legend_entry(label, "interval", color=color, lw=lw)

    def stairs(self, values, edges, *, color, label=None, zorder=1):
        """A filled step outline of ``values`` between ``edges`` from 0 (``stairs``)."""
        values, edges = np.asarray(values, dtype=float), np.asarray(edges, dtype=float)
        self.data_x.append(edges)
        self.data_y.append(np.append(values, 0.0))
        self.items.append((zorder, "stairs", dict(values=values, edges=edges, color=color)))
        self.legend_entry(label, "patch", color=color, alpha=1.0)

    def legend(self, *, title=None, size=8.0):
        """Show the legend right of the axes, its top at the axes' top (``"outside"``)."""
        self.legend_title, self.legend_size, self.show_legend = title, size, True

    def legend_entry(self, label, kind, **style):
        """An entry of the legend: ``kind`` "line", "errorbar", "marker", "patch" or
        "interval" drawn in ``style`` (``color``, ``lw``, ``ms``, ``fill``, ``alpha``, ``dash``)."""
        if label is not None:
            self.legend_items.append((kind, style, label))

    # ------------------------------------------------------------------ drawing
    def limits(self):
        """The view ``(xlim, ylim)``: those set, else matplotlib's autoscaling of the data."""
        xs = np.concatenate([np.ravel(v) for v in self.data_x]) if self.data_x else []
        ys = np.concatenate([np.ravel(v) for v in self.data_y]) if self.data_y else []
        return (self.xlim or autoscale(xs, log=self.log_x), self.ylim or autoscale(ys))

    def svg(self):
        """The figure as one ``<svg>`` element (a standalone SVG document)."""
        (x0, x1), (y0, y1) = self.limits()
        left, top, right, bottom = self.box
        fx = np.log10 if self.log_x else (lambda v: np.asarray(v, dtype=float))
        a, b = fx(x0), fx(x1)
        self.tx = lambda v: left + (fx(np.asarray(v, dtype=float)) - a) / (b - a) * (right - left)
        self.ty = lambda v: bottom - (np.asarray(v, dtype=float) - y0) / (y1 - y0) * (bottom - top)
        out = [
            f'<svg xmlns="http://www.w3.org/2000/svg" width="{self.width:.0f}" '
            f'height="{self.height:.0f}" viewBox="0 0 {self.width:.0f} {self.height:.0f}" '
            f'font-family="{FONT_FAMILY}">',
            f'<rect width="{self.width:.0f}" height="{self.height:.0f}" fill="#ffffff"/>',
            f'<clipPath id="axes"><rect x="{left:.2f}" y="{top:.2f}" '
            f'width="{right - left:.2f}" height="{bottom - top:.2f}"/></clipPath>',
        ]
        xt = ticks(
            x0, x1, log=self.log_x, nbins=self._nbins(right - left, 3), plain_log=self.plain_log
        )
        yt = ticks(y0, y1, nbins=self._nbins(bottom - top, 2))
        # the grid above patches and below lines (matplotlib's axes.axisbelow "line": 1.5)
        grid = (1.5, "grid", dict(xmajor=xt[0], ymajor=yt[0]))
        out.append('<g clip-path="url(#axes)">')
        for zorder, kind, kw in sorted(self.items + [grid], key=lambda item: item[0]):
            out.append(getattr(self, f"_draw_{kind}")(**kw))
        out.append("</g>")
        out += self._frame_and_ticks(xt, yt)
        out += self._labels()
        if self.show_legend and self.legend_items:
            out += self._draw_legend()
        out.append("</svg>")
        return "".join(out)

    def _nbins(self, length_px, per_label):
        # matplotlib's AutoLocator: max(min(axis length / (label size x 3 or 2), 9), 1)
        return int(max(min(np.floor(length_px * 72 / self.dpi / (10.0 * per_label)), 9), 1))

    def _stroke(self, color, lw, alpha=1.0, dash=False):
        s = f'stroke="{color}" stroke-width="{self.pt(lw):.2f}" fill="none"'
        if alpha < 1:
            s += f' stroke-opacity="{alpha:g}"'
        if dash:  # matplotlib's "--": 3.7 on, 1.6 off, times the line width (points)
            s += f' stroke-dasharray="{self.pt(3.7 * lw):.2f},{self.pt(1.6 * lw):.2f}"'
        return s

    def _draw_grid(self, xmajor, ymajor):
        left, top, right, bottom = self.box
        d = [f"M{self.tx(v):.2f} {top:.2f}V{bottom:.2f}" for v, _ in xmajor]
        d += [f"M{left:.2f} {self.ty(v):.2f}H{right:.2f}" for v, _ in ymajor]
        return f'<path d="{"".join(d)}" {self._stroke("#b0b0b0", 0.8, 0.3)}/>' if d else ""

    def _frame_and_ticks(self, xt, yt):
        left, top, right, bottom = self.box
        fs = self.pt(10.0)
        out, d = [], []
        for ticks_, length in ((xt[0], 3.5), (xt[1], 2.0)):
            for v, _ in ticks_:
                x = self.tx(v)
                d.append(
                    f"M{x:.2f} {bottom:.2f}v{-self.pt(length):.2f}"
                    f"M{x:.2f} {top:.2f}v{self.pt(length):.2f}"
                )
        for v, _ in yt[0]:
            y = self.ty(v)
            d.append(
                f"M{left:.2f} {y:.2f}h{self.pt(3.5):.2f}M{right:.2f} {y:.2f}h{-self.pt(3.5):.2f}"
            )
        out.append(f'<path d="{"".join(d)}" {self._stroke("#000000", 0.8)}/>')
        out.append(
            f'<rect x="{left:.2f}" y="{top:.2f}" width="{right - left:.2f}" '
            f'height="{bottom - top:.2f}" {self._stroke("#000000", 0.8)}/>'
        )
        pad = self.pt(3.5)
        for v, s in xt[0] + xt[1]:
            if s:
                out.append(svg_text(self.tx(v), bottom + pad + 0.76 * fs, s, fs, anchor="middle"))
        for v, s in yt[0]:
            if s:
                out.append(svg_text(left - pad, self.ty(v) + 0.36 * fs, s, fs, anchor="end"))
        if xt[2]:
            out.append(svg_text(right, bottom + pad + 1.9 * fs, xt[2], fs, anchor="end"))
        if yt[2]:
            out.append(svg_text(left, top - 0.3 * fs, yt[2], fs))
        return out

    def _labels(self):
        left, top, right, bottom = self.box
        fs = self.pt(10.0)
        out = []
        if self.xlabel:
            out.append(
                svg_text(
                    (left + right) / 2,
                    bottom + self.label_offsets["x"] + 0.76 * fs,
                    self.xlabel,
                    fs,
                    anchor="middle",
                )
            )
        if self.ylabel:
            x, y = self.label_offsets["y"] + 0.76 * fs, (top + bottom) / 2
            out.append(svg_text(x, y, self.ylabel, fs, anchor="middle", rotate=-90))
        if self.title:
            out.append(
                svg_text(
                    (left + right) / 2,
                    top - self.pt(4.0) - 0.22 * self.pt(9.0),
                    self.title,
                    self.pt(9.0),
                    anchor="middle",
                )
            )
        return out

    # one method per artist kind: the markup of the data (clipped to the axes)
    def _draw_hline(self, y, color, lw, dash, alpha):
        left, _, right, _ = self.box
        yy = self.ty(y)
        stroke = self._stroke(color, lw, alpha, dash)
        return f'<path d="M{left:.2f} {yy:.2f}H{right:.2f}" {stroke}/>'

    def _draw_vline(self, x, color, lw):
        _, top, _, bottom = self.box
        xx = self.tx(x)
        return f'<path d="M{xx:.2f} {top:.2f}V{bottom:.2f}" {self._stroke(color, lw)}/>'

    def _draw_vspan(self, x0, x1, color, alpha):
        _, top, _, bottom = self.box
        a, b = sorted((float(self.tx(x0)), float(self.tx(x1))))
        return (
            f'<rect x="{a:.2f}" y="{top:.2f}" width="{b - a:.2f}" height="{bottom - top:.2f}" '
            f'fill="{color}" fill-opacity="{alpha:g}"/>'
        )

    def _draw_errorbar(self, x, y, lo, hi, color, lw, alpha):
        ok = np.isfinite(x) & np.isfinite(lo) & np.isfinite(hi)
        xs, ls, hs = self.tx(x[ok]), self.ty(lo[ok]), self.ty(hi[ok])
        d = "".join(f"M{a:.2f} {b:.2f}V{c:.2f}" for a, b, c in zip(xs, ls, hs))
        return f'<path d="{d}" {self._stroke(color, lw, alpha)}/>'

    def _circles(self, xs, ys, r):
        return "".join(
            f"M{a - r:.2f} {b:.2f}a{r:.2f} {r:.2f} 0 1 0 {2 * r:.2f} 0"
            f"a{r:.2f} {r:.2f} 0 1 0 {-2 * r:.2f} 0"
            for a, b in zip(xs, ys)
        )

    def _draw_markers(self, x, y, color, ms, fill):
        ok = np.isfinite(x) & np.isfinite(y)
        if not ok.any():
            return ""
        r = self.pt(ms) / 2
        face = color if fill else "#ffffff"
        return (
            f'<path d="{self._circles(self.tx(x[ok]), self.ty(y[ok]), r)}" fill="{face}" '
            f'stroke="{color}" stroke-width="{self.pt(1.0):.2f}"/>'
        )

    def _draw_interval(self, lo, hi, y, color, lw, ms):
        a, b, yy, h = float(self.tx(lo)), float(self.tx(hi)), float(self.ty(y)), self.pt(ms) / 2
        d = (
            f"M{a:.2f} {yy:.2f}H{b:.2f}M{a:.2f} {yy - h:.2f}v{2 * h:.2f}"
            f"M{b:.2f} {yy - h:.2f}v{2 * h:.2f}"
        )
        return f'<path d="{d}" {self._stroke(color, lw)}/>'

    def _draw_stairs(self, values, edges, color):
        xs, ys, y0 = self.tx(edges), self.ty(values), float(self.ty(0.0))
        d = [f"M{xs[0]:.2f} {y0:.2f}"]
        for i, v in enumerate(ys):
            d.append(f"V{v:.2f}H{xs[i + 1]:.2f}")
        d.append(f"V{y0:.2f}Z")
        return f'<path d="{"".join(d)}" fill="{color}" stroke="none"/>'

    def _draw_legend(self):
        left, top, right, bottom = self.box
        fs = self.pt(self.legend_size)
        x = right + 0.02 * (right - left) + 0.4 * fs
        y = top + 0.4 * fs
        out = []
        if self.legend_title:
            tfs = self.pt(10.0)
            out.append(svg_text(x + 2.0 * fs, y + 0.8 * tfs, self.legend_title, tfs))
            y += 1.3 * tfs
        for kind, style, label in self.legend_items:
            mid = y + 0.5 * fs
            out.append(self._handle(kind, style, x, mid, 2.0 * fs, fs))
            out.append(svg_text(x + 2.8 * fs, mid + 0.36 * fs, label, fs))
            y += 1.5 * fs
        return out

    def _handle(self, kind, style, x, mid, width, fs):
        color = style["color"]
        if kind == "patch":
            return (
                f'<rect x="{x:.2f}" y="{mid - 0.35 * fs:.2f}" width="{width:.2f}" '
                f'height="{0.7 * fs:.2f}" fill="{color}" fill-opacity="{style["alpha"]:g}"/>'
            )
        if kind == "marker":
            r = self.pt(style["ms"]) / 2
            face = color if style.get("fill", True) else "#ffffff"
            return (
                f'<path d="{self._circles([x + width / 2], [mid], r)}" fill="{face}" '
                f'stroke="{color}" stroke-width="{self.pt(1.0):.2f}"/>'
            )
        stroke = self._stroke(color, style["lw"], dash=style.get("dash", False))
        if kind == "errorbar":
            c, r = x + width / 2, self.pt(style["ms"]) / 2
            return (
                f'<path d="M{c:.2f} {mid - 0.45 * fs:.2f}V{mid + 0.45 * fs:.2f}" {stroke}/>'
                f'<path d="{self._circles([c], [mid], r)}" fill="{color}" stroke="{color}"/>'
            )
        if kind == "interval":
            h = 0.4 * fs
            d = f"M{x:.2f} {mid:.2f}h{width:.2f}M{x + width / 2:.2f} {mid - h:.2f}v{2 * h:.2f}"
            return f'<path d="{d}" {stroke}/>'
        return f'<path d="M{x:.2f} {mid:.2f}h{width:.2f}" {stroke}/>'


def new_axes(layout):
    """An :class:`SvgAxes` of ``layout``: a dict of ``figsize`` (inches), ``margins`` and
    ``label_offsets`` (inches, as :class:`SvgAxes`) and ``dpi``."""
    return SvgAxes(
        layout["figsize"], layout["margins"], layout["label_offsets"], dpi=layout.get("dpi", 100)
    )


def set_log_x(ax, x):
    """A log x axis on the SvgAxes ``ax``, by the rule of
    :func:`uqviz.plots._style.plain_log_labels`."""
    ax.plain_log = plain_log_labels(x)
    ax.log_x = True
